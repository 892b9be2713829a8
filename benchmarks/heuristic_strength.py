"""How strong are the heuristic agents? Seat-rotated hand win rates with 95% Wilson intervals.

Each pairing seats one agent X against agents Y in every other seat, through
`cardlab.evaluation.evaluate.evaluate`: every deal is played once per seat
rotation (the same cards), so X sits in each seat equally often and much of
the luck of the deal cancels out. A truncated hand (C1) counts as no win.
X's fair share is 1 / players.

    nice python benchmarks/heuristic_strength.py --hands 2000
    python benchmarks/heuristic_strength.py --hands 200 --tables huit2 --pairings expert-greedy
"""

from __future__ import annotations

import argparse
import time

from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest

TABLES = ("huit2", "huit4", "switch4")
PAIRINGS = ("greedy-random", "expert-random", "expert-greedy")


def parse_table(text: str) -> tuple[str, int]:
    """``huit4`` -> ("huit", 4)."""
    game = text.rstrip("0123456789")
    if game not in ("huit", "switch") or game == text:
        raise ValueError(f"table {text!r}: expected GAME then players, e.g. huit2 or switch4")
    return game, int(text[len(game):])


def parse_pairing(text: str) -> tuple[str, str]:
    """``expert-greedy`` -> ("expert", "greedy")."""
    parts = text.split("-")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"pairing {text!r}: expected X-Y, e.g. expert-greedy")
    return parts[0], parts[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands per pairing and table (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables", default=",".join(TABLES),
                        help="comma list of GAMEplayers, e.g. huit2,switch4")
    parser.add_argument("--pairings", default=",".join(PAIRINGS), help="comma list of X-Y agent specs")
    args = parser.parse_args(argv)
    tables = [parse_table(t) for t in args.tables.split(",")]
    pairings = [parse_pairing(p) for p in args.pairings.split(",")]
    print("| table | X vs Y | hands | X win rate | 95% CI | fair share | truncated | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for game, players in tables:
        for x, y in pairings:
            start = time.perf_counter()
            result = evaluate(EvalRequest(game, [x] + [y] * (players - 1),
                                          hands=args.hands, seed=args.seed, rules={"num_players": players}))
            stats = result.stats[0]
            low, high = stats.hands.interval
            print(f"| {game} {players}p | {x} vs {players - 1}x {y} | {stats.hands.n} | "
                  f"{stats.hands.rate:.3f} | [{low:.3f}, {high:.3f}] | {1 / players:.3f} | "
                  f"{stats.truncated_hands} | {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
