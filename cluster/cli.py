"""The command line's Ray options and the `sweep` command (hooked into `cardlab.training.cli`).

Nothing here imports Ray until a Ray option is given, so the serial commands
run without the extra; with it missing, a Ray option is a one-line error that
says how to install it.
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys
from collections.abc import Callable
from typing import Any

from cardlab.cluster.runtime import import_ray

WORKERS_HELP = ("play on N Ray workers (blocks of deals as Ray tasks; the results equal the serial run's); "
                "a local Ray with N CPUs is started unless --ray-address is given")
ADDRESS_HELP = ("join this running Ray cluster (what `ray start --head` prints, or 'auto' for one started on "
                "this machine) instead of starting a local one")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text}")
    return value


def add_ray_options(p: argparse.ArgumentParser) -> None:
    """``--workers N`` and ``--ray-address ADDR`` (for eval and tournament)."""
    p.add_argument("--workers", type=positive_int, metavar="N", help=WORKERS_HELP)
    p.add_argument("--ray-address", metavar="ADDR", help=ADDRESS_HELP)


def on_ray(args: argparse.Namespace) -> bool:
    """Whether a Ray option was given; if so Ray must be installed (checked first, before any work)."""
    if args.workers is None and not args.ray_address:
        return False
    import_ray()
    return True


def evaluator(args: argparse.Namespace) -> Callable[..., Any]:
    """`evaluate`, or its Ray twin with the command's workers and address (same arguments, same result)."""
    if not on_ray(args):
        from cardlab.evaluation.evaluate import evaluate

        return evaluate
    from cardlab.cluster.evaluate import evaluate_parallel

    return functools.partial(evaluate_parallel, workers=args.workers, address=args.ray_address)


def tournament_runner(args: argparse.Namespace) -> Callable[..., Any]:
    """`tournament`, or its Ray twin with the command's workers and address."""
    if not on_ray(args):
        from cardlab.evaluation.tournament import tournament

        return tournament
    from cardlab.cluster.evaluate import tournament_parallel

    return functools.partial(tournament_parallel, workers=args.workers, address=args.ray_address)


def add_sweep_command(sub: Any) -> None:
    """The `sweep` subcommand's parser."""
    p = sub.add_parser("sweep", help="a Ray Tune sweep over a training config: search space, seeds, "
                       "early stopping")
    p.add_argument("sweep", type=pathlib.Path, metavar="SWEEP.yaml",
                   help="the sweep file: a base training config, a search space, seeds, e.g. "
                        "configs/sweeps/huit_quick_sweep.yaml")
    p.add_argument("--sweeps-dir", type=pathlib.Path, default=pathlib.Path("sweeps"), metavar="DIR",
                   help="where the sweep's folder goes (default: sweeps/); the same command again resumes "
                   "an interrupted sweep")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="CPUs of the local Ray started for the sweep (default: all of this machine's)")
    p.add_argument("--ray-address", metavar="ADDR", help=ADDRESS_HELP)


def cmd_sweep(args: argparse.Namespace) -> int:
    import_ray()
    from cardlab.cluster.sweep import run_sweep

    if not args.sweep.is_file():
        raise ValueError(f"sweep file {args.sweep} does not exist")
    run_sweep(args.sweep, sweeps_dir=args.sweeps_dir, workers=args.workers, address=args.ray_address,
              progress=sys.stderr.isatty())
    return 0
