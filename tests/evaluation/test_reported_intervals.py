"""The paired interval where results are reported (eval's table, JSON and CSV, tournaments); one Wilson."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import pathlib

import pytest

from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.paired import paired_interval, slot_paired_interval, t_quantile, wilson_rate_interval
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.results import Rate, combined
from cardlab.evaluation.stats import mean_interval, wilson_interval
from cardlab.evaluation.tournament import tournament

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def test_eval_json_csv_and_table_carry_the_paired_interval() -> None:
    result = evaluate(EvalRequest("huit", ["expert", "random"],
                                  hands=60, matches=4, seed=3, rules={"target_score": 30}))
    data = json.loads(result.to_json())
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    for slot, (agent, row) in enumerate(zip(data["agents"], rows, strict=True)):
        hand = slot_paired_interval(result.hand_records, slot)
        match = slot_paired_interval(result.match_records, slot)
        assert (agent["hand_paired_ci_low"], agent["hand_paired_ci_high"]) == pytest.approx(hand)
        assert (agent["match_paired_ci_low"], agent["match_paired_ci_high"]) == pytest.approx(match)
        assert (float(row["hand_paired_ci_low"]), float(row["hand_paired_ci_high"])) == pytest.approx(hand)
        assert (agent["hand_ci_low"], agent["hand_ci_high"]) == pytest.approx(
            wilson_interval(agent["hand_wins"], agent["hands"]))
        assert hand != pytest.approx((agent["hand_ci_low"], agent["hand_ci_high"]))  # a different interval
        assert f"[{hand[0]:.3f}, {hand[1]:.3f}]" in result.format_table()
    assert "95% CI (paired)" in result.format_table()
    assert isinstance(data["agents"][0]["hand_wins"], int)  # hands have one winner: whole counts


def test_hands_only_has_no_match_fields() -> None:
    data = json.loads(evaluate(EvalRequest("huit", ["expert", "random"], hands=10, seed=0)).to_json())
    assert "hand_paired_ci_low" in data["agents"][0] and "match_paired_ci_low" not in data["agents"][0]


def test_tournament_pairings_and_overall_are_clustered_by_deal() -> None:
    specs = ["random", "greedy", "expert"]
    result = tournament(EvalRequest("huit", specs, hands=40, seed=5))
    table = evaluate(EvalRequest("huit", ["greedy", "expert"], hands=40, seed=5))
    row = next(r for r in result.rows() if (r["agent"], r["opponent"]) == ("greedy", "expert"))
    assert (row["paired_ci_low"], row["paired_ci_high"]) == pytest.approx(
        slot_paired_interval(table.hand_records, 0))
    # Overall: greedy's hands on one deal against random and against expert are one cluster.
    vs_random = evaluate(EvalRequest("huit", ["random", "greedy"], hands=40, seed=5))
    wins = [0.0] * 20
    for records, slot in ((vs_random.hand_records, 1), (table.hand_records, 0)):
        for r in records:
            wins[r.deal] += slot in r.winners
    overall = result.overall(1)
    assert overall.n == 80 and overall.paired_interval == pytest.approx(paired_interval(wins, [4] * 20))
    ranked = json.loads(result.to_json())["ratings"]
    greedy = next(r for r in ranked if r["agent"] == "greedy")
    assert (greedy["paired_ci_low"], greedy["paired_ci_high"]) == pytest.approx(overall.paired_interval)
    assert "95% CI (paired)" in result.format_table()


def test_combined_adds_deal_by_deal() -> None:
    a, b = Rate(2, 4, (1.0, 1.0), (2, 2)), Rate(3, 6, (2.0, 0.0, 1.0), (2, 2, 2))
    both = combined([a, b])
    assert (both.wins, both.n, both.deal_wins, both.deal_episodes) == (5, 10, (3.0, 1.0, 1.0), (4, 4, 2))


def test_a_rate_without_deal_totals_says_so() -> None:
    with pytest.raises(ValueError, match=r"no per-deal totals.*Rate\.of_slot"):
        _ = Rate(3, 10).paired_interval
    assert Rate(0, 0).paired_interval == (0.0, 1.0)


@pytest.mark.parametrize(("wins", "n", "z"), [(50, 100, 1.96), (0, 10, 1.96), (7, 7, 2.576), (3.5, 9, 1.0),
                                              (0, 0, 1.96)])
def test_wilson_is_written_once(wins: float, n: int, z: float) -> None:
    assert wilson_interval(wins, n, z) == wilson_rate_interval(wins / n if n else 0.0, n, z)


def test_mean_interval_uses_students_t() -> None:
    mean, _, high = mean_interval([0.4, 0.5])
    assert mean == pytest.approx(0.45) and high - mean == pytest.approx(12.706 * 0.05, abs=1e-3)
    assert high - mean == pytest.approx(t_quantile(1.96, 1) * 0.05)


def test_a_training_evaluation_carries_the_paired_intervals(tmp_path: pathlib.Path) -> None:
    """`evaluate_bot` (every trainer's evaluation) reports what `evaluate` measures, matches included."""
    from cardlab.training.harness.config import load_config
    from cardlab.training.harness.records import evaluate_bot, format_rate, format_results
    from tests.cluster.conftest import make_bot

    bot = make_bot(tmp_path, rules={"target_score": 30})
    cfg = dataclasses.replace(load_config(CONFIGS / "huit_quick.yaml"), rules={"target_score": 30})
    got = evaluate_bot(bot, cfg, "greedy", 20, seed=4, steps=7, matches=2)
    result = evaluate(EvalRequest("huit", [f"bot:{bot}", "greedy"],
                                  hands=20, matches=2, seed=4, rules={"target_score": 30}))
    hands, matches = result.stats[0].hands, result.stats[0].matches
    assert (got.paired_ci_low, got.paired_ci_high) == hands.paired_interval
    assert (got.match_paired_ci_low, got.match_paired_ci_high) == matches.paired_interval
    assert (got.ci_low, got.ci_high) == hands.interval
    low, high = hands.paired_interval
    text = f"[{low:.3f}, {high:.3f}]"
    assert text in format_rate(got) and text in format_results([got])


def test_an_older_eval_csv_gains_the_new_columns(tmp_path: pathlib.Path) -> None:
    """A resumed run whose eval.csv predates the paired columns: rewritten with them, rows kept."""
    from cardlab.training.harness.records import EVAL_FIELDS, EvalHistory, LearnerEval

    path = tmp_path / "eval.csv"
    old_fields = [f for f in EVAL_FIELDS if "paired" not in f]
    path.write_text(",".join(old_fields) + "\n" + ",".join(["512", "random", "10", "0.5", "0.2", "0.8", "3.0"]
                                                        + ["0"] * (len(old_fields) - 7)) + "\n")
    history = EvalHistory(path)
    history.append([LearnerEval(1024, "random", 10, 0.6, 0.3, 0.85, 0.35, 0.8, 2.5)])
    rows = history.rows()
    assert list(rows[0]) == list(EVAL_FIELDS)
    assert (rows[0]["steps"], rows[0]["ci_low"], rows[0]["paired_ci_low"]) == ("512", "0.2", "")
    assert (rows[1]["steps"], rows[1]["paired_ci_low"]) == ("1024", "0.35")
