"""`cardlab ship-bots`: train (or take) the shipped bots' runs, measure them, write them into the package."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command, add_threads, whole
from cardlab.envs.checked_json import excerpt
from cardlab.training.ship import OUT_DIR, SHIPPED


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The bots to build, where they go, the measuring hands and seed, the runs' folder and threads."""
    p.add_argument("items", nargs="*", metavar="NAME=CONFIG_OR_RUN_DIR",
                   help=f"bots to build (default: {' '.join(f'{k}={v}' for k, v in SHIPPED.items())})")
    p.add_argument("--out", type=pathlib.Path, default=OUT_DIR, metavar="DIR",
                   help=f"where the bot files go (default {OUT_DIR})")
    p.add_argument("--hands", type=whole(1), default=2000, metavar="N",
                   help="hands against the expert (default 2000)")
    p.add_argument("--seed", type=whole(0), default=123, metavar="S",
                   help="seed of the measuring deals (default 123)")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the training runs go (default: runs)")
    add_threads(p)


def run(args: argparse.Namespace) -> int:
    """Check every NAME=SOURCE first (no run is started for a list with a bad item), then ship each."""
    from cardlab.training.ship import ship_bot

    items = [item.partition("=") for item in args.items] or [(k, "=", v) for k, v in SHIPPED.items()]
    for name, sep, source in items:
        if not sep or not name or not source:
            raise ValueError(f"{name}{sep}{excerpt(source)}: expected NAME=CONFIG_OR_RUN_DIR, "
                             "e.g. huit-2p=configs/huit_ppo.yaml")
    for name, _, source in items:
        shipped = ship_bot(name, pathlib.Path(source), args.out, hands=args.hands, seed=args.seed,
                           runs_dir=args.runs_dir)
        print(f"wrote {args.out / name}.json and .safetensors: bot:{name} wins {shipped['about']}")
    return 0


COMMAND = Command("ship-bots", "train, measure against the expert and write the shipped bots", add_arguments,
                  run)
