"""Lean trainer steps/s by number of actors (0, 1, 2 unless told) on the same config, side by side in one run.

Each figure is a `train` call of the config with ``actors`` set (evaluation and
checkpoints off, one torch thread for the learner as for each actor), and two
rates are given, each the median of `--repeats` runs:

- steady: the steps of the training iterations after the first `WARM` (a
  shorter run: its last) divided by their time (`charts/SPS` of each iteration: the wait for a
  rollout, its scoring and the update), what a long run gets;
- whole: every step over the wall clock of the whole call (process start-up
  of the actors, numba cache loads, the final checkpoint and bot file included).

The configs: configs/huit_selfplay.yaml (Huit 2p, its league of learner seats,
snapshots and a few heuristic seats, where the update is about three quarters
of an iteration) and configs/tables/huit_4p.yaml with the learner alone
against three experts (imitation off): three of every four moves are the
experts', so the rollout is a larger part of each learner step; and the long run huit-4p-dmc-scratch's
recipe (benchmarks/learning_curve.py), deep Monte Carlo, whose actors finish their own rollouts' returns
and whose learner has no critic to score them with. `--configs long` measures the long run
switch-4p-ppo-clone's recipe instead, the run a scale round grows. Run it on
an otherwise idle machine:
``python benchmarks/actor_throughput.py [--steps 150000] [--repeats 3]``.

On a machine with many cores and a GPU (benchmarks/scale_round.py runs it so), ``--actors 1 2 4 8 16
--device cuda`` puts the learner on the GPU (the config's `device`; the actors play on the CPU) and
``--json PATH`` writes the rows measured so far after each one, so that a run stopped at a time limit
keeps them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.cli.common import check_output, write_output
from cardlab.envs.declared import RANGE, refusal
from cardlab.training.harness.config import OpponentConfig, TrainConfig, load_config
from cardlab.training.harness.config_bounds import STEPS
from cardlab.training.harness.placement import DEVICES, check_actors, check_device, usable_cores
from cardlab.training.trainers.train import train

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from learning_curve import long_config
from speed_rows import actors_markdown, load_now, machine

REPO = Path(__file__).resolve().parents[1]
WARM = 3
"""training iterations left out of the steady rate (actors starting, first compiles)"""
ACTORS = (0, 1, 2)
"""the actor counts measured unless `--actors` says"""
LONG_RUN = "switch-4p-ppo-clone"
"""the long run whose recipe `--configs long` measures"""
DMC_RUN = "huit-4p-dmc-scratch"
"""the long run whose recipe `--configs dmc` measures"""


def measure(cfg: TrainConfig, actors: int, steps: int, device: str = "cpu") -> tuple[float, float]:
    """(steady steps/s, whole-run steps/s) of one run of `cfg` with `actors` for `steps` steps, the learner
    on `device`."""
    cfg = dataclasses.replace(cfg, actors=actors, device=device, total_timesteps=steps,
                              checkpoint_every=STEPS, checkpoint_minutes=0.0, torch_threads=1,
                              imitation=dataclasses.replace(cfg.imitation, enabled=False),
                              eval=dataclasses.replace(cfg.eval, every_steps=STEPS, final_hands=0))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_dir = train(cfg, runs_dir=tmp, progress=False)
        seconds = time.perf_counter() - start
        events = EventAccumulator(str(next(run_dir.glob("events.out.tfevents.*"))))
        events.Reload()
        rates = events.Scalars("charts/SPS")
    ends = [e.step for e in rates]
    warm = min(WARM, len(ends) - 1)  # a short run (a dry run's): its last iteration
    sizes = [end - begin for begin, end in zip([0, *ends[:-1]], ends, strict=True)][warm:]
    seconds_each = [size / e.value for size, e in zip(sizes, rates[warm:], strict=True)]
    return sum(sizes) / sum(seconds_each), ends[-1] / seconds


def configs() -> dict[str, tuple[str, TrainConfig]]:
    """The configs that can be measured, by their `--configs` key: (the table's label, the config)."""
    selfplay = load_config(REPO / "configs" / "huit_selfplay.yaml")
    table = load_config(REPO / "configs" / "tables" / "huit_4p.yaml")
    alone = dataclasses.replace(table.self_play, enabled=False, learner_share=0.0)
    vs_experts = dataclasses.replace(table, opponents=[OpponentConfig("expert")], self_play=alone)
    return {"selfplay": ("huit_selfplay.yaml (its league)", selfplay),
            "experts": ("tables/huit_4p.yaml, learner vs 3 experts", vs_experts),
            "dmc": (f"{DMC_RUN} (its recipe)", long_config(DMC_RUN)),
            "long": (f"{LONG_RUN} (its recipe)", long_config(LONG_RUN))}


DEFAULT_CONFIGS = ("selfplay", "experts", "dmc")
"""the configs measured unless `--configs` says"""


def check_args(args: argparse.Namespace, known: list[str]) -> None:
    """Refuse, in one line and before any run, what the table cannot be measured with: a config key
    other than `known`, an actor count the machine does not take (`check_actors`), a device torch cannot
    use, steps or repeats below 1 (steps past a run's `STEPS`), a `--json` path the write would fail on."""
    for key in args.configs:
        if key not in known:
            raise SystemExit(refusal("--configs", key, "not one of the configs", ", ".join(known)))
    if args.device not in DEVICES:
        raise SystemExit(refusal("--device", args.device, "not one of the choices", ", ".join(DEVICES)))
    if not 1 <= args.steps <= STEPS:  # `train` refuses more, with a traceback, only once the configs load
        raise SystemExit(refusal("--steps", args.steps, RANGE, f"a whole number from 1 to {STEPS:,}"))
    if args.repeats < 1:
        raise SystemExit(refusal("--repeats", args.repeats, RANGE, "a whole number >= 1"))
    try:
        for actors in args.actors:
            check_actors(actors, usable_cores(), "this machine")
        check_device(args.device)
        check_output("--json", args.json)
    except ValueError as err:
        raise SystemExit(str(err)) from None


def report(args: argparse.Namespace, host: dict[str, Any], start: list[float],
           rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The table so far: the settings, the machine (`host`), `load_now` when the run began (`start`) and
    now, and a row per (config, actors) measured (what `speed_rows.actors_markdown` renders)."""
    return {"steps": args.steps, "repeats": args.repeats, "device": args.device, "warm_iterations": WARM,
            "machine": host, "loadavg": {"start": start, "end": load_now()}, "rows": rows}


def write_rows(path: Path, table: dict[str, Any]) -> None:
    """`report`'s table as JSON at `path`."""
    write_output(path, lambda tmp: tmp.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150_000, help="env steps of each run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each setting (the median is shown)")
    parser.add_argument("--actors", type=int, nargs="+", default=list(ACTORS),
                        help="the actor counts measured (0: one process)")
    parser.add_argument("--device", default="cpu", help="the learner's device: cpu, cuda or auto")
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS),
                        help="the configs measured, by key: selfplay, experts, dmc, long")
    parser.add_argument("--json", type=Path, help="write the rows measured so far here after each one")
    args = parser.parse_args(argv)
    known = configs()
    check_args(args, list(known))
    rows: list[dict[str, Any]] = []
    host, start = machine(), load_now()
    for key in args.configs:
        label, cfg = known[key]
        for actors in args.actors:
            measured = [measure(cfg, actors, args.steps, args.device) for _ in range(args.repeats)]
            rows.append({"config": key, "label": label, "actors": actors,
                         "steady": statistics.median(s for s, _ in measured),
                         "whole": statistics.median(w for _, w in measured),
                         "steady_each": [s for s, _ in measured], "whole_each": [w for _, w in measured]})
            each = ", ".join(f"{s:,.0f}" for s, _ in measured)
            print(f"  {label}, actors {actors}: steady {each} steps/s", flush=True)
            if args.json is not None:
                write_rows(args.json, report(args, host, start, rows))
    print(actors_markdown(report(args, host, start, rows)), end="")


if __name__ == "__main__":
    main()
