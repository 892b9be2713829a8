"""Steps per second of the Gymnasium vector env (`cardlab/Huit-v1`) beside the raw batched engine.

Huit at 2 players on one core (`NUMBA_NUM_THREADS=1`, the process pinned to one
CPU), random legal actions, median of 3 runs:

- vector: ``gymnasium.make_vec("cardlab/Huit-v1", num_envs=B,
  vectorization_mode="vector_entry_point", opponents=["random"])``; one step
  is one learner move in one game (the opponent's moves up to the learner's
  next turn are played inside it, and not counted);
- engine: `HuitBatch` with random legal actions for every seat, as
  `benchmarks/batched_throughput.py` plays it; one step is one move of any seat.

So a vector step holds about two engine steps at 2 players: the vector env's
figure is the one a learner sees.

Run: ``python benchmarks/vector_throughput.py [--steps 2000000] [--num-envs 4096]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # read when numba is imported: before cardlab

import argparse
import statistics
import sys
import time

import gymnasium
import numpy as np

import cardlab  # noqa: F401 - registers the ids
from cardlab.envs.batched import sample_legal
from cardlab.envs.huit.batched import HuitBatch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batched_throughput import batched_loop

NUM_PLAYERS = 2


def vector_loop(num_envs: int, steps: int, seed: int) -> float:
    """Learner steps per second through the vector env, random learner and `random` opponents."""
    envs = gymnasium.make_vec("cardlab/Huit-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                              num_players=NUM_PLAYERS, opponents=["random"])
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    rounds = max(1, steps // num_envs)
    start = time.perf_counter()
    for _ in range(rounds):
        obs, *_ = envs.step(sample_legal(obs["action_mask"].view(np.bool_), rng))
    return rounds * num_envs / (time.perf_counter() - start)


def engine_loop(num_envs: int, steps: int, seed: int) -> float:
    """Moves per second of the raw engine, as `batched_throughput.batched_loop` plays it at this table."""
    return batched_loop(HuitBatch, "huit", num_envs, steps, seed, num_players=NUM_PLAYERS)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2_000_000, help="steps per run")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256, 4096])
    parser.add_argument("--repeats", type=int, default=3, help="runs per loop (the median is shown)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    vector_loop(2, 2, 0)  # compile or load the numba cache outside the timings
    print(f"Huit {NUM_PLAYERS}p, one core, median of {args.repeats} runs of {args.steps:,} steps")
    print(f"{'loop':<8} {'num_envs':>8} {'steps/s':>12}")
    for size in args.num_envs:
        for name, loop in (("engine", engine_loop), ("vector", vector_loop)):
            rate = statistics.median(loop(size, args.steps, seed) for seed in range(args.repeats))
            print(f"{name:<8} {size:>8} {rate:>12,.0f}")


if __name__ == "__main__":
    main()
