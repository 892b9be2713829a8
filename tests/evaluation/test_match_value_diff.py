"""`benchmarks/match_value_diff.py`: two searches asked at the same decisions of Huit matches, one seed."""

from __future__ import annotations

import itertools
import json
import pathlib

import pytest

from cardlab.envs import cards as C
from cardlab.envs import make_game
from cardlab.envs.huit import rules as R
from tests.benchmarks import load_benchmark

CHEAP = "search:value=points:worlds=4:ms=0:expert"


def test_moves_are_named_by_kind_and_card_points_by_b11(monkeypatch: pytest.MonkeyPatch) -> None:
    diff = load_benchmark("match_value_diff", monkeypatch)
    game = make_game("huit", num_players=4)
    eights = next(a for a in range(R.NUM_ACTIONS) if R.ACTION_RANK[a] == C.EIGHT and R.ACTION_SIZE[a] == 1)
    aces = next(a for a in range(R.NUM_ACTIONS) if R.ACTION_RANK[a] == C.ACE and R.ACTION_SIZE[a] == 2)
    assert (diff.move_kind(game, eights), diff.points_laid(game, eights)) == ("8s", 32)  # B11: 8 = 32
    assert (diff.move_kind(game, aces), diff.points_laid(game, aces)) == ("Ace x2", 22)  # A = 11
    assert (diff.move_kind(game, R.DRAW), diff.points_laid(game, R.DRAW)) == ("draw", 0)
    assert diff.move_kind(game, R.PASS) == "pass"
    assert [diff.standing(s) for s in ([3, 9, 5], [9, 3, 5], [5, 3, 9], [0, 0, 0])] == [
        "leads", "trails", "between or level", "between or level"]  # the lowest total wins (B13)
    assert [diff.band(s) for s in ([0, 74], [75, 3], [3, 150])] == [
        "highest total 0-74", "highest total 75-119", "highest total 120-150"]


def test_one_search_asked_twice_from_the_same_seed_never_differs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both searches are seeded alike at each decision, so two copies of one search play the same move:
    a comparer that let their generators drift apart would show differences here."""
    diff = load_benchmark("match_value_diff", monkeypatch)
    out = tmp_path / "diff.json"
    diff.main(["--matches", "1", "--configs", CHEAP, CHEAP, "--json", str(out)])
    decisions = json.loads(out.read_text(encoding="utf-8"))["decisions"]
    assert len(decisions) > 10 and all(d["legal"] > 1 for d in decisions)
    assert all(d["moves"][0] == d["moves"][1] and d["values"][0] == d["values"][1] for d in decisions)
    assert [d["hand"] for d in decisions] == sorted(d["hand"] for d in decisions)
    hands = [d["hand"] for d in decisions]
    assert hands[0] == 1 and hands[-1] > 3 and decisions[-1]["last"]  # seat 0 decides in the last hand
    assert all(d["last"] == (d["hand"] == hands[-1]) for d in decisions)
    for before, after in itertools.pairwise(decisions):  # the totals move when, and only when, a hand ends
        assert (before["hand"] == after["hand"]) == (before["scores"] == after["scores"])
    assert decisions[0]["scores"] == [0, 0, 0, 0] and len({tuple(d["scores"]) for d in decisions}) > 1
    table = capsys.readouterr().out
    assert f"{len(decisions)} decisions with a choice" in table
    row = next(line for line in table.splitlines() if line.startswith("all decisions"))
    assert row.split()[-3:] == [str(len(decisions)), "0", "0.000"]


def test_bad_arguments_are_refused_in_one_line_before_any_match(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A suite that is not of Huit matches, a count past the suite, a spec or suite that does not exist, and a
    --json the end could not write (a missing folder, a folder): each refused before a match is played."""
    diff = load_benchmark("match_value_diff", monkeypatch)
    monkeypatch.setattr(diff, "run_episode", lambda *args, **kwargs: pytest.fail("a match was played"))
    missing = tmp_path / "no" / "diff.json"
    cheap = ["--matches", "1", "--configs", CHEAP, CHEAP]
    for argv, said in ((["--suite", "huit-4p"], "give a Huit match suite (huit-Np-match); this one is huit, "
                                                "hands"),
                       (["--suite", "switch-4p-match"], "give a Huit match suite"),
                       (["--suite", "nowhere"], "unknown suite(s) nowhere; accepted: huit-2p"),
                       (["--matches", "0"], "--matches must be 1 to 500 (the suite's deals), got 0"),
                       (["--configs", CHEAP, "nobody"], "unknown agent spec 'nobody' for huit: use random"),
                       (["--field", "nobody", "--matches", "1"], "unknown agent spec 'nobody'"),
                       ([*cheap, "--json", str(missing)],
                        f"cannot write --json {missing}: the folder {missing.parent} does not exist"),
                       ([*cheap, "--json", str(tmp_path)],
                        f"--json {tmp_path} is a folder: give the name of a file to write")):
        with pytest.raises(SystemExit):
            diff.main(argv)
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert ": error: " in error and said in error, (argv, error)
