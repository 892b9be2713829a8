"""The leaderboard: tables of `cardlab bench` results (and exploitability bounds) read from result files.

Each row is one result file, as `cardlab bench AGENT --suite NAME --json F`
writes it; `docs/update_tables.py` writes the page's tables from the folder
of those files, so the page shows the files and nothing else. Per suite, the
shipped agents (random, each heuristic, each shipped bot of the table, the
search `SEARCH` and, where the table has a shipped hand reader, `READER_SEARCH`)
are always listed, those without a file as "not run".
Exploitability rows are `cardlab exploit --json` files in the folder's
``exploit/`` subfolder, of either responder (PPO, or the search that knows
the agent's policy).
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

from cardlab.agents.bot_catalogue import shipped_bots
from cardlab.agents.hand_reading.reader import shipped_reader_path
from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.evaluation.bench import FORMAT
from cardlab.evaluation.episodes import plural, table_rules
from cardlab.evaluation.rows import BENCH_KEYS, Row, check_bench_row, check_exploit_row, refused_result
from cardlab.evaluation.suites import Suite, load_suite, suite_names

SUITE_KEYS = ("game", "num_players", "episode", "fair_share")
"""a row's fields that must be its suite's"""
EXPLOIT_FIELDS = ("game", "num_players", "agent", "hands", "fair_share", "exploiter_win_rate",
                  "exploiter_ci_low", "exploiter_ci_high")
RESPONDER_FIELDS = {"ppo": ("warm_start", "steps", "seconds"), "search": ("base", "worlds", "seconds")}
"""each responder's own fields (`cardlab exploit --responder`; a file without ``responder`` is PPO's)"""
SEARCH = "search:worlds=128:ms=0:expert"
"""the search every table lists: the quick search over the expert without its clock, so that a rerun on any
machine plays the same moves, and with fewer worlds than its 60 ms fit, so that a suite of it is affordable"""

READER_SEARCH = "search:belief=learned:worlds=128:ms=0:expert"
"""`SEARCH` with its worlds dealt by the table's shipped hand reader, listed where one ships"""


def shipped_agents(suite: Suite) -> list[str]:
    """The agents every suite's table lists: random, the heuristics, the table's shipped bots, `SEARCH`,
    and `READER_SEARCH` where a hand reader ships for the table."""
    game = make_game(suite.game, suite.rules)
    reads = shipped_reader_path(game).is_file()
    return ["random", *game.spec.heuristics, *shipped_bots(game), SEARCH, *([READER_SEARCH] if reads else [])]


def _read(path: pathlib.Path, fields: Sequence[str]) -> dict[str, Any]:
    return _checked(path, read_json_file(path), fields)


def _checked(path: pathlib.Path, data: Any, fields: Sequence[str]) -> dict[str, Any]:
    missing = [f for f in fields if not isinstance(data, dict) or f not in data]
    if missing:
        raise refused_result(path, f"it lacks {', '.join(missing)}: give the JSON that cardlab wrote")
    return dict(data)


def bench_rows(folder: pathlib.Path) -> dict[str, list[dict[str, Any]]]:
    """Suite name -> its result rows (best win rate first); a row of another suite's cards or rules, or
    with a field out of its type or range (`cardlab.evaluation.rows`), is refused."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        row = _read(path, BENCH_KEYS)
        Row(path, row).only(BENCH_KEYS)
        if row["format"] != FORMAT or row["suite"] not in suite_names():
            raise refused_result(path, f"format {excerpt(row['format'])} of suite {excerpt(row['suite'])}; "
                                       f"this cardlab reads format {FORMAT} of the suites "
                                       f"{', '.join(suite_names())}")
        suite = load_suite(row["suite"], check=False)
        check_suite_row(path, row, suite)
        check_bench_row(path, row)
        rows.setdefault(row["suite"], []).append(row)
    return {name: sorted(found, key=lambda r: -r["win_rate"]) for name, found in rows.items()}


def completed_rules(path: pathlib.Path, game: str, rules: Any) -> dict[str, Any]:
    """A row's rules with the game's defaults filled in, as a suite's are at load: a rule option added to the
    game after the row was played (at its default) leaves the row valid."""
    if not isinstance(rules, dict):
        raise refused_result(path, f"rules must be an object of rule options, got {excerpt(rules)}")
    try:
        return table_rules(game, rules)
    except ValueError as err:
        raise refused_result(path, f"rules: {err}") from None


def check_suite_row(path: pathlib.Path, row: dict[str, Any], suite: Suite) -> None:
    """The row was played on the suite's cards, under its rules, in its episodes."""
    command = excerpt(row["command"], 200)
    if row["suite_sha256"] != suite.deals_sha256 or row["suite_version"] != suite.version:
        raise refused_result(path, f"it was played on other cards than suite {suite.name} version "
                                   f"{suite.version}: run its command again ({command}) or remove it")
    played = completed_rules(path, suite.game, row["rules"])
    if played != suite.rules:
        differ = sorted(k for k in {*suite.rules, *played} if played.get(k) != suite.rules.get(k))
        raise refused_result(path, f"rules differ from suite {suite.name}'s in "
                                   f"{(', '.join(differ) or 'their type')[:200]}: it was played under other "
                                   f"rules; run its command again on the shipped suite ({command}) or remove "
                                   "it")
    shipped = {"game": suite.game, "num_players": suite.num_players, "episode": suite.episode,
               "fair_share": 1 / suite.num_players}
    for key in SUITE_KEYS:
        if row[key] != shipped[key]:
            raise refused_result(path, f"{key} must be suite {suite.name}'s "
                                       f"{excerpt(shipped[key])}, got {excerpt(row[key])}")
    if (isinstance(row["deals"], bool) or not isinstance(row["deals"], int)
                           or not 1 <= row["deals"] <= suite.deals):
        raise refused_result(path, f"deals must be a whole number from 1 to suite {suite.name}'s "
                                   f"{suite.deals:,}, got {excerpt(row['deals'])}")


