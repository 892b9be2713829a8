"""A suite's identity covers its rules, and a leaderboard row is typed and bounded: a suite file or a
result file that differs from what cardlab writes is refused in one line naming the file and the key, before
any card is dealt, and nothing a row holds can change the page outside its own cells."""

from __future__ import annotations

import importlib
import json
import pathlib
import re
import sys
import time

import pytest

from cardlab.evaluation.leaderboard import bench_markdown, exploit_markdown
from cardlab.evaluation.suites import SUITES_DIR, load_suite

from .test_leaderboard import row

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))
update_tables = importlib.import_module("update_tables")


def shipped(name: str = "huit-2p") -> dict[str, object]:
    data: dict[str, object] = json.loads((SUITES_DIR / f"{name}.json").read_text())
    return data


# ---------------------------------------------------------------- suites
def test_a_copy_of_a_shipped_suite_under_other_rules_is_refused_by_its_name(tmp_path: pathlib.Path) -> None:
    """The attack: huit-2p.json with max_turns 30 and target_score 1000 dealt the shipped cards (the hash
    leaves the rules out), so its rows passed as the shipped suite's."""
    data = shipped()
    data["rules"] = {**data["rules"], "max_turns": 30, "target_score": 1000}  # type: ignore[dict-item]
    path = tmp_path / "huit-2p.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"^suite {re.escape(str(path))}: it is named huit-2p but differs "
                                         r"from the shipped suite huit-2p in rules\.target_score, "
                                         r"rules\.max_turns"):
        load_suite(str(path))
    path.write_text(json.dumps(shipped()))
    assert load_suite(str(path)) == load_suite("huit-2p")  # the same suite, wherever its file lies


@pytest.mark.parametrize(("key", "value", "words"), [
    ("deals", 10**12, "deals must be a whole number from 1 to 100,000"),
    ("deals_sha256", 12345, "deals_sha256 must be the SHA-256 of the cards"),
    ("deals_sha256", None, "deals_sha256 must be the SHA-256 of the cards"),
    ("episode", ["hand"], "episode must be hand or match"),
    ("name", "../../../tmp/x", "name must be 1 to 40 lowercase letters"),
    ("seed", 2**70, "seed must be a whole number from 0"),
    ("game", ["huit"], "game must be one of"),
    ("rules", {"max_turns": "30"}, "rules: "),
])
def test_a_suite_field_of_the_wrong_type_or_range_is_refused_before_dealing(
        tmp_path: pathlib.Path, key: str, value: object, words: str) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({**shipped(), "name": "mine", key: value}))
    started = time.monotonic()
    with pytest.raises(ValueError) as refused:
        load_suite(str(path))
    assert time.monotonic() - started < 5  # nothing dealt
    message = str(refused.value)
    assert message.startswith(f"suite {path}: ") and words in message and "\n" not in message, message


# ---------------------------------------------------------------- bench rows
def test_a_row_played_before_a_rule_option_was_added_stays_valid(tmp_path: pathlib.Path) -> None:
    """A row's rules are compared completed with the game's defaults, as the suite's are: a row that lacks
    an option (one added to the game after the row was played, at its default) is kept, and one naming an
    option the game does not have is refused in one line."""
    suite = load_suite("huit-2p", check=False)
    older = {k: v for k, v in suite.rules.items() if k != "memory"}
    (tmp_path / "a.json").write_text(json.dumps(row("greedy", 0.4, rules=older)))
    assert "greedy" in bench_markdown(tmp_path)
    (tmp_path / "a.json").write_text(json.dumps(row("greedy", 0.4, rules={**suite.rules, "jokers_wild": 1})))
    with pytest.raises(ValueError, match=r"a\.json: rules: .*jokers_wild"):
        bench_markdown(tmp_path)


def test_a_row_records_its_rules_and_one_of_other_rules_is_refused(tmp_path: pathlib.Path) -> None:
    suite = load_suite("huit-2p", check=False)
    (tmp_path / "a.json").write_text(json.dumps(row("greedy", 0.4, rules={**suite.rules, "max_turns": 30})))
    with pytest.raises(ValueError, match="rules differ from suite huit-2p's in max_turns: it was played "
                                         "under other rules"):
        bench_markdown(tmp_path)
    data = row("greedy", 0.4)
    del data["rules"]
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="lacks rules"):
        bench_markdown(tmp_path)


