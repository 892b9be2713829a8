"""The benchmark: an agent on a deal suite in duplicate, against reference agents, with comparable numbers.

Every deal of the suite (`cardlab.evaluation.suites`) is played once per seat
rotation, the agent in slot 0 and the reference agents (the `field`,
repeated in order) in the other seats: `evaluate` with the suite's seed and
rules, so the same agent, suite and field give the same numbers on any
machine, and on Ray workers (`play`: `cardlab.cluster.parallel_evaluation.evaluate_parallel`).

Reported: the agent's win rate (hands, or matches for a match suite) with
the interval clustered by deal and Wilson's, its fair share 1/n, and the
average difference of points per deal: per episode the others' mean points
less the agent's (points count against a player, so above 0 is better), averaged
over the deal's rotations, then over deals, with a Student t interval over
deals; truncated episodes (C1) count as non-wins and are left out of the points.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import shlex
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardlab import __version__
from cardlab.agents.agent_spec import make_agent
from cardlab.envs.checked_json import excerpt
from cardlab.evaluation.episodes import plural
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import AgentFactory, EvalRequest
from cardlab.evaluation.results import EpisodeRecord, EvalResult, Rate, json_numbers, text_table
from cardlab.evaluation.stats import mean_interval
from cardlab.evaluation.suites import Suite

FORMAT = 1
"""version of the result file's layout (`BenchResult.as_dict`)"""
DEFAULT_FIELD = ("expert",)

Evaluate = Callable[..., EvalResult]
"""`evaluate` (an `EvalRequest` and keyword options): the serial one or its Ray twin"""


def bench_slots(agent: str, field: Sequence[str], num_players: int) -> list[str]:
    """The agent in slot 0, the field's specs repeated in order in the others. A field longer than the other
    seats is refused: its last specs would play no hand, while the result (a leaderboard row) names them."""
    if not field:
        raise ValueError("the field needs at least one reference agent spec, e.g. --field expert")
    others = num_players - 1
    if len(field) > others:
        raise ValueError(f"the field names {plural(len(field), 'agent')} ({excerpt(' '.join(field))}) for "
                         f"the {plural(others, 'other seat')} of a {num_players}-player table: "
                         f"{excerpt(field[others])} and any after it would not play; accepted: at most "
                         f"{plural(others, 'spec')}, repeated in order over the other seats")
    return [agent] + [field[i % len(field)] for i in range(num_players - 1)]


def points_by_deal(records: Sequence[EpisodeRecord], slot: int = 0) -> dict[int, float]:
    """Deal -> others' mean points less the slot's, averaged over the deal's untruncated rotations (a deal
    whose rotations were all truncated is left out), so that two agents' points pair by deal."""
    by_deal: dict[int, list[float]] = {}
    for r in records:
        if r.truncated:
            continue
        others = [p for s, p in enumerate(r.points) if s != slot]
        by_deal.setdefault(r.deal, []).append(float(np.mean(others)) - r.points[slot])
    return {d: float(np.mean(by_deal[d])) for d in sorted(by_deal)}


def point_differences(records: Sequence[EpisodeRecord], slot: int = 0) -> list[float]:
    """Per deal (in deal order): others' mean points less the slot's, averaged over untruncated rotations."""
    return list(points_by_deal(records, slot).values())


@dataclasses.dataclass
class BenchResult:
    """An agent's run on a suite: the suite, the seats and the evaluation behind every figure."""

    suite: Suite
    agent: str
    field: list[str]
    result: EvalResult
    command: str = ""
    """the command line that made it (for the leaderboard's row)"""

    @property
    def records(self) -> list[EpisodeRecord]:
        return self.result.match_records if self.suite.episode == "match" else self.result.hand_records

    @property
    def rate(self) -> Rate:
        return Rate.of_slot(self.records, 0)

    def as_dict(self) -> dict[str, Any]:
        return bench_row(self.suite, self.agent, self.field, self.result.slots, self.records, self.command)

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    def to_csv(self) -> str:
        return self.result.to_csv()

    def plot(self, path: str | pathlib.Path) -> pathlib.Path:
        return self.result.plot(path)

    def format_table(self) -> str:
        d = self.as_dict()
        what = "match" if self.suite.episode == "match" else "hand"
        head = (f"{self.agent} on suite {self.suite.name} v{self.suite.version} ({self.suite.game}, "
                f"{self.suite.num_players} players, {d['deals']} deals x {self.suite.num_players} seat "
                f"rotations = {plural(d['episodes'], what)}), field: {', '.join(self.field)}")
        rows = [[f"{what} win rate", f"{d['win_rate']:.3f}",
                 f"[{d['paired_ci_low']:.3f}, {d['paired_ci_high']:.3f}]",
                 f"[{d['wilson_ci_low']:.3f}, {d['wilson_ci_high']:.3f}]",
                 f"fair share {d['fair_share']:.3f}"],
                ["points/deal (others - agent)", _points(d['point_difference']),
                 _points_interval(d['point_difference_ci_low'], d['point_difference_ci_high'],
                                  d['point_difference'] is None), "", f"truncated {d['truncated']}"]]
        return f"{head}\n{text_table(['', 'value', '95% CI (paired)', 'Wilson', ''], rows)}"


