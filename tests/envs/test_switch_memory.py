"""The memory of the hand in Switch: `drew_on`, kept by the engine, shown with the `memory` option.

A seat that draws of its own accord (A8: in Switch only when it cannot play,
unless `voluntary_draw`) with suit s current shows that it held no card of s;
laying a card of suit s clears that. Drawing a run of 2s and Jokers (A6) is a
penalty, a Joker has no suit (A5), a new hand (A3) forgets everything. With the
default stacked deal the dealer is seat 3, so seat 0 plays first and play goes
0, 1, 2, 3.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.envs import switch_v1
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.rules import SwitchRules, SwitchState, str_to_action
from tests.envs.helpers import dealt, obs_parts, play_all

SUIT_BIT = {"S": 1, "H": 2, "D": 4, "C": 8}


def table(hands: Sequence[Sequence[str]], starter: str = "7H", stock: Sequence[str] = (),
          **options: Any) -> AECEnv:
    """A 4-player Switch env with the memory shown, reset to a stacked deal (stock top card first)."""
    deal = {"hands": [list(h) for h in hands], "stock": list(stock), "starter": starter}
    return dealt(switch_v1.env, deal, num_players=len(hands), memory=True, **options)


def drew_on(env: AECEnv) -> list[int]:
    """The engine's suit masks, seat by seat."""
    return list(env.unwrapped.game_state.drew_on)


def seen(env: AECEnv, viewer: int, seat: int) -> list[float]:
    """The 4 values (S H D C) of `seat` in the drew_on field of `viewer`'s observation."""
    n = env.unwrapped.num_agents
    offset = ((seat - viewer) % n - 1) * 4
    return obs_parts(env, f"player_{viewer}")["drew_on"][offset:offset + 4].tolist()


def test_A8_a_draw_without_a_play_marks_the_current_suit_seen_by_every_other_seat() -> None:
    """A8: seat 0 holds no heart and no 7 on 7H, draws: its hearts bit is set, at its place in each view."""
    env = table([["3S", "4S"], ["5H"], ["6H"], ["9H"]], stock=["QC", "KC"])
    play_all(env, ["draw"])  # QC cannot be played: the turn ends
    assert drew_on(env) == [SUIT_BIT["H"], 0, 0, 0]
    for viewer in (1, 2, 3):
        assert seen(env, viewer, 0) == [0, 1, 0, 0]
        assert sum(obs_parts(env, f"player_{viewer}")["drew_on"]) == 1  # no other seat marked
    assert obs_parts(env, "player_3")["drew_on"][:4].tolist() == [0, 1, 0, 0]  # seat 0 is seat 3's me+1


def test_A8_laying_a_card_of_the_suit_clears_it_another_suit_does_not() -> None:
    """Seat 0 draws on hearts twice; it lays a spade (hearts stay marked), then the drawn 4H (cleared)."""
    env = table([["3S", "4S", "AS"], ["5H", "8C"], ["6H", "9D"], ["9H", "3D"]], stock=["QC", "4H", "KC"])
    play_all(env, ["draw", "play 5H", "play 6H", "play 9H"])
    assert drew_on(env) == [SUIT_BIT["H"], 0, 0, 0]
    play_all(env, ["draw"])  # 4H can be played at once (A8): hearts are still marked
    assert drew_on(env) == [SUIT_BIT["H"], 0, 0, 0]
    play_all(env, ["play 4H"])
    assert drew_on(env) == [0, 0, 0, 0]
    assert seen(env, 1, 0) == [0, 0, 0, 0]


def test_A8_a_seat_marks_each_suit_it_drew_on_and_laying_another_suit_keeps_them() -> None:
    """Draws on hearts, then on clubs set two bits; laying a spade then clears neither."""
    env = table([["3S", "4S"], ["5H", "QC", "4D"], ["5C", "QS", "4D"], ["9C", "10S", "4D"]],
                stock=["AD", "6D", "KD"])
    play_all(env, ["draw", "play 5H", "play 5C", "play 9C", "draw"])  # AD, then 6D: neither can be played
    assert drew_on(env) == [SUIT_BIT["H"] | SUIT_BIT["C"], 0, 0, 0]
    assert seen(env, 2, 0) == [0, 1, 0, 1]
    play_all(env, ["play QC", "play QS", "play 10S", "play 3S"])
    assert drew_on(env) == [SUIT_BIT["H"] | SUIT_BIT["C"], 0, 0, 0]


def test_A6_drawing_a_run_is_a_penalty_and_marks_nothing() -> None:
    """A6: seat 0, without a 2 or a Joker, draws the starter's run of 2: no suit marked."""
    env = table([["3S", "4S"], ["5H"], ["6H"], ["9H"]], starter="2H", stock=["QC", "KC", "AC"])
    play_all(env, ["draw"])
    assert env.unwrapped.state_dict()["pending_draw"] == 0
    assert drew_on(env) == [0, 0, 0, 0]


def test_A4_a_draw_while_the_suit_is_free_marks_nothing() -> None:
    """A4: after a Joker starter's run is drawn the suit is free: a voluntary draw has no suit to mark."""
    env = table([["3S", "4S"], ["5H", "6D"], ["6H"], ["9H"]], starter="JOKER",
                stock=["QC", "KC", "AC", "2C", "3C", "4C", "5C"], voluntary_draw=True)
    play_all(env, ["draw", "draw"])  # seat 0 draws the run of 5, seat 1 draws of its own accord
    assert env.unwrapped.state_dict()["current_suit"] is None
    assert drew_on(env) == [0, 0, 0, 0]


