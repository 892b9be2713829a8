"""`cardlab compare A B`: it decides for the stronger agent, not between equals, and stops when it knows."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

from cardlab.cli import COMMANDS, main
from cardlab.evaluation.compare import Contest, compare_agents
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.paired import deal_totals
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.sequential import Hypotheses, compare

from .test_cli import fail


def test_expert_against_random_decides_a_quickly_through_a_real_process(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, "-m", "cardlab", "compare", "--game", "huit", "expert", "random",
                           "--json", str(out)], capture_output=True, text=True, timeout=240, check=True)
    data = json.loads(out.read_text())
    assert data["decision"] == "A" and data["hands"] < 1000
    assert data["llr"] >= data["bounds"][1] and data["bounds"][0] < 0 < data["bounds"][1]
    assert data["paired_ci_low"] <= data["score"] <= data["paired_ci_high"] and data["paired_ci_low"] > 0.5
    lines = done.stdout.splitlines()
    assert lines[1].startswith(f"{data['hands']} hands (")
    assert "A stronger? " in lines[1] and "B stronger? " in lines[1] and "(LLR " in lines[1]
    assert lines[-3].startswith(f"decision: A after {data['hands']} hands") and lines[-1] == f"wrote {out}"
    assert lines[-2].startswith("what it means: A's LLR is +") and lines[-2].endswith("so A is stronger")


def test_an_agent_against_itself_decides_no_side(tmp_path: pathlib.Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "self.json"
    assert main(["compare", "--game", "huit", "greedy", "greedy", "--max-hands", "300", "--batch", "25",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["decision"] in ("undecided", "equal") and data["hands"] <= 300
    lines = capsys.readouterr().out.splitlines()
    progress = [line for line in lines if " hands (" in line]
    assert [int(line.split()[0]) for line in progress] == list(range(50, data["hands"] + 1, 50))
    assert lines[-2].startswith("what it means: A's LLR is ") and "log-likelihood ratio" in lines[-2]


def test_an_undecided_comparison_says_what_its_numbers_mean() -> None:
    from cardlab.evaluation.sequential import Comparison

    c = Comparison("undecided", -3.19, 0.5, -2.94, 2.94, 10, 20, 0.4)
    text = c.meaning()
    assert "A's LLR is -3.19 and B's +0.50" in text and "bounds [-2.94, 2.94]" in text
    assert "the two are even once both are at the lower bound or below" in text
    assert text.endswith("to decide, raise --max-hands and play on")
    assert Comparison("A", 3.0, -1.0, -2.94, 2.94, 10, 20, 0.7).meaning().endswith("so A is stronger")


def test_the_weaker_agent_as_a_decides_b() -> None:
    contest = Contest.seat("huit", "random", "expert", seed=2)
    result = compare_agents(contest, Hypotheses.from_delta(0.05), batch=10)
    assert result.comparison.decision == "B" and result.comparison.score < 0.5


def test_it_stops_at_the_first_batch_that_decides() -> None:
    """The batch before the last was undecided; the records are `evaluate`'s of the same seed and table."""
    hypotheses = Hypotheses.from_delta(0.03)
    seen: list[str] = []
    result = compare_agents(Contest.seat("huit", "expert", "greedy", seed=1), hypotheses, batch=5,
                            on_batch=lambda r: seen.append(r.comparison.decision))
    assert seen[-1] == "A" and set(seen[:-1]) == {"undecided"}
    before = deal_totals(result.records[:-10], 0)
    assert compare(*before, hypotheses).decision == "undecided"
    assert result.records == evaluate(EvalRequest("huit", ["expert", "greedy"],
                                                  hands=len(result.records), seed=1)).hand_records


def test_four_players_a_against_three_copies_of_b() -> None:
    contest = Contest.seat("switch", "expert", "random", players=4, seed=0)
    assert contest.slots == ["expert", "random", "random", "random"]
    result = compare_agents(contest, Hypotheses.from_delta(0.05, fair=0.25), max_hands=400, batch=10)
    assert result.comparison.decision == "A" and result.hypotheses.fair == 0.25
    with pytest.raises(ValueError, match=r"fair share at 4 players is 0\.250"):
        compare_agents(contest, Hypotheses.from_delta(0.05))


@pytest.mark.parametrize(("argv", "message"), [
    (["--players", "4", "--elo1", "20"], "--elo0/--elo1 are for 2 players"),
    (["--elo0", "5"], "--elo0 needs --elo1"),
    (["--delta", "0"], "--delta 0.0: give a number other than 0"),
    (["--delta", "0.6"], "--delta 0.6: give a number other than 0 with 0 < 1/2 \\+ delta < 1"),
    (["--players", "3", "--rule", "num_players=4"], "3 players asked for, but .* num_players is 4"),
    (["--max-hands", "1"], "max_hands must be a whole number >= 2"),
    (["--json", "/no/such/folder/x.json"], "the folder /no/such/folder does not exist"),
])
def test_bad_input_is_refused_before_play(argv: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    line = fail(["compare", "--game", "huit", "expert", "random", *argv], capsys)
    assert re.search(message, line), line


def test_a_bad_agent_spec_is_refused_before_the_header(capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped B is the one-line unknown-spec error, with nothing printed to stdout before it."""
    assert main(["compare", "--game", "huit", "expert", "greedyy"]) == 2
    said = capsys.readouterr()
    assert said.out == "", said.out
    assert len(said.err.strip().splitlines()) == 1, said.err
    expected = r"unknown agent spec 'greedyy' for huit: use random, (.*, )?greedy, expert"
    assert re.search(expected, said.err), said.err


def test_the_help_says_who_sits_where(capsys: pytest.CaptureFixture[str]) -> None:
    assert "compare" in COMMANDS
    assert main(["compare", "--help"]) == 0
    text = capsys.readouterr().out
    assert "A plays in one seat and B in every other seat" in text and "--max-hands" in text


def test_a_progress_line_says_which_test_has_answered_and_why_play_goes_on() -> None:
    """The newcomer's puzzle: "LLR A -3.02 ... bounds [-2.94, 2.94]: undecided" read as a decision missed."""
    from cardlab.evaluation.sequential import Comparison

    line = Comparison("undecided", -3.02, -1.0, -2.94, 2.94, 1900, 950, 0.47).progress()
    assert ("A stronger? no (LLR -3.02 <= -2.94), B stronger? open (LLR -1.00); play goes on until B's test "
            "closes too: undecided") in line
    decided = Comparison("A", 3.0, -1.0, -2.94, 2.94, 10, 20, 0.7)
    assert "A stronger? yes (LLR +3.00 >= 2.94)" in decided.progress()
    assert "--max-hands were played first (one test may already say no" in main_help()


def main_help() -> str:
    from cardlab.cli.compare import DESCRIPTION

    return DESCRIPTION
