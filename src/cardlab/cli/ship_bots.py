"""`cardlab ship-bots`: train (or take) the shipped bots' runs, measure them, write them into the package."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command, add_ray_options, add_threads, on_ray, whole
from cardlab.envs.checked_json import excerpt
from cardlab.training.trainers.ship import HANDS, OPPONENTS, OUT_DIR, SEED, SHIPPED


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The bots to build, where they go, the measuring hands and seed, the runs' folder, threads and Ray."""
    p.add_argument("items", nargs="*", metavar="NAME=SOURCE",
                   help="bots to build, SOURCE a YAML config to train, a finished run folder or a bot's "
                        ".json to measure again (default: every shipped bot, "
                        f"{' '.join(f'{k}={v}' for k, v in SHIPPED.items())}); with --remeasure plain NAMEs")
    p.add_argument("--remeasure", action="store_true",
                   help="measure the bots already in --out again, from their own files (no training): the "
                        "NAMEs given, or every bot there")
    p.add_argument("--out", type=pathlib.Path, default=OUT_DIR, metavar="DIR",
                   help=f"where the bot files go (default {OUT_DIR})")
    p.add_argument("--hands", type=whole(1), default=HANDS, metavar="N",
                   help=f"hands against each of {', '.join(OPPONENTS)} (default {HANDS})")
    p.add_argument("--seed", type=whole(0), default=SEED, metavar="S",
                   help=f"seed of the measuring deals (default {SEED})")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the training runs go (default: runs)")
    add_threads(p)
    add_ray_options(p)


def sources(args: argparse.Namespace) -> list[tuple[str, pathlib.Path]]:
    """(name, source) of each bot to build, every one checked before any is trained or measured."""
    if args.remeasure:
        names = args.items or sorted(path.stem for path in args.out.glob("*.json"))
        items = [(name, args.out / f"{name}.json") for name in names]
        if not items:
            raise ValueError(f"--remeasure: no bot in {args.out} to measure")
    else:
        items = []
        for item in args.items or [f"{k}={v}" for k, v in SHIPPED.items()]:
            name, sep, source = item.partition("=")
            if not sep or not name or not source:
                raise ValueError(f"{excerpt(item)}: expected NAME=SOURCE, e.g. huit-2p=configs/huit_ppo.yaml "
                                 "or huit-4p=runs/huit_4p__1__<time>")
            items.append((name, pathlib.Path(source)))
    for name, source in items:
        if not source.exists():
            raise ValueError(f"{name}={source}: no such file or folder (give a YAML config, a finished run "
                             "folder or a bot's .json)")
    return items


def run(args: argparse.Namespace) -> int:
    """Check every item first (no run is started for a list with a bad item), then ship each."""
    from cardlab.cli.evaluate import evaluator
    from cardlab.training.trainers.ship import ship_bot

    items = sources(args)
    evaluate = evaluator(args) if on_ray(args) else None
    for name, source in items:
        shipped = ship_bot(name, source, args.out, hands=args.hands, seed=args.seed, runs_dir=args.runs_dir,
                           evaluate=evaluate)
        print(f"wrote {args.out / name}.json and .safetensors: bot:{name} wins {shipped['about']}",
              flush=True)
    if args.out == OUT_DIR:
        print("python docs/update_tables.py rewrites the docs' tables of the shipped bots from their files")
    return 0


COMMAND = Command("ship-bots", "train, measure against expert, greedy and random, and write the shipped bots",
                  add_arguments, run)
