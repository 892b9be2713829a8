"""Which Huit decisions do two searches play differently, by the match's running totals and the move's kind?

Why: ``search:value=match`` and ``search:value=points`` differ only in how
a play-out is valued, so where their moves differ is what the match value
buys. Matches of a Huit match suite are played (deal m for match m, seat 0
the comparer, `--field` in the other seats); at each seat-0 decision with
more than one legal move both searches are seeded with the same seed (the
same worlds, the same play-outs) and shown the same record, and each one's
move is kept; the second config's move (``--play``) is played on. Printed:
the decisions and the share where the moves differ, by seat 0's standing
(leads: the lowest total, trails: the highest), by the highest total (how
near 151) and by whether the hand turned out to be the match's last; then
the differing decisions by each one's move kind (draw, pass, 8s, Ace,
Queen, another rank; ``x2`` for several cards) and the card points each
lays (B11), the points a move takes out of the hand if the hand is lost.

Run: ``python benchmarks/match_value_diff.py [--matches 12] [--json F]`` (the
defaults: huit-4p-match, the reader's 128-world searches with each value,
the expert in the other seats). A few hundred decisions take minutes.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.search import SearchAgent
from cardlab.cli.common import check_output
from cardlab.envs import cards as C
from cardlab.envs import make_env
from cardlab.envs.huit.rules import POINTS
from cardlab.evaluation.episodes import AGENT, MATCH, derive_seed, run_episode
from cardlab.evaluation.results import text_table
from cardlab.evaluation.stats import mean_interval
from cardlab.evaluation.suites import load_suite

CONFIGS = ("search:belief=learned:value=points:worlds=128:ms=0:expert",
           "search:belief=learned:value=match:worlds=128:ms=0:expert")
BANDS = ((0, "highest total 0-74"), (75, "highest total 75-119"), (120, "highest total 120-150"))
"""the bands of the highest running total (how near the match's end, 151), by their lowest total"""


def move_kind(game: Any, action: int) -> str:
    """A move in words: draw, pass, or the rank laid (8s, Ace, Queen, another rank), ``x2`` for two cards."""
    facts = game.spec.move_facts(action)
    if facts.draw or facts.passes:
        return "draw" if facts.draw else "pass"
    name = {C.EIGHT: "8s", C.ACE: "Ace", C.QUEEN: "Queen"}.get(facts.rank, "other rank")
    return name if facts.cards == 1 else f"{name} x{facts.cards}"


def points_laid(game: Any, action: int) -> int:
    """The card points (B11) a move takes out of the hand: what it no longer holds if the hand is lost."""
    facts = game.spec.move_facts(action)
    return 0 if facts.rank < 0 else int(facts.cards * POINTS[C.make_card(facts.rank, 0)])


def standing(scores: Sequence[int]) -> str:
    """Seat 0's place by the running totals (the lowest total wins the match, B13)."""
    mine, others = scores[0], scores[1:]
    if mine < min(others):
        return "leads"
    return "trails" if mine > max(others) else "between or level"


class Comparer(Agent):
    """Seat 0: asks both searches at every decision with a choice, from the same seed, and plays `play`'s."""

    def __init__(self, searches: Sequence[Agent], play: int, seed: int, hand: Callable[[], int]) -> None:
        super().__init__(searches[0].game, seed)
        self.searches, self.play = list(searches), play
        self.hand = hand
        """the number of the hand in play (from the table: a seat's view of the match has no hand count)"""
        self.sees = frozenset().union(*(s.sees for s in searches))
        self.seen: dict[str, Any] = {}
        self.rows: list[dict[str, Any]] = []

    def show(self, seen: Any) -> None:
        self.seen = dict(seen)

    def reset(self) -> None:
        for search in self.searches:
            search.reset()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 1:
            return int(legal[0])
        seed = int(self.rng.integers(2**62))
        moves, values = [], []
        for search in self.searches:
            search.seed(seed)
            search.show(self.seen)
            moves.append(int(search.act(observation)))
            values.append(dict(zip(map(int, legal), map(float, search.last_decision.values), strict=True))
                          if isinstance(search, SearchAgent) and search.last_decision is not None else {})
        match = self.game.determinization(observation, 0, self.seen.get("record")).match
        self.rows.append({"scores": [int(s) for s in match.scores], "hand": self.hand(),
                          "legal": int(legal.size), "moves": moves,
                          "values": [[v.get(m, math.nan) for m in moves] for v in values]})
        return moves[self.play]


def compare(suite_name: str, configs: Sequence[str], field: str, matches: int, play: int
            ) -> list[dict[str, Any]]:
    """Every compared decision of `matches` matches: the totals, the hand's number, each config's move, its
    kind and its points laid, and whether the hand was the match's last."""
    suite = load_suite(suite_name)
    if suite.game != "huit" or suite.kind != MATCH:
        raise ValueError(f"--suite {suite_name}: give a Huit match suite (huit-Np-match); this one is "
                         f"{suite.game}, {'matches' if suite.kind == MATCH else 'hands'}")
    if not 1 <= matches <= suite.deals:
        raise ValueError(f"--matches must be 1 to {suite.deals} (the suite's deals), got {matches}")
    env = make_env(suite.game, **suite.rules, episode="match")
    searches = [make_agent(spec, env.game) for spec in configs]
    rows: list[dict[str, Any]] = []
    for m in range(matches):
        comparer = Comparer(searches, play, derive_seed(suite.seed, AGENT, MATCH, m, 0),
                            lambda: int(env.unwrapped.game_state.match.hands_played) + 1)
        others = [make_agent(field, env.game, derive_seed(suite.seed, AGENT, MATCH, m, s))
                  for s in range(1, env.game.num_players)]
        info = run_episode(env, [comparer, *others], derive_seed(suite.seed, MATCH, m))
        for row in comparer.rows:
            row.update(match=m, last=row["hand"] == info["hand_number"],
                       kinds=[move_kind(env.game, a) for a in row["moves"]],
                       laid=[points_laid(env.game, a) for a in row["moves"]])
        rows.extend(comparer.rows)
    return rows


def band(scores: Sequence[int]) -> str:
    """The band of the highest running total (`BANDS`): how near the match is to its end."""
    return [name for low, name in BANDS if max(scores) >= low][-1]


ORDER = ("all", "leads", "between or level", "trails", *(name for _, name in BANDS), "not the last hand",
         "the match's last hand")
"""the groups' order in the first table"""


def value_name(spec: str) -> str:
    """The ``value=`` of a search spec (``win`` when it names none)."""
    return next((part[6:] for part in spec.split(":") if part.startswith("value=")), "win")


def own_values(differ: list[dict[str, Any]], configs: Sequence[str]) -> list[list[Any]]:
    """Where the moves differ, what each search's own play-outs say its move is worth over the other's
    (points for ``value=points``, whose values are minus points over 100; chance to win the match for
    ``value=match``): the mean over those decisions with its 95% t interval."""
    rows = []
    for i, spec in enumerate(configs):
        gains = [r["values"][i][i] - r["values"][i][1 - i] for r in differ if len(r["values"][i]) == 2]
        if not gains:
            continue
        value = value_name(spec)
        scale, unit = (100.0, "points held fewer") if value == "points" else (1.0, f"{value} value")
        mean, low, high = mean_interval([g * scale for g in gains])
        rows.append([f"value={value}", unit, len(gains), f"{mean:+.3f}",
                     "" if math.isnan(low) else f"[{low:+.3f}, {high:+.3f}]"])
    return rows


def tables(rows: list[dict[str, Any]], configs: Sequence[str]) -> str:
    """The printed tables (module doc)."""
    def share(group: list[dict[str, Any]]) -> list[Any]:
        differ = sum(r["moves"][0] != r["moves"][1] for r in group)
        return [len(group), differ, f"{differ / len(group):.3f}"]

    by = [("all decisions", lambda r: "all"), ("seat 0", lambda r: standing(r["scores"])),
          ("match", lambda r: band(r["scores"])),
          ("last hand", lambda r: "the match's last hand" if r["last"] else "not the last hand")]
    out: list[list[Any]] = []
    for title, key in by:
        groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for r in rows:
            groups[key(r)].append(r)
        out.extend([title, name, *share(groups[name])] for name in sorted(groups, key=ORDER.index))
    text = text_table(["by", "group", "decisions", "moves differ", "share"], out)
    differ = [r for r in rows if r["moves"][0] != r["moves"][1]]
    pairs = collections.Counter((r["kinds"][0], r["kinds"][1]) for r in differ)
    a, b = (f"value={value_name(c)}" for c in configs)
    kinds = text_table([f"{a} plays", f"{b} plays", "decisions"],
                       [[x, y, count] for (x, y), count in pairs.most_common()])
    laid = text_table(["where the moves differ", a, b], [
        ["card points laid, mean", *(f"{np.mean([r['laid'][i] for r in differ]):.2f}" if differ else ""
                                     for i in range(2))],
        ["lays more card points", *(sum(r["laid"][i] > r["laid"][1 - i] for r in differ) for i in range(2))],
        ["draws or passes", *(sum(r["kinds"][i] in ("draw", "pass") for r in differ) for i in range(2))]])
    worth = text_table(["its move over the other's, by", "in", "decisions", "mean", "95% CI"],
                       own_values(differ, configs))
    return f"{text}\n\n{kinds}\n\n{laid}\n\n{worth}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="huit-4p-match", help="a Huit match suite (default huit-4p-match)")
    parser.add_argument("--configs", nargs=2, default=list(CONFIGS), metavar="SPEC",
                        help="the two searches compared (default: the reader's, value=points and "
                             "value=match)")
    parser.add_argument("--field", default="expert", help="the other seats' agent (default expert)")
    parser.add_argument("--matches", type=int, default=12, help="matches played (default 12)")
    parser.add_argument("--play", type=int, choices=(0, 1), default=1,
                        help="whose move is played on: 0 the first config's, 1 the second's (default)")
    parser.add_argument("--json", type=pathlib.Path, help="write every compared decision to this JSON file")
    args = parser.parse_args(argv)
    try:
        check_output("--json", args.json)  # before the matches, not after them
        rows = compare(args.suite, args.configs, args.field, args.matches, args.play)
    except ValueError as err:
        parser.error(str(err))
    print(f"{args.suite}, {args.matches} matches, seat 0 playing {args.configs[args.play]}, {args.field} in "
          f"the other seats: {len(rows)} decisions with a choice, both searches from the same seed")
    print(tables(rows, args.configs))
    if args.json is not None:
        args.json.write_text(json.dumps({"suite": args.suite, "configs": args.configs, "field": args.field,
                                         "matches": args.matches, "play": args.play, "decisions": rows},
                                        indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
