"""`cardlab sweep SWEEP.yaml`: a Ray Tune sweep over a training config (the ray extra)."""

from __future__ import annotations

import argparse
import pathlib
import sys

from cardlab.cli.common import ADDRESS_HELP, Command, whole
from cardlab.cluster.runtime import import_ray


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The sweep file, its folder and the Ray to run on."""
    p.add_argument("sweep", type=pathlib.Path, metavar="SWEEP.yaml",
                   help="the sweep file: a base training config, a search space, seeds, e.g. "
                        "configs/sweeps/huit_quick_sweep.yaml")
    p.add_argument("--sweeps-dir", type=pathlib.Path, default=pathlib.Path("sweeps"), metavar="DIR",
                   help="where the sweep's folder goes (default: sweeps/); the same command again resumes "
                   "an interrupted sweep")
    p.add_argument("--workers", type=whole(1), metavar="N",
                   help="CPUs of the local Ray started for the sweep (default: all of this machine's)")
    p.add_argument("--ray-address", metavar="ADDR", help=ADDRESS_HELP)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the sweep; without Ray installed, one line that says how to install it."""
    import_ray()
    from cardlab.cluster.sweep import run_sweep

    if not args.sweep.is_file():
        raise ValueError(f"sweep file {args.sweep} does not exist")
    run_sweep(args.sweep, sweeps_dir=args.sweeps_dir, workers=args.workers, address=args.ray_address,
              progress=sys.stderr.isatty())
    return 0


COMMAND = Command("sweep", "a Ray Tune sweep over a training config: search space, seeds, early stopping",
                  add_arguments, run)
