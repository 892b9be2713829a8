"""`cardlab bench`: an agent on a suite in duplicate, the same numbers on a rerun, anyone's agent enters."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys

import pytest

from cardlab.cli import main
from cardlab.evaluation.bench import bench, bench_slots, point_differences, points_by_deal
from cardlab.evaluation.results import EpisodeRecord
from cardlab.evaluation.rows import BENCH_KEYS
from cardlab.evaluation.suites import SuitePlan, load_suite, make_suite

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def small(name: str, deals: int) -> object:
    return dataclasses.replace(load_suite(name, check=False), deals=deals)


def test_the_field_repeats_in_order_in_the_other_seats() -> None:
    assert bench_slots("me", ["expert"], 3) == ["me", "expert", "expert"]
    assert bench_slots("me", ["expert", "greedy"], 4) == ["me", "expert", "greedy", "expert"]
    with pytest.raises(ValueError, match="the field needs at least one reference agent"):
        bench_slots("me", [], 2)


def test_a_field_longer_than_the_other_seats_is_refused() -> None:
    """Its last specs played no hand, while the result and its leaderboard row named them in the field."""
    with pytest.raises(ValueError) as refused:
        bench_slots("me", ["expert", "greedy"], 2)
    assert str(refused.value) == (
        "the field names 2 agents ('expert greedy') for the 1 other seat of a 2-player table: 'greedy' and "
        "any after it would not play; accepted: at most 1 spec, repeated in order over the other seats")


def test_point_difference_is_the_others_mean_less_the_agent_s_per_deal_truncated_left_out() -> None:
    records = [EpisodeRecord(0, 0, (0, 1, 2), (0,), (0, 4, 8), False),
               EpisodeRecord(0, 1, (1, 2, 0), (1,), (6, 0, 3), False),
               EpisodeRecord(1, 0, (0, 1, 2), (), (9, 9, 9), True),
               EpisodeRecord(1, 1, (1, 2, 0), (2,), (2, 5, 0), False)]
    assert point_differences(records) == [((6 - 0) + (1.5 - 6)) / 2, 2.5 - 2]
    assert points_by_deal(records) == {0: ((6 - 0) + (1.5 - 6)) / 2, 1: 2.5 - 2}  # paired by deal
    assert points_by_deal(records[2:3] + records[:2]) == {0: ((6 - 0) + (1.5 - 6)) / 2}  # all cut: left out


def test_a_copy_of_the_expert_scores_its_fair_share_and_reruns_give_the_same_file() -> None:
    suite = small("huit-2p", 60)
    first = bench("expert", suite)  # type: ignore[arg-type]
    assert first.rate.n == 120 and first.as_dict()["fair_share"] == 0.5
    low, high = first.rate.paired_interval
    assert low < 0.5 < high
    assert bench("expert", suite).to_json() == first.to_json()  # type: ignore[arg-type]
    assert bench("random", suite).as_dict()["win_rate"] < 0.3  # type: ignore[arg-type]
    assert tuple(first.as_dict()) == BENCH_KEYS  # the keys the leaderboard's check accepts, no other


def test_a_match_suite_reports_the_match_win_rate() -> None:
    result = bench("greedy", small("huit-2p-match", 2), ["expert"])  # type: ignore[arg-type]
    data = result.as_dict()
    assert data["episode"] == "match" and data["episodes"] == 4 == len(result.result.match_records)
    assert not result.result.hand_records and "match win rate" in result.format_table()


def test_a_figure_with_nothing_to_measure_it_on_is_none_in_the_row_and_said_in_the_table() -> None:
    """One deal has no interval over deals, and a suite whose every episode C1 cuts short has no points:
    the row wrote NaN (which JSON readers, this project's among them, refuse), and the second stopped with
    "mean_interval needs at least one value"."""
    one = bench("greedy", small("huit-2p", 1))  # type: ignore[arg-type]
    assert "NaN" not in one.to_json() and one.as_dict()["point_difference_ci_low"] is None
    assert "none: one deal" in one.format_table()
    suite = dataclasses.replace(load_suite("huit-2p", check=False), deals=2)
    cut = bench("greedy", dataclasses.replace(suite, rules={**suite.rules, "max_turns": 2}))
    assert cut.as_dict()["point_difference"] is None and cut.as_dict()["truncated"] == 4
    assert "none: every episode cut short (C1)" in cut.format_table() and "NaN" not in cut.to_json()


def test_your_own_agent_enters_through_module_factory(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The documented example: examples/own_agent.py, spec own_agent:make, in bench and in eval."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    suite = make_suite(SuitePlan("tiny", "huit", 2, "hand", 20), 0)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(suite.to_dict()))
    out = tmp_path / "row.json"
    assert main(["bench", "own_agent:make", "--suite", str(path), "--json", str(out)]) == 0
    assert "own_agent:make on suite tiny v1" in capsys.readouterr().out
    row = json.loads(out.read_text())
    assert row["agent"] == "own_agent:make" and row["episodes"] == 40 and row["field"] == ["expert"]
    assert row["command"] == f"cardlab bench own_agent:make --suite {path}"
    assert main(["eval", "--game", "huit", "--agents", "own_agent:make", "greedy", "--hands", "4"]) == 0
    assert "own_agent" in sys.modules


def test_bad_suites_and_fields_are_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "expert", "--suite", "nope"]) == 2
    assert "unknown suite(s) nope; accepted: huit-2p, huit-3p" in capsys.readouterr().err
    assert main(["bench", "expert", "--suite", "huit-2p", "--field", "nobody"]) == 2
    assert "unknown agent spec 'nobody' for huit" in capsys.readouterr().err