def _points(value: float | None) -> str:
    return "none" if value is None else f"{value:+.3f}"


def _points_interval(low: float | None, high: float | None, cut: bool) -> str:
    """The points' interval over deals as the table shows it; None where there is nothing to measure it on."""
    if low is None or high is None:
        return "none: every episode cut short (C1)" if cut else "none: one deal"
    return f"[{low:+.3f}, {high:+.3f}]"


def bench_row(suite: Suite, agent: str, field: list[str], slots: list[str], records: Sequence[EpisodeRecord],
              command: str) -> dict[str, Any]:
    """The leaderboard's row of `agent` in slot 0 over `records` (its episodes on the suite's first deals,
    every seat rotation): what `cardlab bench --json` writes, from whichever run played them."""
    rate = Rate.of_slot(records, 0)
    (low, high), (w_low, w_high) = rate.paired_interval, rate.interval
    differences = point_differences(records)  # none where every episode was cut short (C1)
    points, points_low, points_high = mean_interval(differences) if differences else (math.nan,) * 3
    return json_numbers({
        "format": FORMAT, "suite": suite.name, "suite_version": suite.version,
        "suite_sha256": suite.deals_sha256, "rules": dict(suite.rules), "game": suite.game,
        "num_players": suite.num_players, "episode": suite.episode, "deals": len({r.deal for r in records}),
        "agent": agent, "field": field, "slots": slots,
        "episodes": rate.n, "wins": rate.wins, "win_rate": rate.rate, "paired_ci_low": low,
        "paired_ci_high": high, "wilson_ci_low": w_low, "wilson_ci_high": w_high,
        "fair_share": 1 / suite.num_players, "point_difference": points,
        "point_difference_ci_low": points_low, "point_difference_ci_high": points_high,
        "truncated": sum(r.truncated for r in records), "command": command,
        "cardlab_version": __version__,
    })


def bench(agent: str, suite: Suite, field: Sequence[str] = DEFAULT_FIELD, *, play: Evaluate = evaluate,
          progress: bool = False, command: Sequence[str] = (), deals: int | None = None,
          agent_factory: AgentFactory = make_agent) -> BenchResult:
    """Play `agent` on every deal of `suite` in duplicate against `field` (module doc).

    `play` is `evaluate` or `evaluate_parallel` (same arguments, same records);
    `command` is the argv recorded in the result. `deals` plays only the
    suite's first that many deals (every one in each seat rotation), for a
    figure that costs less than the whole suite; the result says how many.
    """
    if deals is not None and (isinstance(deals, bool) or not isinstance(deals, int)
                              or not 1 <= deals <= suite.deals):
        raise ValueError(f"deals must be a whole number from 1 to the suite's {suite.deals:,}, got "
                         f"{excerpt(deals)}")
    field = [f.strip() for f in field]
    slots = bench_slots(agent.strip(), field, suite.num_players)
    episodes = suite.num_players * (suite.deals if deals is None else deals)
    hands, matches = (0, episodes) if suite.episode == "match" else (episodes, 0)
    request = EvalRequest(suite.game, slots, hands=hands, matches=matches, seed=suite.seed, rules=suite.rules,
                          agent_factory=agent_factory)
    result = play(request, progress=progress)
    return BenchResult(suite, result.slots[0], field, result, shlex.join(command))
