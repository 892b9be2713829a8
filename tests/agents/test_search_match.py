"""``search:value=match``: a play-out is worth the seat's chance to win the match once the hand's points are
added to the totals, so in a hand that ends the match the search plays for the match, not the hand (B13); the
equity is the table's shipped one, or the fitted file ``equity=`` names."""

from __future__ import annotations

import itertools
import json
import pathlib
import re
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent, make_search_agent
from cardlab.agents.match_equity import SHIPPED, equity_at, shipped_equity
from cardlab.envs import make_game
from cardlab.envs.match import Match
from tests.agents.test_search import PLAIN, view

HANDS = [["AS", "AH"], ["JC"], ["KD", "QD"], ["KC", "QC"]]
PILE = ["8C", "8D", "8H", "8S", "AC", "AD"]
"""every 8 and the other Aces played already: nobody else can answer an Ace (B6, B7)"""
SCORES = [100, 97, 120, 150]


def last_hand() -> Any:
    """Huit 4p, seat 0 to move with two Aces on an Ace; seat 3 at 150 holds points: the hand ends the match.

    Laying both Aces goes out now: seat 1 scores its Jack (97 + 2 = 99) and wins the match below seat 0's
    100. Laying one Ace makes seat 1 draw 2 (B7; no card left can answer it), the others draw and pass, and
    seat 0 goes out with the other Ace next turn: seat 1 ends on 103 or more, and seat 0 wins the match.
    Both win the hand and score 0: only the match tells them apart.
    """
    game = make_game("huit", num_players=4)
    saved = game.new_state(np.random.default_rng(0)).state_dict()
    deck = [*saved["bank"], *saved["table"], *itertools.chain.from_iterable(saved["hands"])]
    for card in [*PILE, *itertools.chain.from_iterable(HANDS)]:
        deck.remove(card)
    saved.update({"hands": HANDS, "table": PILE, "bank": deck, "left_out": [], "current_player": 0,
                  "current_suit": "D", "scores": SCORES, "dealer": 3, **PLAIN["huit"]})
    return game.restore(saved)


def test_value_match_plays_the_move_the_finished_match_result_says() -> None:
    state = last_hand()
    game = make_game("huit", num_players=4)
    moves = {game.action_to_str(a): int(a) for a in state.legal_actions()}
    for value, wanted in [("match", "play AS"), ("win", "play AH AS"), ("points", "play AH AS")]:
        agent = make_search_agent(f"search:worlds=16:ms=0:cheat=1:value={value}:expert", game, seed=0)
        agent.show({"state": state})
        move = agent.act(view(game, state))
        decision = agent.last_decision
        assert decision is not None
        values = {game.action_to_str(int(c)): float(v) for c, v in zip(decision.candidates, decision.values,
                                                                       strict=True)}
        assert game.action_to_str(decision.base) == "play AH AS"  # the expert goes out at once
        assert move == moves[wanted], (value, values)
        if value == "match":  # the finished matches' results, exactly: lost going out now, won a turn later
            assert values["play AH AS"] == values["play AS AH"] == 0.0
            assert values["play AS"] == values["play AH"] == 1.0


class Finished:
    """A rollout engine's end of hand as `after_hand` reads it: done slots and score changes."""

    def __init__(self, changes: list[list[int]], done: list[bool]) -> None:
        self.changes = np.array(changes)
        self.done = np.array(done)

    def score_changes(self) -> np.ndarray:
        return self.changes


