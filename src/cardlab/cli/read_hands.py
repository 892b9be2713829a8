"""`cardlab read-hands CONFIG.yaml`: train a hand reader (where each unseen card is) from a YAML config."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The reader config, ``--resume`` and ``--runs-dir``."""
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="the reader config, e.g. configs/readers/huit_4p.yaml")
    p.add_argument("--resume", type=pathlib.Path, metavar="RUN_DIR",
                   help="finish this run folder: make the chunks of positions it lacks, then train")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the run folder goes (default: runs)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes making positions, instead of the config's (the positions do not change)")
    p.add_argument("--device", metavar="DEVICE",
                   help="where the reader trains, instead of the config's: cpu, cuda or auto (checked as the "
                        "config's device is)")


def run(args: argparse.Namespace) -> int:
    """Make the positions, train, print the fit and the reader file. A missing config is refused first."""
    if not args.config.is_file():
        raise ValueError(f"config file {args.config} is not a file: give a YAML reader config, e.g. "
                         "configs/readers/huit_4p.yaml")
    import dataclasses

    from cardlab.training.data.reader import load_reader_config, read_hands, validate_reader

    cfg = load_reader_config(args.config)
    changes = {key: value for key, value in (("workers", args.workers), ("device", args.device)) if value}
    if changes:
        cfg = dataclasses.replace(cfg, **changes)
        try:
            validate_reader(cfg)
        except ValueError as err:
            raise ValueError(f"--workers/--device: {err}") from None
    read_hands(cfg, runs_dir=args.runs_dir, resume=args.resume)
    return 0


COMMAND = Command("read-hands", "train a hand reader (where each unseen card is) from a YAML config",
                  add_arguments, run)
