"""Round-robin tournaments: a cross-table of win rates and TrueSkill ratings.

Every pairing plays `evaluate`'s seat-rotated hands, all on the same deals
(one `seed`), so the cells are comparable. Each cell's interval is clustered
by deal (the deal's seat rotations are one unit, `cardlab.evaluation.paired`)
beside Wilson's; an agent's overall rate clusters its tables' hands by deal too.

- 2 players (the default): each pair (A, B) plays the request's `hands` head
  to head; cell [A][B] is A's hand win rate against B (chance 0.5).
- n > 2 players (``num_players`` in the rule options): each ordered pair plays
  a table of A alone against n-1 copies of B, `hands` hands; cell
  [A][B] is A's win rate at that table (chance 1/n), cell [B][A] comes from
  the mirror table.

Ratings: every hand is a TrueSkill 1-vs-1 game between the two agents of its
table (A's win beats B; a win by any copy of B beats A; a truncated hand is a
draw), fed deal by deal in a fixed order, from an explicit `trueskill.TrueSkill`
environment (never the library's global one). Agents are ranked by the
conservative rating mu - 3 sigma.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Callable
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np
import trueskill

from cardlab.agents.agent_spec import resolve_spec
from cardlab.envs import make_game
from cardlab.evaluation.episodes import table_rules
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest, old_form, one_request
from cardlab.evaluation.results import (
    EpisodeRecord,
    EvalResult,
    Rate,
    combined,
    csv_text,
    new_figure,
    text_table,
)

EvaluateTables = Callable[[list[EvalRequest], bool], list[EvalResult]]
"""Plays every table of a tournament at once: (the tables' requests, progress) -> results, in order;
`cardlab.cluster.parallel_evaluation` spreads them over Ray workers."""


@dataclass(frozen=True)
class Rating:
    spec: str
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma


@dataclass
class TournamentResult:
    """Cross-table (`cells[i][j]`: agent i's wins against agent j) and ratings."""

    game: str
    rules: dict[str, Any]
    num_players: int
    seed: int
    specs: list[str]
    cells: list[list[Rate | None]]  # None on the diagonal
    ratings: list[Rating]  # in the order of `specs`
    hands_asked: int | None = None
    """hands per pairing asked for (None: as played); rounded up to whole seat rotations"""

    def ranking(self) -> list[int]:
        """Agent indices, best conservative rating first."""
        return sorted(range(len(self.specs)), key=lambda i: -self.ratings[i].conservative)

    def overall(self, i: int) -> Rate:
        """Agent i's wins over all its games, clustered by deal across its tables (all on the same deals)."""
        return combined([c for c in self.cells[i] if c is not None])

    def format_table(self) -> str:
        k = len(self.specs)
        hands = next(c.n for row in self.cells for c in row if c is not None)
        layout = "head to head" if self.num_players == 2 else f"1 vs {self.num_players - 1} copies"
        rounded = ""
        if self.hands_asked is not None and self.hands_asked != hands:
            rounded = f" ({self.hands_asked} asked for, rounded up to whole seat rotations)"
        head = (f"{self.game} tournament, {self.num_players} players ({layout}), "
                f"{hands} hands per pairing{rounded}, seed {self.seed}; chance win rate "
                f"{1 / self.num_players:.3f}")
        cross = text_table(
            ["#", "agent"] + [str(j) for j in range(k)],
            [[i, self.specs[i]] + ["-" if c is None else f"{c.rate:.3f}" for c in self.cells[i]]
             for i in range(k)],
        )
        ranked = []
        for place, i in enumerate(self.ranking(), 1):
            r, total = self.ratings[i], self.overall(i)
            ranked.append([place, i, r.spec, f"{r.mu:.2f}", f"{r.sigma:.2f}", f"{r.conservative:.2f}",
                           *total.cells()])
        ratings = text_table(["rank", "#", "agent", "mu", "sigma", "mu-3sigma", "win rate", "95% CI (paired)",
                              "Wilson"], ranked)
        return (f"{head}\nwin rate of the row agent against the column agent:\n{cross}\n\n"
                f"TrueSkill ratings:\n{ratings}")

    def rows(self) -> list[dict[str, Any]]:
        """One row per ordered pair, with the row agent's rating."""
        out = []
        for i, j in permutations(range(len(self.specs)), 2):
            cell, r = self.cells[i][j], self.ratings[i]
            assert cell is not None
            out.append({"agent": self.specs[i], "opponent": self.specs[j],
                        "hands": cell.n, "wins": cell.wins,
                        "win_rate": cell.rate, **cell.fields(""),
                        "agent_mu": r.mu, "agent_sigma": r.sigma})
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game, "rules": self.rules, "num_players": self.num_players, "seed": self.seed,
            "agents": self.specs,
            "cross_table": [[None if c is None else c.rate for c in row] for row in self.cells],
            "pairs": self.rows(),
            "ratings": [{"agent": self.ratings[i].spec, "mu": self.ratings[i].mu,
                         "sigma": self.ratings[i].sigma, "conservative": self.ratings[i].conservative,
                         "win_rate": self.overall(i).rate, **self.overall(i).fields("")}
                        for i in self.ranking()],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2)

    def to_csv(self) -> str:
        return csv_text(self.rows())

    def plot(self, path: str | pathlib.Path) -> pathlib.Path:
        """Heatmap of the cross-table."""
        k = len(self.specs)
        matrix = np.array([[math.nan if c is None else c.rate for c in row] for row in self.cells])
        fig = new_figure(2 + 1.1 * k, 1.5 + 0.9 * k)
        ax = fig.subplots()
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="RdYlGn")
        for i in range(k):
            for j in range(k):
                if i != j:
                    ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center")
        labels = [f"{i}: {s}" for i, s in enumerate(self.specs)]
        ax.set_xticks(range(k), labels, rotation=30, ha="right")
        ax.set_yticks(range(k), labels)
        ax.set_xlabel("opponent")
        ax.set_ylabel("agent")
        ax.set_title(f"{self.game}: win rate of row vs column ({self.num_players} players)")
        fig.colorbar(image, ax=ax)
        path = pathlib.Path(path)
        fig.savefig(path, bbox_inches="tight")
        return path