def exploit_rows(folder: pathlib.Path) -> list[dict[str, Any]]:
    """The exploitability results (`cardlab exploit --json`), largest bound first."""
    rows = []
    for path in sorted((folder / "exploit").glob("*.json")):
        row = _read(path, EXPLOIT_FIELDS)
        responder = row.setdefault("responder", "ppo")
        if not isinstance(responder, str) or responder not in RESPONDER_FIELDS:
            raise refused_result(path, f"responder {excerpt(responder)}; this cardlab reads the "
                                       f"responders {', '.join(RESPONDER_FIELDS)}")
        row = _checked(path, row, RESPONDER_FIELDS[responder])
        check_exploit_row(path, row, RESPONDER_FIELDS[responder])
        game, n = row["game"], row["num_players"]
        try:
            rules = table_rules(game, {**row.get("rules", {}), "num_players": n})
        except ValueError as err:
            raise refused_result(path, f"rules: {err}") from None
        if rules != table_rules(game, {"num_players": n}):
            raise refused_result(path, f"rules must be {game}'s default rules at {n} players (the "
                                       f"page's table), got {excerpt(row.get('rules'))}")
        rows.append(row)
    return sorted(rows, key=lambda r: (r["game"], r["num_players"],
                                       -(r["exploiter_ci_low"] - r["fair_share"])))


def suites_markdown() -> str:
    """The shipped suites: table, episodes, seed and the hash of their cards."""
    lines = ["| suite | version | game | players | deals | episodes | seed | cards' hash |",
             "|---|---|---|---|---|---|---|---|"]
    for name in suite_names():
        s = load_suite(name, check=False)
        lines.append(f"| {name} | {s.version} | {s.game} | {s.num_players} | {s.deals:,} | "
                     f"{plural(s.episodes, s.episode)} | {s.seed} | `sha256:{s.deals_sha256[:16]}` |")
    return "\n".join(lines) + "\n"


def _interval(low: float, high: float, sign: bool = False) -> str:
    form = "+.2f" if sign else ".3f"
    return f"[{low:{form}}, {high:{form}}]"


def bench_markdown(folder: pathlib.Path) -> str:
    """One table per suite: its rows ranked by win rate, then the shipped agents not run."""
    found = bench_rows(folder)
    parts = []
    for name in suite_names():
        suite = load_suite(name, check=False)
        rows = found.get(name, [])
        what, many = ("match", "matches") if suite.episode == "match" else ("hand", "hands")
        lines = [f"### {name} (version {suite.version}: {suite.game}, {suite.num_players} players, "
                 f"{suite.deals:,} deals of {many})", "",
                 f"| # | agent | field | {what} win rate | 95% CI (paired) | points/deal | 95% CI | {many} |",
                 "|---|---|---|---|---|---|---|---|"]
        for place, r in enumerate(rows, 1):
            lines.append(f"| {place} | `{r['agent']}` | {', '.join(r['field'])} | {r['win_rate']:.3f} | "
                         f"{_interval(r['paired_ci_low'], r['paired_ci_high'])} | "
                         f"{r['point_difference']:+.2f} | "
                         f"{_interval(r['point_difference_ci_low'], r['point_difference_ci_high'], True)} | "
                         f"{r['episodes']} |")
        ran = {r["agent"] for r in rows if r["field"] == ["expert"]}
        for agent in shipped_agents(suite):
            if agent not in ran:
                lines.append(f"| - | `{agent}` | expert | not run | | | | |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def exploit_markdown(folder: pathlib.Path) -> str:
    """The exploitability lower bounds: responder's rate, fair share, bound (interval's low end less fair)."""
    lines = ["| table | agent | responder | at 0 steps | steps | minutes | responder's win rate "
             "| 95% CI (paired) | fair share | lower bound | hands |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in exploit_rows(folder):
        bound = r["exploiter_ci_low"] - r["fair_share"]
        if r["responder"] == "search":
            responder, start, steps = f"search over `{r['base']}`, {r['worlds']:,} worlds", "-", "-"
        else:
            curve = r.get("curve") or [{}]
            start = f"{curve[0]['win_rate']:.3f}" if curve[0].get("steps") == 0 and len(curve) > 1 else "-"
            responder, steps = f"PPO from {r['warm_start']}", f"{r['steps']:,}"
        lines.append(f"| {r['game']} {r['num_players']}p | `{r['agent']}` | {responder} | {start} | "
                     f"{steps} | {r['seconds'] / 60:.1f} | {r['exploiter_win_rate']:.3f} | "
                     f"{_interval(r['exploiter_ci_low'], r['exploiter_ci_high'])} | {r['fair_share']:.3f} | "
                     f"{max(bound, 0.0):.3f} | {r['hands']} |")
    if len(lines) == 2:
        lines.append("| - | not run | | | | | | | | | |")
    return "\n".join(lines) + "\n"
