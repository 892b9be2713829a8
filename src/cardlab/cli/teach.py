"""`cardlab teach CONFIG.yaml`: one round of expert iteration, a bot taught by its search's moves."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command, add_threads


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The teach config, ``--runs-dir`` and the threads of the bots the run plays."""
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="the teach config, e.g. configs/teach_huit_2p.yaml")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the run folder goes (default: runs)")
    add_threads(p, "the bots the run plays (the base, the search's rollouts, the check; the training's own "
                   "come from the config's torch_threads)")


def run(args: argparse.Namespace) -> int:
    """Teach, print the check and the bot file. A missing config is refused before torch is imported."""
    if not args.config.is_file():
        raise ValueError(f"config file {args.config} is not a file: give a YAML teach config, e.g. "
                         "configs/teach_huit_2p.yaml")
    from cardlab.training.trainers.expert_iteration import load_teach_config, teach

    teach(load_teach_config(args.config), runs_dir=args.runs_dir)
    return 0


COMMAND = Command("teach", "teach a bot its search's moves (expert iteration) from a YAML config",
                  add_arguments, run)
