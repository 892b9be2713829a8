"""Is A stronger than B? Paired deals played in batches until the GSPRT of `sequential` decides.

A sits in one seat and B in every other (B's copies), so on n players A's
fair share is 1/n; every deal is played in each seat rotation (`play_deals`,
the unit `evaluate` plays), and A's wins per deal feed `sequential.compare`.
After each batch of deals the test is asked again; it stops as soon as it
decides, or when the hand budget is spent ("undecided"). The records depend
on (seed, deal) only, so a batch played by Ray workers gives the same result,
and they are `evaluate`'s records of the same seed and table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cardlab.agents.agent_spec import make_agent, resolve_spec
from cardlab.envs import make_game
from cardlab.envs.rng import check_seed
from cardlab.evaluation.episodes import HAND, players_for, table_rules
from cardlab.evaluation.evaluate import play_deals
from cardlab.evaluation.paired import (
    deal_totals,
    design_effect,
    normal_cdf,
    slot_paired_interval,
    wilson_rate_interval,
)
from cardlab.evaluation.results import EpisodeRecord
from cardlab.evaluation.sequential import Comparison, Hypotheses, compare

PlayDeals = Callable[[range], list[EpisodeRecord]]
"""Plays every seat rotation of these deals and returns their records in deal order."""


@dataclass(frozen=True)
class Contest:
    """A's seat and B's, on one game and rules: what a comparison plays."""

    game: str
    a: str
    b: str
    rules: dict[str, Any]
    """the rule options as given, with num_players"""
    full_rules: dict[str, Any]
    seed: int

    @classmethod
    def seat(cls, game: str, a: str, b: str, players: int | None = None,
             rule_options: dict[str, Any] | None = None, seed: int = 0) -> Contest:
        """A in one seat, B in the `players` - 1 others (default: the rules' num_players, else 2)."""
        seed = check_seed(seed)
        rules = dict(rule_options or {})
        if players is not None and rules.get("num_players", players) != players:
            raise ValueError(f"{players} players asked for, but the rule option num_players is "
                             f"{rules['num_players']}: give one of them")
        rules["num_players"] = players if players is not None else rules.get("num_players", 2)
        rules["num_players"] = players_for(game, rules, [a, b])
        full_rules = table_rules(game, rules)
        table = make_game(game, full_rules)
        for spec in (a, b):  # a bad spec is refused here, before any batch is played or announced
            make_agent(spec, table, seed=seed)
        return cls(game, resolve_spec(a, table), resolve_spec(b, table), rules, full_rules, seed)

    @property
    def num_players(self) -> int:
        return int(self.full_rules["num_players"])

    @property
    def slots(self) -> list[str]:
        return [self.a] + [self.b] * (self.num_players - 1)

    def play(self, deals: range) -> list[EpisodeRecord]:
        """The records of these deals, played here (`PlayDeals`): `evaluate`'s records of the same seed."""
        return play_deals(self.game, self.rules, self.slots, HAND, deals, self.seed)


@dataclass
class CompareResult:
    """Where a comparison ended: the test's state, the hypotheses and error rates, and every hand."""

    contest: Contest
    hypotheses: Hypotheses
    alpha: float
    beta: float
    max_hands: int
    comparison: Comparison
    records: list[EpisodeRecord] = field(default_factory=list)

    @property
    def paired_interval(self) -> tuple[float, float]:
        """A's win rate's 95% interval clustered by deal."""
        return slot_paired_interval(self.records, 0)

    def progress(self) -> str:
        """One line: hands so far, A's score and interval, both LLRs and their bounds, the decision."""
        c, (low, high) = self.comparison, self.paired_interval
        return (f"{c.episodes} hands ({c.deals} deals): A scores {c.score:.3f} [{low:.3f}, {high:.3f}]; "
                f"{c.tests()}: {c.decision}")

    def fixed_hands(self) -> dict[str, int]:
        """Hands a fixed-size test of the same hypotheses at the same error rates would need.

        n = (z_(1-alpha) + z_(1-beta))^2 * var / (s1 - s0)^2 per hand, with the
        binomial variance at the hypotheses' midpoint ("wilson": every hand
        independent) and that variance times the design effect measured here
        ("paired").
        """
        h = self.hypotheses
        z = normal_quantile(1 - self.alpha) + normal_quantile(1 - self.beta)
        binomial = z * z * h.reference_variance / (h.s1 - h.s0) ** 2
        wins, episodes = deal_totals(self.records, 0)
        return {"wilson": math.ceil(binomial), "paired": math.ceil(binomial * design_effect(wins, episodes))}

    def as_dict(self) -> dict[str, Any]:
        c, h, (low, high) = self.comparison, self.hypotheses, self.paired_interval
        total = c.episodes
        wilson = wilson_rate_interval(c.score, total) if total else (0.0, 1.0)
        return {
            "decision": c.decision, "hands": total, "deals": c.deals,
            "llr": c.llr_a, "llr_b": c.llr_b, "bounds": [c.lower, c.upper],
            "score": None if math.isnan(c.score) else c.score, "paired_ci_low": low, "paired_ci_high": high,
            "wilson_ci_low": wilson[0], "wilson_ci_high": wilson[1],
            "a": self.contest.a, "b": self.contest.b, "game": self.contest.game,
            "num_players": self.contest.num_players, "rules": self.contest.full_rules,
            "seed": self.contest.seed,
            "hypotheses": {"s0": h.s0, "s1": h.s1, "fair": h.fair}, "alpha": self.alpha, "beta": self.beta,
            "max_hands": self.max_hands, "fixed_hands": self.fixed_hands(),
        }


def normal_quantile(p: float) -> float:
    """The standard normal's quantile (bisection on its CDF: exact enough for error rates)."""
    low, high = -10.0, 10.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if normal_cdf(mid) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def compare_agents(
    contest: Contest,
    hypotheses: Hypotheses,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_hands: int = 20_000,
    batch: int = 50,
    play: PlayDeals | None = None,
    on_batch: Callable[[CompareResult], object] | None = None,
) -> CompareResult:
    """Play `batch` deals at a time (`play`, default: here) until the test decides or `max_hands` are played.

    `on_batch(result so far)` follows each batch (the CLI prints its progress
    line). The last batch is cut so no more than `max_hands` hands are played.
    """
    n = contest.num_players
    if not math.isclose(hypotheses.fair, 1 / n):
        raise ValueError(f"the hypotheses' fair score is {hypotheses.fair:.3f}, but A's fair share at "
                         f"{n} players is {1 / n:.3f}: use Hypotheses.from_delta(delta, fair=1/{n})")
    for name, value, low in (("max_hands", max_hands, n), ("batch", batch, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
    play = play or contest.play
    max_deals = max_hands // n
    start = compare([], [], hypotheses, alpha, beta)  # checks alpha and beta before any play
    result = CompareResult(contest, hypotheses, alpha, beta, max_hands, start)
    while result.comparison.decision == "undecided" and len(result.records) < max_deals * n:
        done = len(result.records) // n
        result.records.extend(play(range(done, min(done + batch, max_deals))))
        wins, episodes = deal_totals(result.records, 0)
        result.comparison = compare(wins, episodes, hypotheses, alpha, beta)
        if on_batch is not None:
            on_batch(result)
    return result
