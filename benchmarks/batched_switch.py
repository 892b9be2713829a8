"""Steps per second of the batched Switch engine next to the engine loop (to fold into the shared benchmark).

Both loops do the same work per step at 4 players: the legal action mask, the
mover's observation vector and one random legal action applied; finished
games are dealt again. The batch runs with batch sizes 256 and 4096 on one
core (`NUMBA_NUM_THREADS=1`, the process pinned to one CPU); the engine loop
is `engine_loop` of `env_throughput.py`. The figure is the median of the
runs; the numba kernels are compiled (or loaded from the cache) before timing.

Run: ``python benchmarks/batched_switch.py [--steps 1000000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def batch_loop(batch_size: int, steps: int, seed: int) -> float:
    """Steps/s of `SwitchBatch`: mask + observation + step (+ reset of finished slots)."""
    from cardlab.envs.switch.batched import SwitchBatch, random_legal_actions
    from cardlab.envs.switch.rules import SwitchRules

    batch = SwitchBatch(SwitchRules(num_players=4), batch_size, seed=seed)
    rng = np.random.default_rng(seed)
    calls = max(steps // batch_size, 1)
    start = time.perf_counter()
    for _ in range(calls):
        mask = batch.legal_mask()
        batch.observe(batch.current_player())
        _rewards, done, _truncated = batch.step(random_legal_actions(mask, rng))
        if done.any():
            batch.reset(np.flatnonzero(done))
    return calls * batch_size / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=1_000_000, help="steps per batched run")
    parser.add_argument("--engine-steps", type=int, default=50_000, help="steps per engine run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per loop (the median is shown)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    from env_throughput import engine_loop  # this folder: run as a script

    from cardlab.envs import switch_v0

    batch_loop(64, 64, 0)  # compile or load the kernels before timing
    rows = [("engine loop", statistics.median(
        engine_loop(switch_v0, args.engine_steps, seed)[0] for seed in range(args.repeats)))]
    for size in (256, 4096):
        rate = statistics.median(batch_loop(size, args.steps, seed) for seed in range(args.repeats))
        rows.append((f"SwitchBatch B={size}", rate))
    print(f"\nSwitch, 4 players, random legal play (mask + observation + apply), one core, "
          f"median of {args.repeats} runs\n")
    print(f"{'loop':<22}{'steps/s':>14}{'vs engine':>12}")
    for name, rate in rows:
        print(f"{name:<22}{rate:>14,.0f}{rate / rows[0][1]:>11.1f}x")


if __name__ == "__main__":
    main()
