"""``search:points_weight=W``: with ``value=win`` a play-out is worth its win reward plus W times minus the
seat's points over 100 (B11), so that the points held break the ties of the worlds where the hand is lost
anyway; at its default 0 the value is the win reward exactly as before."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent, make_search_agent
from cardlab.agents.rollouts import seat_values
from cardlab.agents.search_options import ACCEPTED, SearchOptions, options_markdown, parse_spec
from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import KIND, RANGE
from tests.agents.test_search import position, view
from tests.agents.test_search_match import Finished

POINTS = {"AH": 11, "KH": 4}
"""B11: what each card left in seat 0's hand scores"""


def lost_hand() -> Any:
    """Huit 2p, seat 0 to move on 10H with KH and AH; seat 1 holds only 8C, which it may lay on anything (B6,
    on an Ace too: B7) and go out. Whichever heart seat 0 lays, seat 1 goes out next: the hand is lost
    either way (win reward -1, B11), and seat 0 is left holding the other heart: AH (11) after KH, KH (4)
    after AH. Only the points tell the two lays apart."""
    game = make_game("huit", num_players=2)
    return game, position(game, [["KH", "AH"], ["8C"]], "10H")


def decided(spec: str) -> dict[str, float]:
    """Each candidate's mean value in the lost hand, searched with the true other hand (``cheat=1``)."""
    game, state = lost_hand()
    agent = make_search_agent(spec, game, seed=0)
    agent.show({"state": state})
    agent.act(view(game, state))
    decision = agent.last_decision
    assert decision is not None and decision.worlds == 16
    return {game.action_to_str(int(c)): float(v) for c, v in zip(decision.candidates, decision.values,
                                                                 strict=True)}


@pytest.mark.parametrize("weight", [0.5, 2.0])
def test_a_lost_play_out_is_worth_its_loss_plus_the_weight_times_the_points_left(weight: float) -> None:
    values = decided(f"search:worlds=16:ms=0:cheat=1:z=0:points_weight={weight}:expert")
    assert values["play KH"] == pytest.approx(-1.0 - weight * POINTS["AH"] / 100)
    assert values["play AH"] == pytest.approx(-1.0 - weight * POINTS["KH"] / 100)


def test_without_a_weight_both_lays_are_the_same_loss_and_the_weight_picks_the_one_that_holds_less() -> None:
    game, state = lost_hand()
    plain = decided("search:worlds=16:ms=0:cheat=1:expert")
    assert plain["play KH"] == plain["play AH"] == -1.0  # the win reward alone: a loss either way
    agent = make_agent("search:worlds=16:ms=0:cheat=1:points_weight=1:expert", game, seed=0)
    agent.show({"state": state})
    assert game.action_to_str(agent.act(view(game, state))) == "play AH"


def test_at_its_default_the_win_value_is_the_win_reward_as_it_was() -> None:
    """Weight 0 returns the win rewards themselves (the same values and type), whatever the points, and a
    search written with ``points_weight=0`` is the default search."""
    engine = Finished([[0, 30], [25, 0], [9, 0], [0, 0]], [True, True, True, False])
    rows, wins = np.arange(4).reshape(2, 2), np.array([1.0, -1.0, -1.0, 0.0])
    got = seat_values("win")(engine, rows, wins)
    assert got.dtype == wins.dtype and np.array_equal(got, wins[rows])
    weighed = seat_values("win", 0.5)(engine, rows, wins)  # a cut hand (C1, not done) adds no points
    assert np.array_equal(weighed, np.array([[1.0, -1.125], [-1.045, 0.0]]))
    assert parse_spec("search:points_weight=0:expert") == parse_spec("search:expert")


@pytest.mark.parametrize(("value", "problem"), [(-0.5, RANGE), (101.0, RANGE), ("lots", KIND),
                                                (math.nan, RANGE), (math.inf, RANGE), (-math.inf, RANGE),
                                                (True, KIND)])
def test_a_bad_weight_is_refused_in_one_line_by_its_declaration(value: Any, problem: str) -> None:
    with pytest.raises(ValueError) as info:
        SearchOptions(points_weight=value)
    shape = (rf"^search option points_weight={re.escape(excerpt(value))} is {problem}; accepted: a number "
             r"from 0 to 100$")
    assert re.match(shape, str(info.value)), str(info.value)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e3", "+1", "0x1", "1_0", "ten", "0.5.5",
                                  "\uff11"])
def test_a_weight_written_other_than_in_plain_digits_is_refused_in_one_line(text: str) -> None:
    """NaN, infinities, exponents, signs, separators and other scripts' digits never reach the weight."""
    with pytest.raises(ValueError) as info:
        parse_spec(f"search:points_weight={text}:worlds=4:ms=0:expert")
    assert str(info.value).endswith(f"search option points_weight={text!r} is of the wrong type; accepted: a "
                                    "number from 0 to 100, in the digits 0-9"), str(info.value)
    assert "\n" not in str(info.value)


def test_a_weight_beside_another_value_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError) as info:
        parse_spec("search:value=match:points_weight=1:expert")
    assert "\n" not in str(info.value)
    assert str(info.value).endswith("search option points_weight=1.0 is read only with value=win, not "
                                    "value=match; accepted: points_weight beside one of them, or none")


def test_the_weight_is_listed_and_documented() -> None:
    assert "points_weight=0..100" in ACCEPTED
    assert "| `points_weight` | 0 | 0..100 |" in options_markdown()
