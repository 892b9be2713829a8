"""Steps per second of the training side: the single-seat view and MaskablePPO.

Two measurements, each the median of several runs:

- view: `SingleSeatEnv` with uniformly random learner actions, against each
  opponent type in every other seat (Huit 2 players, Switch 4 players). One
  step is one learner decision; the opponents' moves in between are included.
- ppo: `MaskablePPO.learn` on a short run of a config (default
  configs/huit_ppo.yaml) with `subproc` and `dummy` vector envs: collection
  plus the gradient updates, i.e. what `cardlab train` sustains (the periodic
  evaluation and checkpoints are not included).

Run: ``python benchmarks/train_throughput.py [--seconds 2] [--repeats 3] [--ppo-steps 8192]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from cardlab.training.arena.single_seat import SingleSeatEnv
from cardlab.training.harness.config import load_config
from cardlab.training.trainers.sb3 import new_model
from cardlab.training.trainers.vec_env import make_vec_env

REPO = Path(__file__).resolve().parents[1]
TABLES = (("huit", 2), ("switch", 4))
OPPONENTS = ("random", "greedy", "expert")


def view_steps_per_second(game: str, num_players: int, opponent: str, seconds: float, seed: int) -> float:
    """Learner steps per second of the single-seat view with random learner actions."""
    env = SingleSeatEnv(game, num_players, opponents=[opponent])
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        legal = np.flatnonzero(env.action_masks())
        _, _, terminated, truncated, _ = env.step(int(legal[rng.integers(legal.size)]))
        steps += 1
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def ppo_steps_per_second(config: Path, vec_env: str, steps: int, seed: int) -> float:
    """Env steps per second of `MaskablePPO.learn` for `steps` steps (envs and model built beforehand)."""
    cfg = dataclasses.replace(load_config(config), vec_env=vec_env, seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        env = make_vec_env(cfg, Path(tmp) / "league")
        try:
            model = new_model(cfg, env)
            start = time.perf_counter()
            model.learn(steps)
            return model.num_timesteps / (time.perf_counter() - start)
        finally:
            env.close()


def _row(label: str, runs: list[float]) -> None:
    each = " / ".join(f"{r:,.0f}" for r in runs)
    print(f"{label:<46}{statistics.median(runs):>18,.0f}  {each}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each view run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (the median is shown)")
    parser.add_argument("--ppo-steps", type=int, default=8192, help="env steps of each PPO run")
    parser.add_argument("--config", type=Path, default=REPO / "configs" / "huit_ppo.yaml")
    parser.add_argument("--skip-ppo", action="store_true", help="measure the view only")
    args = parser.parse_args()

    print(f"{'measurement':<46}{'steps/s (median)':>18}  runs")
    for game, n in TABLES:
        for opponent in OPPONENTS:
            runs = [view_steps_per_second(game, n, opponent, args.seconds, seed)
                    for seed in range(args.repeats)]
            _row(f"view {game} {n}p, learner random vs {opponent}", runs)
    if args.skip_ppo:
        return
    for vec_env in ("subproc", "dummy"):
        runs = [ppo_steps_per_second(args.config, vec_env, args.ppo_steps, seed)
                for seed in range(args.repeats)]
        _row(f"ppo {args.config.stem} ({vec_env})", runs)


if __name__ == "__main__":
    main()
