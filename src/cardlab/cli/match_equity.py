"""`cardlab match-equity CONFIG.yaml`: fit a table's match equity (each seat's chance to win the match)."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The equity config and ``--runs-dir``."""
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="the equity config, e.g. configs/equity/huit_4p.yaml")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the run folder goes (default: runs)")


def run(args: argparse.Namespace) -> int:
    """Play the hands and matches, fit, print the calibration and the equity file. A missing config is
    refused first."""
    if not args.config.is_file():
        raise ValueError(f"config file {args.config} is not a file: give a YAML equity config, e.g. "
                         "configs/equity/huit_4p.yaml")
    from cardlab.training.data.match_equity import load_equity_config, match_equity

    match_equity(load_equity_config(args.config), runs_dir=args.runs_dir)
    return 0


COMMAND = Command("match-equity", "fit a table's match equity (each seat's chance to win the match) from a "
                  "YAML config", add_arguments, run)
