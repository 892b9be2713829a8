"""Steps per second of random legal play, engine loop and wrapped AEC loop.

Loops, for both games at 4 players (one core, median of several runs):

- engine: the legal action mask, the observation array and `apply`, straight on
  the rules engine and observer (what a vectorised learner would call);
- aec: the full `env()` (PettingZoo wrappers) loop, `last()` then `step()`;
- openspiel (when `open_spiel` is installed, by the bench extra:
  `pip install torch==2.13.0 -e ".[bench]"`): its
  `crazy_eights` with the same loop (`legal_actions`, `observation_tensor`
  converted to a numpy array, `apply_action`; chance nodes sampled too).

Run: ``python benchmarks/env_throughput.py [--steps 200000] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from cardlab.envs import huit_v1, switch_v1

GAMES = {"switch": switch_v1, "huit": huit_v1}


def engine_loop(module, steps: int, seed: int) -> tuple[float, float]:
    """Engine + observer: returns (steps/s, steps per hand)."""
    raw = module.raw_env(num_players=4)
    raw.reset(seed=seed)
    rng = np.random.default_rng(seed)
    state, observer = raw.game_state, raw.observer
    n_actions = raw.NUM_ACTIONS
    hands = 0
    start = time.perf_counter()
    for _ in range(steps):
        legal = state.legal_actions()
        mask = np.zeros(n_actions, dtype=np.int8)
        mask[legal] = 1
        observer.observe(state, state.current)
        state.apply(legal[rng.integers(len(legal))])
        if state.hand_over:
            hands += 1
            state = raw.game.new_state(rng)
    elapsed = time.perf_counter() - start
    return steps / elapsed, steps / max(hands, 1)


def aec_loop(module, steps: int, seed: int) -> tuple[float, float]:
    """The wrapped `env()`: returns (steps/s, steps per hand)."""
    env = module.env(num_players=4)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    hands = done = 0
    start = time.perf_counter()
    while done < steps:
        obs, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            hands += 1
            env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
        done += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, steps / max(hands, 1)


def openspiel_loop(steps: int, seed: int) -> tuple[float, float]:
    import pyspiel

    game = pyspiel.load_game("crazy_eights", {"players": 4})
    rng = np.random.default_rng(seed)
    hands = done = 0
    state = game.new_initial_state()
    start = time.perf_counter()
    while done < steps:
        if state.is_terminal():
            hands += 1
            state = game.new_initial_state()
            continue
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        legal = state.legal_actions()
        np.asarray(state.observation_tensor(), dtype=np.float32)
        state.apply_action(legal[rng.integers(len(legal))])
        done += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, steps / max(hands, 1)


def median_of(fn: Callable[[int, int], tuple[float, float]], steps: int, repeats: int) -> tuple[float, float]:
    runs = [fn(steps, seed) for seed in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=100_000, help="steps per run")
    parser.add_argument("--repeats", type=int, default=5, help="runs per loop (the median is shown)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    rows: list[tuple[str, str, float, float]] = []
    for name, module in GAMES.items():
        engine = median_of(functools.partial(engine_loop, module), args.steps, args.repeats)
        rows.append((name, "engine", *engine))
        aec = median_of(functools.partial(aec_loop, module), args.steps, args.repeats)
        rows.append((name, "aec env()", *aec))
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        openspiel = None
        install = 'pip install torch==2.13.0 -e ".[bench]"'
        print(f"open_spiel is not installed ({install}): no side-by-side comparison")
    else:
        openspiel = median_of(openspiel_loop, args.steps, args.repeats)
        rows.append(("openspiel crazy_eights", "engine", *openspiel))
    print(f"\nrandom legal play, 4 players, one core, median of {args.repeats} runs of {args.steps} steps\n")
    header = f"{'game':<24}{'loop':<12}{'steps/s':>12}{'steps/hand':>12}"
    if openspiel:
        header += f"{'vs openspiel':>14}"
    print(header)
    print("-" * len(header))
    for game, loop, rate, per_hand in rows:
        line = f"{game:<24}{loop:<12}{rate:>12,.0f}{per_hand:>12.1f}"
        if openspiel:
            line += f"{rate / openspiel[0]:>13.2f}x"
        print(line)


if __name__ == "__main__":
    main()
