"""Steps per second of the Gymnasium vector env (`cardlab/Huit-v1`) beside the raw batched engine, one run.

Huit at 2 players on one core (`NUMBA_NUM_THREADS=1`, the process pinned to one
CPU), medians of `--repeats` runs, each loop timed in wall-clock and in the
process's CPU time (on a shared machine the CPU time is the steadier figure):

- engine: `HuitBatch` with random legal actions for every seat, as
  `benchmarks/batched_throughput.py` plays it; one step is one move of any seat;
- vector, random / expert opponents: ``gymnasium.make_vec("cardlab/Huit-v1",
  num_envs=B, vectorization_mode="vector_entry_point", opponents=[...])``
  with a random learner; one step is one learner move in one game (the
  opponent's moves up to the learner's next turn are played inside it, and
  not counted).

A vector step holds about two engine moves at 2 players but one observation
and one mask (the engine loop makes both at every move), so vector / engine
can pass 0.5: the ratio column is each vector loop's rate over the engine's,
from the same run.

Run: ``python benchmarks/vector_throughput.py [--steps 1000000] [--num-envs 256] [--repeats 3]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # read when numba is imported: before cardlab

import argparse
import functools
import statistics
import sys
import time
from typing import Any

import gymnasium
import numpy as np

import cardlab  # noqa: F401 - registers the ids
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.huit.batched import HuitBatch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batched_throughput import batched_loop

NUM_PLAYERS = 2


Rates = tuple[float, float]
"""(steps per wall-clock second, steps per CPU second)"""


def timed(steps: int, loop: Any) -> Rates:
    """Run `loop()` (it plays `steps` steps) and give its rates by both clocks."""
    wall, cpu = time.perf_counter(), time.process_time()
    loop()
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def vector_loop(num_envs: int, steps: int, seed: int, opponent: str = "random") -> Rates:
    """Learner steps per second through the vector env: a random learner, `opponent` in the other seat."""
    envs = gymnasium.make_vec("cardlab/Huit-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                              num_players=NUM_PLAYERS, opponents=[opponent])
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    rounds = max(1, steps // num_envs)

    def play() -> None:
        nonlocal obs
        for _ in range(rounds):
            obs, *_ = envs.step(sample_legal(obs["action_mask"].view(np.bool_), rng))

    return timed(rounds * num_envs, play)


def engine_loop(num_envs: int, steps: int, seed: int) -> Rates:
    """Moves per second of the raw engine, as `batched_throughput.batched_loop` plays it at this table."""
    cpu = time.process_time()
    wall, _ = batched_loop(HuitBatch, "huit", num_envs, steps, seed, num_players=NUM_PLAYERS)
    return wall, max(1, steps // num_envs) * num_envs / (time.process_time() - cpu)


def median_rates(runs: list[Rates]) -> Rates:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1_000_000, help="steps per run")
    parser.add_argument("--expert-steps", type=int, default=200_000, help="steps per run against the expert")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256])
    parser.add_argument("--repeats", type=int, default=3, help="runs per loop (the median is shown)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    for opponent in ("random", "expert"):
        vector_loop(2, 2, 0, opponent)  # compile or load the numba caches outside the timings
    print(f"Huit {NUM_PLAYERS}p, one core, median of {args.repeats} runs ({args.steps:,} steps; "
          f"{args.expert_steps:,} against the expert)")
    print(f"{'loop':<16} {'num_envs':>8} {'steps/s':>12} {'CPU steps/s':>12} {'/ engine':>9} {'(CPU)':>6}")
    for size in args.num_envs:
        loops: list[tuple[str, Any, int]] = [
            ("engine", engine_loop, args.steps),
            ("vector, random", functools.partial(vector_loop, opponent="random"), args.steps),
            ("vector, expert", functools.partial(vector_loop, opponent="expert"), args.expert_steps),
        ]
        engine: Rates | None = None
        for name, loop, steps in loops:
            rate = median_rates([loop(size, steps, seed) for seed in range(args.repeats)])
            engine = engine or rate
            print(f"{name:<16} {size:>8} {rate[0]:>12,.0f} {rate[1]:>12,.0f} {rate[0] / engine[0]:>9.2f} "
                  f"{rate[1] / engine[1]:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
