"""Evaluation and tournaments: seats rotate fairly, results follow the seed, the
statistics are right, and the outputs (table, JSON, CSV, PNG) hold them."""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
import pathlib
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from cardlab.evaluation.episodes import seat_slots
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.results import EvalResult, Rate
from cardlab.evaluation.stats import wilson_interval
from cardlab.evaluation.tournament import TournamentResult, tournament


@pytest.mark.parametrize(("wins", "n", "low", "high"), [
    (5, 10, 0.2366, 0.7634),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (50, 100, 0.4038, 0.5962),
    (1, 3, 0.0615, 0.7923),
])
def test_wilson_interval_known_values(wins: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(wins, n)
    assert got == pytest.approx((low, high), abs=1e-4)
    assert Rate(wins, n).interval == got


def test_seats_rotate_equally_on_shared_deals() -> None:
    result = evaluate(EvalRequest("switch", ["random", "random", "greedy"], hands=30, seed=3))
    assert result.num_players == 3 and len(result.hand_records) == 30
    for slot in range(3):
        assert Counter(r.seats[slot] for r in result.hand_records) == {0: 10, 1: 10, 2: 10}
    # every deal is played once in each rotation, and the seats of a record are a permutation
    assert Counter(r.deal for r in result.hand_records) == {d: 3 for d in range(10)}
    assert all(sorted(r.seats) == [0, 1, 2] for r in result.hand_records)
    # one winner (or a truncation) per hand
    stats = result.stats
    assert sum(s.hands.wins for s in stats) + stats[0].truncated_hands == 30


def test_hands_round_up_to_whole_rotations_and_specs_fill_the_table() -> None:
    result = evaluate(EvalRequest("huit", ["greedy", "random"], hands=10, seed=0, rules={"num_players": 4}))
    assert result.slots == ["greedy", "random", "greedy", "random"]
    assert len(result.hand_records) == 12
    assert [s.hands.n for s in result.stats] == [12] * 4


def test_results_depend_on_the_seed_only() -> None:
    one = evaluate(EvalRequest("huit", ["random", "random"], hands=40, seed=5))
    two = evaluate(EvalRequest("huit", ["random", "random"], hands=40, seed=5))
    other = evaluate(EvalRequest("huit", ["random", "random"], hands=40, seed=6))
    assert one.hand_records == two.hand_records
    assert one.to_json() == two.to_json()
    assert one.hand_records != other.hand_records


def test_wins_are_credited_to_the_right_slot_through_rotations() -> None:
    # If seats and slots were mixed up, the stronger agent would score about 0.5.
    result = evaluate(EvalRequest("huit", ["random", "greedy"], hands=60, seed=1))
    random_stats, greedy_stats = result.stats
    assert greedy_stats.hands.rate > 0.75 > random_stats.hands.rate
    assert greedy_stats.mean_points < random_stats.mean_points


def test_truncated_hands_are_counted_not_won() -> None:
    result = evaluate(EvalRequest("switch", ["random", "random"], hands=4, seed=0, rules={"max_turns": 2}))
    for s in result.stats:
        assert (s.hands.wins, s.truncated_hands, s.hands.rate) == (0, 4, 0.0)
        assert math.isnan(s.mean_points)
    assert json.loads(result.to_json())["agents"][0]["mean_points"] is None


def test_matches_to_the_target_score() -> None:
    result = evaluate(EvalRequest("huit", ["greedy", "random"],
                                  hands=2, matches=6, seed=2, rules={"target_score": 30}))
    assert len(result.match_records) == 6
    assert all(r.points[w] == min(r.points) for r in result.match_records for w in r.winners)
    stats = result.stats
    assert sum(s.matches.wins for s in stats) + stats[0].truncated_matches == pytest.approx(6)
    assert "matches to 30" in result.format_table()


def test_outputs(tmp_path: pathlib.Path) -> None:
    result = evaluate(EvalRequest("switch", ["random", "greedy"],
                                  hands=8, matches=2, seed=0, rules={"target_score": 60}))
    table = result.format_table()
    assert "0     random" in table and "1     greedy" in table and "95% CI" in table and "match rate" in table
    data = json.loads(result.to_json())
    assert data["game"] == "switch" and data["rules"]["target_score"] == 60 and data["hands"] == 8
    assert [a["agent"] for a in data["agents"]] == ["random", "greedy"]
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert [int(r["hand_wins"]) for r in rows] == [s.hands.wins for s in result.stats]
    assert float(rows[1]["hand_ci_high"]) == pytest.approx(result.stats[1].hands.interval[1])
    png = result.plot(tmp_path / "eval.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"agents": ["random"] * 3, "rules": {"num_players": 2}},
     r"3 agents given \(random, random, random\) for 2 seats \(num_players=2\): give 1 to 2"),
    # Without num_players each agent takes a seat: the count is checked against the game's, not num_players.
    ({"agents": ["random"]}, r"1 agent given \(random\), but Huit américain seats 2 to 6 players: "
                                  "give 2 to 6 agents, or set the rule option num_players=N"),
    ({"agents": ["random"] * 7}, "7 agents given .* seats 2 to 6 players"),
    ({"hands": 0, "matches": 0}, "nothing to play"),
    ({"hands": -1}, "hands must be a whole number >= 0"),
    ({"seed": -3}, r"^seed=-3 is out of range; accepted: a whole number >= 0 \(of any size\)$"),
    ({"rules": {"episode": "match"}}, "episode: env option"),
    ({"rules": {"colour": 1}}, "unknown rule option"),
    ({"agents": ["random", "nobody"]}, "unknown agent spec 'nobody'"),
    ({"game": "chess"}, "unknown game 'chess'"),
])
def test_evaluate_refuses_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"game": "huit", "agents": ["random", "random"], "hands": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        evaluate(EvalRequest(**args))


