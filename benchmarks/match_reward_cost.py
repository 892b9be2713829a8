"""What ``reward: match`` costs the self-play table: moves per second of match episodes, win against match.

`SelfPlayBatch` plays every seat as the learner (the trainer's pure
self-play), the moves uniformly random among the legal ones (drawn before
the clock starts, so both rewards replay the same games), and the figure is
moves per second of `step` alone: the engine's step plus, with
``reward="match"``, the equity of the games whose hand just ended (one
vectorised `MatchEquity.equity` call per step), and what that adds per call
(a trainer's move also observes, runs the policy and updates, which this
leaves out). The two rewards alternate within each repeat; the medians are
printed side by side.

Then, with ``--train-steps N`` (0: skipped), whole lean training runs of
configs/tables/huit_4p.yaml (the table bot's recipe) on match episodes for N
learner steps each, reward win and match in turn (`selfplay_throughput.whole_run`:
evaluation off): learner steps per second, what a trainer sees.

Run: ``python benchmarks/match_reward_cost.py [--games 256] [--steps 2000] [--repeats 5] [--train-steps 0]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from selfplay_throughput import REPO, whole_run

from cardlab.envs import make_game
from cardlab.envs.declared import check_whole
from cardlab.training.arena.league import LeagueSettings
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.config import load_config

TABLES = (("huit", 4), ("switch", 4))
LEAGUE = LeagueSettings((("random", 1.0),))


def moves_per_second(game_id: str, n: int, reward: str, games: int, steps: int, seed: int) -> float:
    """Moves per second of `steps` calls of `step` on `games` match episodes (random legal moves)."""
    table = SelfPlayBatch(make_game(game_id, num_players=n), games, LEAGUE, seed=seed, reward=reward,
                          episode="match")
    rng = np.random.default_rng(seed)
    spent = 0.0
    for _ in range(steps):
        view = table.observe()
        actions = np.where(view[1], rng.random(view[1].shape), -1.0).argmax(axis=1)
        start = time.perf_counter()
        table.step(actions, view)
        spent += time.perf_counter() - start
    return games * steps / spent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=256)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--train-steps", type=int, default=0)
    args = parser.parse_args(argv)
    try:  # before the first figure: 0 steps or repeats failed after the compile, -5 train steps at the end
        for key, value, low in (("--games", args.games, 1), ("--steps", args.steps, 1),
                                ("--repeats", args.repeats, 1), ("--train-steps", args.train_steps, 0)):
            check_whole(key, value, low, None, f"a whole number >= {low}")
    except ValueError as err:
        parser.error(str(err))
    for game_id, n in TABLES:
        moves_per_second(game_id, n, "match", args.games, 20, 0)  # compile / load the kernels first
        figures: dict[str, list[float]] = {"win": [], "match": []}
        for r in range(args.repeats):
            for reward, found in figures.items():
                found.append(moves_per_second(game_id, n, reward, args.games, args.steps, r))
        win, match = (statistics.median(figures[k]) for k in ("win", "match"))
        extra = (1 / match - 1 / win) * args.games * 1e6
        print(f"{game_id} {n}p, {args.games} games: step, reward win {win:,.0f} moves/s, reward match "
              f"{match:,.0f} moves/s ({match / win - 1:+.1%}, {extra:.0f} us more per call; medians of "
              f"{args.repeats})", flush=True)

    if args.train_steps:
        train_figures(args.train_steps, args.repeats)


def train_figures(steps: int, repeats: int) -> None:
    """Learner steps per second of whole lean runs of the Huit 4p recipe on match episodes, win and match."""
    cfg = load_config(REPO / "configs" / "tables" / "huit_4p.yaml")
    figures: dict[str, list[float]] = {"win": [], "match": []}
    for _ in range(repeats):
        for reward, found in figures.items():
            done, seconds, _ = whole_run(dataclasses.replace(cfg, episode="match", reward=reward), steps)
            found.append(done / seconds)
    win, match = (statistics.median(figures[k]) for k in ("win", "match"))
    print(f"lean huit_4p (episode match), {steps:,} steps: reward win {win:,.0f} steps/s, reward match "
          f"{match:,.0f} steps/s ({match / win - 1:+.1%}; medians of {repeats})", flush=True)


if __name__ == "__main__":
    main()
