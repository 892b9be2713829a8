"""Decisions per second of the heuristics (`random`, `greedy`, `expert`): one move a call beside batches.

For each game and table size, `rows` positions of random play on the game's
batched engine (the observation and legal mask of the seat to move; several
random moves between two rows of one game) are given to each agent:

- act: `Agent.act` row by row, on the first `act_rows` rows (for the
  heuristics, their compiled kernel on a batch of one: what a move-by-move
  caller such as the web app or the AEC env pays per decision);
- batched: `Agent.act_batch` on all rows in one call (a compiled kernel where
  the game has one; otherwise `act_batch` loops over `act`, and the two
  columns measure the same thing).

Every game is measured through the same code (`get_spec`, `make_game`,
`make_agent`). Times are CPU seconds of this process (`time.process_time`),
so that other processes of a shared machine do not count; one core
(`NUMBA_NUM_THREADS=1`, the process pinned to one CPU); median of `repeats`
runs, each from a fresh agent, after one call that compiles or loads numba's
cache.

Run: ``python benchmarks/heuristic_throughput.py [--rows 4096] [--tables 2 4] [--repeats 3]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # read when numba is imported: before cardlab

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.envs import games, get_spec, make_game
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.game_spec import Game

AGENTS = ("random", "greedy", "expert")


class Row(NamedTuple):
    game: str
    players: int
    agent: str
    act: float  # decisions/s of one-move `act`, row by row
    batched: float  # decisions/s of `act_batch`


def positions(game_id: str, players: int, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`rows` (observation, mask) pairs of the seats to move, from random play on the batched engine."""
    game = make_game(game_id, num_players=players)
    slots = max(1, rows // 8)
    batch = get_spec(game_id).batched_engine()(game.rules, slots, seed=seed)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    while sum(len(m) for m in masks) < rows:
        for _ in range(int(rng.integers(1, 5))):  # a few moves between two rows of one game
            _rewards, done, truncated = batch.step(sample_legal(batch.legal_mask(), rng))
            if (done | truncated).any():
                batch.reset(np.flatnonzero(done | truncated))
        observations.append(batch.observe(batch.current_player()))
        masks.append(batch.legal_mask())
    return np.concatenate(observations)[:rows], np.concatenate(masks)[:rows]


def cpu_rate(run: Callable[[], object], decisions: int, repeats: int) -> float:
    """Median decisions per CPU second of `run` over `repeats` runs."""
    rates = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        rates.append(decisions / max(time.process_time() - start, 1e-9))
    return statistics.median(rates)


def row_by_row(make: Callable[..., Agent], spec: str, game: Game, seed: int,
               dicts: list[dict[str, np.ndarray]]) -> None:
    """A fresh agent's `act` on every observation dict."""
    agent = make(spec, game, seed)
    for observation in dicts:
        agent.act(observation)


def one_batch(make: Callable[..., Agent], spec: str, game: Game, seed: int, observations: np.ndarray,
              masks: np.ndarray) -> None:
    """A fresh agent's `act_batch` on all rows."""
    make(spec, game, seed).act_batch(observations, masks)


def measure(games: list[str], tables: list[int], rows: int, act_rows: int, repeats: int,
            seed: int) -> list[Row]:
    out = []
    for game_id in games:
        for players in tables:
            game = make_game(game_id, num_players=players)
            observations, masks = positions(game_id, players, rows, seed)
            dicts = [{"observation": o, "action_mask": m} for o, m in zip(observations[:act_rows],
                                                                          masks[:act_rows], strict=True)]
            for spec in AGENTS:
                make_agent(spec, game, seed).act_batch(observations[:4], masks[:4])  # compile or load
                one_move = functools.partial(row_by_row, make_agent, spec, game, seed, dicts)
                batched = functools.partial(one_batch, make_agent, spec, game, seed, observations, masks)
                out.append(Row(game_id, players, spec, cpu_rate(one_move, len(dicts), repeats),
                               cpu_rate(batched, rows, repeats)))
    return out


def table(rows: list[Row]) -> str:
    """The measured rows as a Markdown table."""
    lines = ["| game | players | agent | act decisions/s | batched decisions/s | batched / act |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.game} | {r.players} | {r.agent} | {r.act:,.0f} | {r.batched:,.0f} | "
                     f"{r.batched / r.act:,.0f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=4096, help="positions given to act_batch")
    parser.add_argument("--act-rows", type=int, default=1024, help="of them, played by act row by row")
    parser.add_argument("--tables", type=int, nargs="+", default=[2, 4], help="table sizes (players)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measure (the median is shown)")
    parser.add_argument("--games", nargs="+", default=list(games()), choices=list(games()))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    act_rows = min(args.act_rows, args.rows)
    rows = measure(args.games, args.tables, args.rows, act_rows, args.repeats, args.seed)
    print(f"\n{args.rows:,} positions of random play per table ({act_rows:,} of them for `act` row by "
          f"row), CPU time on one core, median of {args.repeats} runs\n")
    print(table(rows))


if __name__ == "__main__":
    main()