def test_a_play_out_is_worth_the_equity_after_its_points_streak_and_deal() -> None:
    """The hand's changes (B12's bonus among them) join the totals, the winner's streak grows or restarts,
    the dealer moves on (B3), a cut hand (C1) changes nothing; a total past the target ends the match."""
    game = make_game("huit", num_players=4)
    model = shipped_equity(game)
    match = Match(4, [10, 40, 60, 140], dealer=1, streaks=[2, 0, 1, 0])
    engine = Finished([[-10, 20, 5, 7], [9, 0, 4, 30], [0, 0, 0, 0], [3, 0, 8, 6]], [True, True, False, True])
    rows = np.arange(4).reshape(2, 2)
    got = model.after_hand(match)(engine, rows, np.zeros(4))
    assert got.shape == (2, 2)
    expected = [
        model.equity(np.array([[0, 60, 65, 147]]), np.array([2]), np.array([[0, 0, 0, 0]]))[0, 0],
        model.equity(np.array([[19, 40, 64, 170]]), np.array([2]))[0, 0],  # over: seat 0 (19) wins
        model.equity(np.array([[10, 40, 60, 140]]), np.array([2]), np.array([[0, 0, 0, 0]]))[0, 0],
        model.equity(np.array([[13, 40, 68, 146]]), np.array([2]), np.array([[0, 1, 0, 0]]))[0, 0],
    ]
    assert got.ravel() == pytest.approx(expected)
    assert expected[1] == 1.0


@pytest.mark.parametrize(("table", "why"), [
    ({"num_players": 3}, r"no match equity ships for switch with 3 players \(equity models: .*switch-4p.*\); "
                         r"fit one with cardlab match-equity and name its RUN/equity.json"),
    ({"num_players": 4, "target_score": 100},
     r"match equity .*switch-4p.json: it was fitted under other rules: target_score=500 \(table: 100\)"),
])
def test_value_match_needs_a_table_with_an_equity(table: dict[str, int], why: str) -> None:
    """The refusal names the option, why the table has no equity (none ships, or it is of other rules) and
    the values that play there, in one line."""
    with pytest.raises(ValueError, match=rf"^search option value='match' "
                                         rf"is not playable at this table: {why}.*; accepted: value=win or "
                                         r"value=points here, or value=match beside equity=PATH, a fitted "
                                         r"equity of these rules$") as err:
        make_agent("search:value=match:expert", make_game("switch", table))
    assert "\n" not in str(err.value)


def _fitted_for(tmp_path: pathlib.Path, **rules: int) -> pathlib.Path:
    """The shipped Huit 4p equity as a user's fit for other rules would be written (its weights kept)."""
    data = json.loads((SHIPPED / "huit-4p.json").read_text())
    data["rules"].update(rules)
    path = tmp_path / "runs" / "equity_200__1__20260101-000000" / "equity.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path


def test_equity_names_a_fitted_file_that_value_match_reads(tmp_path: pathlib.Path) -> None:
    """At a table of other rules the shipped equity is refused; ``equity=RUN/equity.json`` of a fit for them
    plays, its target the table's."""
    game = make_game("huit", {"num_players": 4, "target_score": 200})
    path = _fitted_for(tmp_path, target_score=200)
    agent = make_search_agent(f"search:value=match:equity={path}:worlds=4:ms=0:expert", game, seed=0)
    assert agent.equity is not None and agent.equity.target == 200
    assert agent.equity is equity_at(path, game)
    with pytest.raises(ValueError, match=r"^search option value='match' is not playable at this table: match "
                                         r"equity .*huit-4p.json: it was fitted under other rules: "
                                         r"target_score=151 \(table: 200\)"):
        make_agent("search:value=match:worlds=4:ms=0:expert", game)


def test_equity_of_other_rules_or_beside_another_value_is_refused_in_one_line(tmp_path: pathlib.Path) -> None:
    game = make_game("huit", {"num_players": 4})
    path = _fitted_for(tmp_path, target_score=200)
    refused = (rf"^match equity {re.escape(str(path))}: it was fitted under other rules: target_score=200 "
               r"\(table: 151\); use it at a table of those rules, or fit one for these")
    with pytest.raises(ValueError, match=refused) as err:
        make_agent(f"search:value=match:equity={path}:worlds=4:ms=0:expert", game)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"search option equity='.*equity.json' is read only with "
                                         r"value=match, not value=win; accepted: equity beside one of them, "
                                         r"or none$"):
        make_agent(f"search:equity={path}:worlds=4:ms=0:expert", game)
