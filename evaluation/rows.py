"""The fields of a leaderboard row, typed and bounded: a result file is checked whole before the page shows
it.

Why: the leaderboard (`cardlab.evaluation.leaderboard`) is generated from
files anyone may send, and its page is Markdown, where a ``|`` splits a
cell, a new line ends a table and ``<!-- ... -->`` closes the generated
block. So every field is checked for its type and range (a win rate is a
number from 0 to 1, an agent a short spec, a field a list of them), and any
text the page shows may hold only `SHOWN`'s characters. Each refusal is one
line naming the file and the key.
"""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Mapping
from typing import Any

from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import refused_file, unknown
from cardlab.envs.game_spec import games

SHOWN = re.compile(r"[A-Za-z0-9 _.,:;=@/+()\[\]{}'#%~-]*")
"""the characters a text the page shows may hold: no ``|``, ``<``, ``>``, backtick, new line"""
SHOWN_WORDS = "letters, digits, spaces and _ . , : ; = @ / + ( ) [ ] { } ' # % ~ -"
MOST_SPEC = 200
"""the longest agent spec a row may name"""
MOST_FIELD = 9
"""the most reference agents a row's field may list"""
MOST_COMMAND = 2000
MOST_EPISODES = 10**9
MOST_POINTS = 10**6
"""the largest point difference per deal (a match's totals stay far below)"""
MOST_SECONDS = 10**8
MOST_STEPS = 10**15
BENCH_KEYS = ("format", "suite", "suite_version", "suite_sha256", "rules", "game", "num_players", "episode",
              "deals", "agent", "field", "slots", "episodes", "wins", "win_rate", "paired_ci_low",
              "paired_ci_high", "wilson_ci_low", "wilson_ci_high", "fair_share", "point_difference",
              "point_difference_ci_low", "point_difference_ci_high", "truncated", "command",
              "cardlab_version")
"""the keys of a `cardlab bench --json` row (`cardlab.evaluation.bench.bench_row` writes exactly these)"""


def refused_result(path: pathlib.Path, reason: str) -> ValueError:
    """The refusal of a result file (a leaderboard row), `refused_file`'s one line: ``result file PATH:
    REASON``."""
    return refused_file("result file", path, reason)


class Row:
    """The checks of one row (a result file's JSON object), each naming `path` and the key."""

    def __init__(self, path: pathlib.Path, data: Mapping[str, Any], within: str = "") -> None:
        self.path, self.data, self.within = path, data, within

    def fail(self, key: str, wanted: str) -> ValueError:
        return refused_result(self.path, f"{self.within}{key} must be {wanted}, got "
                                         f"{excerpt(self.data.get(key))}")

    def whole(self, key: str, low: int, high: int) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"a whole number from {low:,} to {high:,}")
        return value

    def number(self, key: str, low: float, high: float) -> float:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not (
                low <= value <= high):
            raise self.fail(key, f"a number from {low:g} to {high:g}")
        return float(value)

    def rate(self, key: str) -> float:
        return self.number(key, 0.0, 1.0)

    def text(self, key: str, most: int = MOST_SPEC, shown: bool = True) -> str:
        """A string of at most `most` characters; one the page shows holds only `SHOWN`'s characters."""
        value = self.data.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > most:
            raise self.fail(key, f"a text of 1 to {most} characters")
        if shown and not SHOWN.fullmatch(value):
            raise self.fail(key, f"a text of {SHOWN_WORDS} only (the page shows it)")
        if not value.isprintable():
            raise self.fail(key, "a text of one line of printable characters")
        return value

    def specs(self, key: str, most: int = MOST_FIELD) -> list[str]:
        value = self.data.get(key)
        if not isinstance(value, list) or not 1 <= len(value) <= most or not all(
                isinstance(v, str) and 0 < len(v) <= MOST_SPEC and SHOWN.fullmatch(v) for v in value):
            raise self.fail(key, f"a list of 1 to {most} agent specs ({SHOWN_WORDS} only)")
        return list(value)

    def only(self, keys: tuple[str, ...]) -> None:
        """No key but `keys` (a misspelt or made-up key is refused, not ignored)."""
        given = [k for k in self.data if k not in keys]
        if given:
            raise refused_result(self.path, str(unknown("key", given, ", ".join(keys))))

    def interval(self, low: str, value: str, high: str, check: Any) -> None:
        """`low` <= `value` <= `high`, each checked by `check(key)`."""
        a, b, c = check(low), check(value), check(high)
        if not a <= b <= c:
            raise refused_result(self.path, f"{low} <= {value} <= {high} must hold, got "
                                            f"{a:g}, {b:g}, {c:g}")

    def table(self) -> tuple[str, int]:
        """(game, num_players) of an exploitability row."""
        game = self.data.get("game")
        if game not in games():
            raise self.fail("game", f"one of {', '.join(games())}")
        return str(game), self.whole("num_players", 2, 10)


def check_bench_row(path: pathlib.Path, data: Mapping[str, Any]) -> None:
    """Every field of a `cardlab bench --json` row of its type and range (its keys, and the suite's own
    fields, its cards, rules and fair share, are checked by `cardlab.evaluation.leaderboard`)."""
    row = Row(path, data)
    row.text("agent")
    row.specs("field")
    row.specs("slots", 10)
    episodes = row.whole("episodes", 1, MOST_EPISODES)
    if data.get("episode") == "match":  # A12/B13: a match's tied winners share its win, so a third counts
        row.number("wins", 0, episodes)
    else:
        row.whole("wins", 0, episodes)
    row.whole("truncated", 0, episodes)
    row.interval("paired_ci_low", "win_rate", "paired_ci_high", row.rate)
    row.interval("wilson_ci_low", "win_rate", "wilson_ci_high", row.rate)
    row.text("cardlab_version", 40)
    row.interval("point_difference_ci_low", "point_difference", "point_difference_ci_high",
                 lambda key: row.number(key, -MOST_POINTS, MOST_POINTS))
    row.text("command", MOST_COMMAND, shown=False)


def check_exploit_row(path: pathlib.Path, data: Mapping[str, Any], responder_fields: tuple[str, ...]) -> None:
    """Every field of a `cardlab exploit --json` row the page reads, the responder's own included."""
    row = Row(path, data)
    row.table()
    row.text("agent")
    row.whole("hands", 1, MOST_EPISODES)
    row.rate("fair_share")
    row.interval("exploiter_ci_low", "exploiter_win_rate", "exploiter_ci_high", row.rate)
    row.number("seconds", 0.0, MOST_SECONDS)
    if "base" in responder_fields:
        row.text("base")
        row.whole("worlds", 0, MOST_EPISODES)
    else:
        row.text("warm_start")
        row.whole("steps", 0, MOST_STEPS)
        curve = data.get("curve")
        if curve is not None and (not isinstance(curve, list) or len(curve) > 10_000 or not all(
                isinstance(point, dict) for point in curve)):
            raise row.fail("curve", "a list of at most 10,000 points ({\"steps\": N, \"win_rate\": X, ...})")
        for i, point in enumerate(curve or []):
            Row(path, point, f"curve[{i}].").whole("steps", 0, MOST_STEPS)
            Row(path, point, f"curve[{i}].").rate("win_rate")
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise row.fail("rules", "an object of rule options")
