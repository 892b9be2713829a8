"""How strong are the heuristic agents? Seat-rotated win rates with 95% Wilson intervals.

Each pairing seats one agent X against agents Y in every other seat. Every deal
is played once per seat of X (the same seed, so the same cards), so X sits in
each seat equally often and the luck of the deal cancels out. A truncated hand
(C1) counts as no win.

    nice python benchmarks/heuristic_strength.py --hands 2000
"""

from __future__ import annotations

import argparse
import math
import time

from cardlab.agents.base import make_agent
from cardlab.agents.heuristics.common import play_hand
from cardlab.envs import huit_v0, switch_v0

GAMES = {"switch": switch_v0.raw_env, "huit": huit_v0.raw_env}
TABLES = (("huit", 2), ("huit", 4), ("switch", 4))
PAIRINGS = (("greedy", "random"), ("expert", "random"), ("expert", "greedy"))


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def match_up(game: str, players: int, x: str, y: str, hands: int, seed: int) -> tuple[int, int, int]:
    """(wins of X, hands played, truncated hands) over `hands` rounded up to whole rotations."""
    env = GAMES[game](num_players=players)
    deals = max(1, -(-hands // players))
    wins = truncated = 0
    for d in range(deals):
        for seat_x in range(players):
            agents = [
                make_agent(x if s == seat_x else y, env, seed=seed + 1000 * d + 10 * seat_x + s)
                for s in range(players)
            ]
            winner = play_hand(env, agents, seed=seed + d)
            wins += winner == seat_x
            truncated += winner is None
    return wins, deals * players, truncated


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands per pairing and table (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables", default="huit2,huit4,switch4",
                        help="comma list of GAMEPLAYERS, e.g. huit2,switch4")
    parser.add_argument("--pairings", default="greedy-random,expert-random,expert-greedy",
                        help="comma list of X-Y")
    args = parser.parse_args(argv)
    tables = [(t.rstrip("0123456789"), int(t[len(t.rstrip("0123456789")):])) for t in args.tables.split(",")]
    pairings = [tuple(p.split("-")) for p in args.pairings.split(",")]
    print(f"| table | X vs Y | hands | X win rate | 95% CI | fair share | truncated | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for game, players in tables:
        for x, y in pairings:
            start = time.perf_counter()
            wins, n, trunc = match_up(game, players, x, y, args.hands, args.seed)
            low, high = wilson(wins, n)
            print(f"| {game} {players}p | {x} vs {players - 1}x {y} | {n} | {wins / n:.3f} | "
                  f"[{low:.3f}, {high:.3f}] | {1 / players:.3f} | {trunc} | {time.perf_counter() - start:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