TOURNAMENT_ORDER = ("agents", "hands", "seed", "rules", "progress", "evaluate_tables")
"""the positional parameters after the game of `tournament` before it took a request"""


@old_form(one_request, TOURNAMENT_ORDER)
def tournament(request: EvalRequest, *, progress: bool = False,
               evaluate_tables: EvaluateTables | None = None) -> TournamentResult:
    """Round robin of the request's agents, `request.hands` hands per pairing, on its seed's deals; the
    table's size is its rules' num_players, 2 when not given (see the module doc for more than 2).

    `evaluate_tables` plays the tables (default: `evaluate` each, one after another).
    ``tournament(game, specs, hands_per_pair, ...)``, the old form, still works for one version, with a
    deprecation warning.
    """
    if request.hands < 1 or request.matches:
        raise ValueError(f"a tournament plays hands: give hands >= 1 per pairing and no matches, got hands="
                         f"{request.hands}, matches={request.matches}")
    specs, seed, game = list(request.agents), request.seed, request.game
    if len(specs) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {len(specs)}")
    rules = dict(request.rules)
    rules.setdefault("num_players", 2)
    full_rules = table_rules(game, rules)
    table = make_game(game, full_rules)
    given, specs = specs, [resolve_spec(spec, table) for spec in specs]
    if len(set(specs)) != len(specs):
        repeated = sorted({s for s in specs if specs.count(s) > 1})
        aliases = "".join(f" ({a.strip()} is {s} at this table)"
                          for a, s in zip(given, specs, strict=True) if a.strip() != s)
        raise ValueError(f"each agent may enter once; repeated: {repeated}{aliases}")
    n = full_rules["num_players"]
    k = len(specs)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)] if n == 2 else list(permutations(range(k), 2))
    cells: list[list[Rate | None]] = [[None] * k for _ in range(k)]
    tables: list[tuple[int, int, list[EpisodeRecord]]] = []
    table_specs = [[specs[i]] + [specs[j]] * (n - 1) for i, j in pairs]
    requests = [request.replace(agents=t, rules=rules) for t in table_specs]
    if evaluate_tables is None:
        results = [evaluate(r, progress=progress, desc=f"{specs[i]} vs {specs[j]}")
                   for r, (i, j) in zip(requests, pairs, strict=True)]
    else:
        results = evaluate_tables(requests, progress)
    for (i, j), result in zip(pairs, results, strict=True):
        stats = result.stats
        cells[i][j] = stats[0].hands
        if n == 2:
            cells[j][i] = stats[1].hands
        tables.append((i, j, result.hand_records))
    return TournamentResult(game=game, rules=full_rules, num_players=n, seed=seed, specs=list(specs),
                            cells=cells, ratings=_trueskill(specs, tables), hands_asked=request.hands)


def _trueskill(specs: list[str], tables: list[tuple[int, int, list[EpisodeRecord]]]) -> list[Rating]:
    """Ratings from every hand as a 1-vs-1 game between slot 0's agent and the others' (module doc)."""
    env = trueskill.TrueSkill()
    ratings = [env.create_rating() for _ in specs]
    deals = max(r.deal for _, _, records in tables for r in records) + 1
    by_deal = [[(i, j, r) for i, j, records in tables for r in records if r.deal == d] for d in range(deals)]
    for games in by_deal:
        for i, j, record in games:
            if record.truncated:
                ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=True, env=env)
            elif 0 in record.winners:
                ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=env)
            else:
                ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=env)
    return [Rating(s, r.mu, r.sigma) for s, r in zip(specs, ratings, strict=True)]