def test_A5_a_joker_has_no_suit_and_clears_nothing_a_jack_clears_its_own_suit() -> None:
    """A5: the Joker keeps the marks; a Jack clears the suit printed on it, not the one it declares."""
    env = table([["3S", "JS", "JOKER", "JH"], ["5H", "4H"], ["6H", "3H", "QH", "4D"],
                 ["9H", "10H", "5H", "4D"]],
                stock=["QC", "KC", "AC", "3C", "4C", "6C"], voluntary_draw=True)
    play_all(env, ["draw", "play 5H", "play 6H", "play 9H"])  # a voluntary draw is of its own accord too
    assert drew_on(env)[0] == SUIT_BIT["H"]
    play_all(env, ["play JOKER", "draw", "play 3H", "play 10H"])  # seat 1 draws the run of 5 (A6)
    assert drew_on(env) == [SUIT_BIT["H"], 0, 0, 0]
    play_all(env, ["play JS declare H", "play 4H", "play QH", "play 5H"])
    assert drew_on(env)[0] == SUIT_BIT["H"]
    play_all(env, ["play JH declare S"])
    assert drew_on(env)[0] == 0


def test_A3_a_new_hand_forgets() -> None:
    """A3: in a match the next hand is dealt with nothing remembered."""
    env = table([["3S", "4S"], ["5H"], ["6H", "2C"], ["9H", "3C"]], stock=["QC", "KC"], episode="match")
    play_all(env, ["draw"])
    assert drew_on(env) == [SUIT_BIT["H"], 0, 0, 0]
    play_all(env, ["play 5H"])  # seat 1 goes out: the next hand of the match is dealt
    assert env.unwrapped.state_dict()["hands_played"] == 1
    assert drew_on(env) == [0, 0, 0, 0]


def test_without_the_option_the_layout_is_unchanged_and_the_engine_still_remembers() -> None:
    """memory=False (the default) keeps the shipped layout (175 numbers at 4 players); play is the same."""
    plain = dealt(switch_v1.env, {"hands": [["3S", "4S"], ["5H"], ["6H"], ["9H"]], "stock": ["QC", "KC"],
                                  "starter": "7H"}, num_players=4)
    assert plain.unwrapped.layout.size == 175 and "drew_on" not in plain.unwrapped.layout.slices
    saved = plain.unwrapped.state_dict()
    before_memory = {**saved, "rules": {k: v for k, v in saved["rules"].items() if k != "memory"}}
    plain.reset(options={"state": before_memory})  # a state saved before the option existed still matches
    play_all(plain, ["draw"])
    assert drew_on(plain) == [SUIT_BIT["H"], 0, 0, 0]
    shown = table([["3S", "4S"], ["5H"], ["6H"], ["9H"]], stock=["QC", "KC"])
    assert shown.unwrapped.layout.size == 175 + 3 * 4
    play_all(shown, ["draw"])
    assert shown.unwrapped.legal_actions() == plain.unwrapped.legal_actions()
    np.testing.assert_array_equal(shown.observe("player_1")["observation"][:175],
                                  plain.observe("player_1")["observation"])


@pytest.mark.parametrize("memory", [False, True])
def test_the_batched_engine_remembers_and_observes_the_same(memory: bool) -> None:
    """A stacked position loaded into the batch: the same drew_on after each move, the same observations."""
    rules = SwitchRules(memory=memory)
    state = SwitchState(rules, np.random.default_rng(0))
    state.deal_stacked({"hands": [["3S", "4S", "AS"], ["5H", "8C"], ["6H", "9D"], ["9H", "3D"]],
                        "stock": ["QC", "4H", "KC"], "starter": "7H"})
    batch = SwitchBatch(rules, 1, seed=0)
    batch.load(0, state)
    observer = batch.observer
    for text in ("draw", "play 5H", "play 6H", "play 9H", "draw", "play 4H"):
        action = str_to_action(text)
        state.apply(action)
        batch.step(np.array([action]))
        assert batch.to_state(0).drew_on == state.drew_on
        for seat in range(4):
            np.testing.assert_array_equal(batch.observe(np.array([seat]))[0], observer.observe(state, seat))


def test_a_restored_state_keeps_the_memory_and_an_older_one_has_none() -> None:
    """Saved states: `drew_on` is saved and restored; a state saved without it restores with zeros."""
    env = table([["3S", "4S"], ["5H"], ["6H"], ["9H"]], stock=["QC", "KC"])
    play_all(env, ["draw"])
    saved = env.unwrapped.state_dict()
    again = switch_v1.env(memory=True)
    again.reset(options={"state": saved})
    assert drew_on(again) == [SUIT_BIT["H"], 0, 0, 0]
    assert seen(again, 2, 0) == [0, 1, 0, 0]
    older = {k: v for k, v in saved.items() if k != "drew_on"}
    again.reset(options={"state": older})
    assert drew_on(again) == [0, 0, 0, 0]


def test_a_state_saved_with_the_memory_shown_is_refused_by_a_table_without_it() -> None:
    """The option changes the observation: saved states (and bots) made with it need it."""
    saved = switch_v1.env(memory=True)
    saved.reset(seed=0)
    plain = switch_v1.env()
    with pytest.raises(ValueError, match=r"other rule options: memory=True \(env: False\)"):
        plain.reset(options={"state": saved.unwrapped.state_dict()})
