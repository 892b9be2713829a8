"""Lean trainer steps/s by number of actors (0, 1, 2) on the same config, side by side in one run.

Each figure is a `train` call of the config with ``actors`` set (evaluation and
checkpoints off, one torch thread for the learner as for each actor), and two
rates are given, each the median of `--repeats` runs:

- steady: the steps of the training iterations after the first `WARM`
  divided by their time (`charts/SPS` of each iteration: the wait for a
  rollout, its scoring and the update), what a long run gets;
- whole: every step over the wall clock of the whole call (process start-up
  of the actors, numba cache loads, the final checkpoint and bot file included).

The configs: configs/huit_selfplay.yaml (Huit 2p, its league of learner seats,
snapshots and a few heuristic seats, where the update is about three quarters
of an iteration) and configs/tables/huit_4p.yaml with the learner alone
against three experts (imitation off): three of every four moves are the
experts', so the rollout is a larger part of each learner step. Run it on an otherwise idle machine:
``python benchmarks/actor_throughput.py [--steps 150000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.training.harness.config import OpponentConfig, TrainConfig, load_config
from cardlab.training.harness.config_bounds import STEPS
from cardlab.training.trainers.train import train

REPO = Path(__file__).resolve().parents[1]
WARM = 3
"""training iterations left out of the steady rate (actors starting, first compiles)"""
ACTORS = (0, 1, 2)


def measure(cfg: TrainConfig, actors: int, steps: int) -> tuple[float, float]:
    """(steady steps/s, whole-run steps/s) of one run of `cfg` with `actors` for `steps` steps."""
    cfg = dataclasses.replace(cfg, actors=actors, total_timesteps=steps, checkpoint_every=STEPS,
                              checkpoint_minutes=0.0, torch_threads=1,
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
    sizes = [end - begin for begin, end in zip([0, *ends[:-1]], ends, strict=True)][WARM:]
    seconds_each = [size / e.value for size, e in zip(sizes, rates[WARM:], strict=True)]
    return sum(sizes) / sum(seconds_each), ends[-1] / seconds


def configs() -> dict[str, TrainConfig]:
    """The configs measured, by label."""
    selfplay = load_config(REPO / "configs" / "huit_selfplay.yaml")
    table = load_config(REPO / "configs" / "tables" / "huit_4p.yaml")
    alone = dataclasses.replace(table.self_play, enabled=False, learner_share=0.0)
    vs_experts = dataclasses.replace(table, opponents=[OpponentConfig("expert")], self_play=alone)
    return {"huit_selfplay.yaml (its league)": selfplay,
            "tables/huit_4p.yaml, learner vs 3 experts": vs_experts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150_000, help="env steps of each run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each setting (the median is shown)")
    args = parser.parse_args()
    rows: list[tuple[str, int, float, float]] = []
    for label, cfg in configs().items():
        for actors in ACTORS:
            measured = [measure(cfg, actors, args.steps) for _ in range(args.repeats)]
            steady = statistics.median(s for s, _ in measured)
            whole = statistics.median(w for _, w in measured)
            rows.append((label, actors, steady, whole))
            each = ", ".join(f"{s:,.0f}" for s, _ in measured)
            print(f"  {label}, actors {actors}: steady {each} steps/s", flush=True)
    print(f"{'config':<40}{'actors':>7}{'steady steps/s':>16}{'whole steps/s':>15}{'steady vs 0':>13}")
    base = {label: steady for label, actors, steady, _ in rows if actors == 0}
    for label, actors, steady, whole in rows:
        print(f"{label:<40}{actors:>7}{steady:>16,.0f}{whole:>15,.0f}{steady / base[label]:>12.2f}x")


if __name__ == "__main__":
    main()