TAMPERED = [
    ({"win_rate": "0.5"}, "win_rate must be a number from 0 to 1"),
    ({"win_rate": 1.5, "paired_ci_high": 1.6}, "win_rate must be a number from 0 to 1"),
    ({"win_rate": 0.9}, "paired_ci_low <= win_rate <= paired_ci_high must hold"),
    ({"paired_ci_low": None}, "paired_ci_low must be a number"),
    ({"agent": ["greedy"]}, "agent must be a text of 1 to 200 characters"),
    ({"agent": "x" * 1_000_000}, "agent must be a text of 1 to 200 characters"),
    ({"agent": "greedy | 1.000 |"}, "agent must be a text of letters"),
    ({"agent": "greedy\n| 1 | `x` |"}, "agent must be a text of letters"),
    ({"agent": "x <!-- END GENERATED -->"}, "agent must be a text of letters"),
    ({"agent": "<script>alert(1)</script>"}, "agent must be a text of letters"),
    ({"field": "expert"}, "field must be a list of 1 to 9 agent specs"),
    ({"field": []}, "field must be a list of 1 to 9 agent specs"),
    ({"field": ["a|b"]}, "field must be a list of 1 to 9 agent specs"),
    ({"episodes": "4000"}, "episodes must be a whole number"),
    ({"episodes": True}, "episodes must be a whole number"),
    ({"point_difference": "1.0"}, "point_difference must be a number"),
    ({"command": ["cardlab"]}, "command must be a text"),
    ({"suite_version": "1"}, "was played on other cards"),
    ({"num_players": "2"}, "num_players must be suite huit-2p's 2"),
    ({"episode": "match"}, "episode must be suite huit-2p's 'hand'"),
    ({"deals": 10**12}, "deals must be a whole number from 1 to suite huit-2p's 2,000"),
    ({"rules": "default"}, "rules must be an object of rule options"),
    ({"win_rat": 0.9}, "unknown key(s) win_rat; accepted: format, suite"),
    ({"wins": 4001}, "wins must be a whole number from 0 to 4,000"),
    ({"wilson_ci_high": 0.1}, "wilson_ci_low <= win_rate <= wilson_ci_high must hold"),
    ({"slots": "expert"}, "slots must be a list of 1 to 10 agent specs"),
    ({"truncated": -1}, "truncated must be a whole number from 0 to 4,000"),
    ({"fair_share": 0}, "fair_share must be suite huit-2p's 0.5"),
    ({"deals": None}, "deals must be a whole number from 1 to suite huit-2p's"),
]


def test_a_match_row_counts_shared_wins_and_a_hand_row_only_whole_ones(tmp_path: pathlib.Path) -> None:
    """A12/B13: tied match winners share the win, so a match row's wins may be a fraction (a three-way tie
    at a 4-player table counts a third); a hand has one winner, so a hand row's wins are whole."""
    suite = load_suite("huit-4p-match", check=False)
    match = row("greedy", 0.4, suite=suite.name, suite_version=suite.version, suite_sha256=suite.deals_sha256,
                rules=suite.rules, episode="match", num_players=4, deals=500, episodes=2000, fair_share=0.25,
                slots=["greedy", "expert", "expert", "expert"], wins=800 + 1 / 3)
    (tmp_path / "a.json").write_text(json.dumps(match))
    assert "| 1 | `greedy` |" in bench_markdown(tmp_path).split("### huit-4p-match")[1]
    (tmp_path / "a.json").write_text(json.dumps(row("greedy", 0.4, wins=1600.5)))
    with pytest.raises(ValueError, match="wins must be a whole number from 0 to 4,000"):
        bench_markdown(tmp_path)


@pytest.mark.parametrize("key", ["game", "deals", "wins", "slots"])
def test_a_row_missing_a_key_bench_writes_is_refused_naming_it(tmp_path: pathlib.Path, key: str) -> None:
    """A row without its table, deals or counts would pass under any suite's name were the key optional."""
    data = row("greedy", 0.4)
    del data[key]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"result file {path}: it lacks {key}: give the JSON that cardlab"):
        bench_markdown(tmp_path)