def this_line() -> int:
    """The line that calls this."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def test_the_old_parameter_list_still_plays_the_same_hands_with_a_deprecation_warning() -> None:
    """The form of before (game, specs, hands, seed=, rule_options=, ...) works for one version: it warns
    and names the new form, and plays the request's records."""
    new = evaluate(EvalRequest("huit", ["greedy", "random"], hands=8, matches=2, seed=3,
                               rules={"target_score": 30}))
    old_form: Callable[..., EvalResult] = evaluate  # the old parameter list, declared by no signature
    with pytest.warns(DeprecationWarning, match=r"pass an EvalRequest") as seen:
        old = old_form("huit", ["greedy", "random"], 8, 3, rule_options={"target_score": 30}, matches=2)
        line = this_line() - 1
    assert old.hand_records == new.hand_records and old.match_records == new.match_records
    assert [(w.filename, w.lineno) for w in seen] == [(__file__, line)]  # the caller's line
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="got agent_specs twice"):
        old_form("huit", ["random"], agent_specs=["random"], hands=2)


def test_a_request_is_checked_when_it_is_made() -> None:
    """A bad count or seed is refused by the request itself, before anything plays; agents is a list."""
    bad: tuple[tuple[dict[str, Any], str], ...] = (({"hands": True}, "hands must be a whole number"),
                            ({"seed": 1.5}, r"^seed=1.5 is of the wrong type; accepted: a whole number >= 0"),
                            ({"agents": "random"}, "agents must be a list of agent specs"))
    for fields, message in bad:
        with pytest.raises(ValueError, match=message):
            EvalRequest(**{"game": "huit", "agents": ["random"] * 2, "hands": 2, **fields})


def test_seat_slots() -> None:
    assert seat_slots(["a", "b"], 5) == ["a", "b", "a", "b", "a"]
    with pytest.raises(ValueError, match="at least one agent spec"):
        seat_slots([], 2)


# ---------------------------------------------------------------- tournaments
def test_two_player_round_robin(tmp_path: pathlib.Path) -> None:
    specs = ["random", "greedy", "expert"]
    result = tournament(EvalRequest("switch", specs, hands=30, seed=0))
    assert len(result.cells) == 3 and all(len(row) == 3 for row in result.cells)
    for i in range(3):
        assert result.cells[i][i] is None
        for j in range(3):
            if i != j:
                cell, mirror = result.cells[i][j], result.cells[j][i]
                assert cell is not None and mirror is not None
                assert cell.n == 30 and cell.wins + mirror.wins <= 30
    assert [r.spec for r in result.ratings] == specs
    assert all(r.sigma < 25 / 3 for r in result.ratings)  # every agent's rating moved from the prior
    assert result.ranking()[-1] == 0  # random is last
    table = result.format_table()
    assert "head to head" in table and "TrueSkill" in table and "mu-3sigma" in table
    data = json.loads(result.to_json())
    assert data["cross_table"][0][0] is None and len(data["pairs"]) == 6 and len(data["ratings"]) == 3
    assert len(list(csv.DictReader(io.StringIO(result.to_csv())))) == 6
    assert result.plot(tmp_path / "heat.png").read_bytes()[:4] == b"\x89PNG"


def test_more_players_play_one_against_copies() -> None:
    three = {"num_players": 3}
    result = tournament(EvalRequest("switch", ["random", "greedy"], hands=6, seed=0, rules=three))
    assert result.num_players == 3
    one, copies = result.cells[0][1], result.cells[1][0]
    assert one is not None and copies is not None and one.n == 6 and copies.n == 6
    assert "1 vs 2 copies" in result.format_table()


def test_tournament_is_deterministic_and_refuses_bad_fields() -> None:
    request = EvalRequest("huit", ["random", "greedy"], hands=10, seed=4)
    a, b = tournament(request), tournament(request)
    assert a.to_json() == b.to_json()
    with pytest.raises(ValueError, match="at least 2 agents"):
        tournament(EvalRequest("huit", ["random"], hands=4))
    with pytest.raises(ValueError, match=r"repeated: \['random'\]"):
        tournament(EvalRequest("huit", ["random", "greedy", "random"], hands=4))
    with pytest.raises(ValueError, match="a tournament plays hands: give hands >= 1 per pairing and no "):
        tournament(EvalRequest("huit", ["random", "greedy"], hands=4, matches=2))


def test_the_tournament_s_old_parameter_list_still_plays_the_same_hands_with_a_deprecation_warning() -> None:
    """``tournament(game, specs, hands_per_pair, seed, rule_options)`` works for one version, through the
    one legacy helper (`cardlab.evaluation.request.old_form`): it warns at the caller's line, plays the
    same."""
    new = tournament(EvalRequest("switch", ["random", "greedy"], hands=6, seed=2, rules={"num_players": 3}))
    old_form: Callable[..., TournamentResult] = tournament  # the old parameter list, declared by no signature
    with pytest.warns(DeprecationWarning, match=r"tournament\(game, agent_specs, hands, \.\.\.\) is") as seen:
        old = old_form("switch", ["random", "greedy"], 6, 2, rule_options={"num_players": 3})
        line = this_line() - 1
    assert old.to_json() == new.to_json()
    assert [(w.filename, w.lineno) for w in seen] == [(__file__, line)]
    with pytest.raises(TypeError, match="tournament takes a request and keyword options, got 1 more"):
        old_form(EvalRequest("switch", ["random", "greedy"], hands=6), True)
