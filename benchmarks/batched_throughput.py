"""Steps per second of the batched engines, beside the one-game engine loop and OpenSpiel.

Random legal play at 4 players on one core (`NUMBA_NUM_THREADS=1`, the process
pinned to one CPU), median of several runs. One step is one move of one game:

- batched: per call for the whole batch, `legal_mask()`, `observe()` of the
  seat to move, a random legal action per game (`sample_legal`) and `step()`;
  finished games are dealt again with `reset(slots)`;
- engine: `engine_loop` of `benchmarks/env_throughput.py` (mask, observation
  and `apply` on the rules engine, one game);
- openspiel: `openspiel_loop` of the same file, `crazy_eights` (when
  `open_spiel` is installed, by the bench extra:
  `pip install torch==2.13.0 -e ".[bench]"`).

A game's batched engine is its `GameSpec.batched_engine()`; a game without
one is skipped.

Run: ``python benchmarks/batched_throughput.py [--steps 2000000] [--batch-sizes 256 4096]``.
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

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from env_throughput import GAMES, engine_loop, openspiel_loop

from cardlab.envs import games, get_spec, make_game
from cardlab.envs.batched_engine import sample_legal

NUM_PLAYERS = 4


def batch_class(game: str) -> Any | None:
    """The batched engine class of a game (`GameSpec.batched_engine()`), or None when it has none."""
    try:
        return get_spec(game).batched_engine()
    except ValueError:
        return None


def batched_loop(cls: Any, game: str, batch_size: int, steps: int, seed: int,
                 num_players: int = NUM_PLAYERS) -> tuple[float, float]:
    """Random legal play on a batch: returns (steps/s, steps per hand)."""
    batch = cls(make_game(game, num_players=num_players).rules, batch_size, seed=seed)
    rng = np.random.default_rng(seed)
    rounds = max(1, steps // batch_size)
    hands = 0
    start = time.perf_counter()
    for _ in range(rounds):
        mask = batch.legal_mask()
        batch.observe(batch.current_player())
        _rewards, done, truncated = batch.step(sample_legal(mask, rng))
        finished = np.flatnonzero(done | truncated)
        if finished.size:
            hands += finished.size
            batch.reset(finished)
    elapsed = time.perf_counter() - start
    return rounds * batch_size / elapsed, rounds * batch_size / max(hands, 1)


def first_call(cls: Any, game: str) -> float:
    """Seconds of the first mask + observe + step: numba compiles, or loads its cache."""
    start = time.perf_counter()
    batch = cls(make_game(game, num_players=NUM_PLAYERS).rules, 2, seed=0)
    mask = batch.legal_mask()
    batch.observe(batch.current_player())
    batch.step(sample_legal(mask, np.random.default_rng(0)))
    batch.reset(np.array([0]))
    return time.perf_counter() - start


def median_of(fn: Any, steps: int, repeats: int) -> tuple[float, float]:
    runs = [fn(steps, seed) for seed in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=2_000_000, help="game steps per batched run")
    parser.add_argument("--engine-steps", type=int, default=50_000, help="steps per engine/OpenSpiel run")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[256, 4096])
    parser.add_argument("--repeats", type=int, default=5, help="runs per loop (the median is shown)")
    parser.add_argument("--games", nargs="+", default=list(games()), choices=list(games()))
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    rows: list[tuple[str, str, float, float]] = []
    engine_rate: dict[str, float] = {}
    for game in args.games:
        cls = batch_class(game)
        if cls is None:
            print(f"{game}: no batched engine: skipped")
            continue
        print(f"{game}: first call (compile or load the numba cache) {first_call(cls, game):.1f} s")
        engine = median_of(functools.partial(engine_loop, GAMES[game]), args.engine_steps, args.repeats)
        engine_rate[game] = engine[0]
        rows.append((game, "engine", *engine))
        for size in args.batch_sizes:
            rate = median_of(functools.partial(batched_loop, cls, game, size), args.steps, args.repeats)
            rows.append((game, f"batched B={size}", *rate))
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        openspiel = None
        install = 'pip install torch==2.13.0 -e ".[bench]"'
        print(f"open_spiel is not installed ({install}): no side-by-side comparison")
    else:
        openspiel = median_of(openspiel_loop, args.engine_steps, args.repeats)
        rows.append(("openspiel crazy_eights", "engine", *openspiel))
    print(f"\nrandom legal play, {NUM_PLAYERS} players, one core, median of {args.repeats} runs "
          f"({args.steps:,} steps per batched run, {args.engine_steps:,} per engine run)\n")
    header = f"{'game':<24}{'loop':<18}{'steps/s':>14}{'steps/hand':>12}{'vs engine':>11}"
    if openspiel:
        header += f"{'vs openspiel':>14}"
    print(header)
    print("-" * len(header))
    for game, loop, rate, per_hand in rows:
        base = engine_rate.get(game)
        line = f"{game:<24}{loop:<18}{rate:>14,.0f}{per_hand:>12.1f}"
        line += f"{rate / base:>10.1f}x" if base else f"{'':>11}"
        if openspiel:
            line += f"{rate / openspiel[0]:>13.1f}x"
        print(line)


if __name__ == "__main__":
    main()