@pytest.mark.parametrize(("changes", "words"), TAMPERED)
def test_a_tampered_row_is_refused_in_one_line_naming_the_file_and_key(
        tmp_path: pathlib.Path, changes: dict[str, object], words: str) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps({**row("greedy", 0.4), **changes}))
    with pytest.raises(ValueError) as refused:
        bench_markdown(tmp_path)
    message = str(refused.value)
    assert message.startswith(f"result file {path}: ") and "\n" not in message and len(message) < 600, message
    assert words in message, message


EXPLOIT = {"responder": "ppo", "game": "huit", "num_players": 2, "agent": "expert", "warm_start": "none",
           "steps": 10, "seconds": 6.0, "hands": 100, "fair_share": 0.5, "exploiter_win_rate": 0.45,
           "exploiter_ci_low": 0.4, "exploiter_ci_high": 0.5}


@pytest.mark.parametrize(("changes", "words"), [
    ({"fair_share": None}, "fair_share must be a number from 0 to 1"),
    ({"num_players": "2"}, "num_players must be a whole number from 2 to 10"),
    ({"exploiter_win_rate": "0.45"}, "exploiter_win_rate must be a number from 0 to 1"),
    ({"agent": ["expert"]}, "agent must be a text"),
    ({"agent": "a|b"}, "agent must be a text of letters"),
    ({"warm_start": "<!-- END GENERATED -->"}, "warm_start must be a text of letters"),
    ({"game": "chess"}, "game must be one of"),
    ({"curve": "up"}, "curve must be a list"),
    ({"curve": [{"steps": 0, "win_rate": "high"}]}, "curve[0].win_rate must be a number from 0 to 1"),
    ({"rules": {"max_turns": 30}}, "rules must be huit's default rules at 2 players"),
    ({"rules": []}, "rules must be an object"),
    ({"responder": ["ppo"]}, "this cardlab reads the responders"),
])
def test_a_tampered_exploit_row_is_refused_in_one_line(
        tmp_path: pathlib.Path, changes: dict[str, object], words: str) -> None:
    (tmp_path / "exploit").mkdir()
    path = tmp_path / "exploit" / "a.json"
    path.write_text(json.dumps({**EXPLOIT, **changes}))
    with pytest.raises(ValueError) as refused:
        exploit_markdown(tmp_path)
    message = str(refused.value)
    assert message.startswith(f"result file {path}: ") and words in message and "\n" not in message, message


# ---------------------------------------------------------------- the page
def test_update_tables_refuses_a_bad_row_in_one_line_and_a_deleted_row_leaves_no_trace(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    page = (ROOT / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    folder = tmp_path / "leaderboard"
    (folder / "exploit").mkdir(parents=True)
    monkeypatch.setattr(update_tables, "RESULTS", folder)
    before = update_tables.update(page)
    (folder / "evil.json").write_text(json.dumps(row("x\n<!-- END GENERATED -->\n<script>", 0.9,
                                                     paired_ci_low=0.89, paired_ci_high=0.91)))
    with pytest.raises(ValueError, match="agent must be a text of letters"):
        update_tables.update(page)
    monkeypatch.setattr(update_tables, "pages", lambda: [tmp_path / "page.md"])
    (tmp_path / "page.md").write_text(before, encoding="utf-8")
    assert update_tables.main() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "evil.json: agent must be" in err
    (folder / "evil.json").write_text(json.dumps(row("greedy:seed=7", 0.9, paired_ci_low=0.89,
                                                     paired_ci_high=0.91)))
    assert update_tables.main() == 0
    added = (tmp_path / "page.md").read_text(encoding="utf-8")
    assert "| 1 | `greedy:seed=7` |" in added
    (folder / "evil.json").unlink()
    assert update_tables.main() == 0 and update_tables.main() == 0
    assert (tmp_path / "page.md").read_text(encoding="utf-8") == before
    (tmp_path / "page.md").write_text(before.replace("<!-- END GENERATED -->", "", 1), encoding="utf-8")
    assert update_tables.main() == 1 and "markers do not pair" in capsys.readouterr().err
