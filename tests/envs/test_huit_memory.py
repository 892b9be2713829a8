"""Huit américain's memory of the hand: `drew_on` in the state, and in the observation with `memory`.

Why: a policy that sees only the table cannot tell that the next player drew
on hearts a moment ago; the option `memory` shows it (`HuitRules.memory`).
Scenarios by rule id: a draw of one's own accord (B9) marks the current suit,
the announced one too (B6), laying a suit clears it (B5), B7's penalty draw
and a draw on the empty table (B4) mark nothing, and each hand (B2/B3) starts
with none. The batched engine and determinization are checked against this
engine in their own files, with `memory` among the options.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.agents.agent_spec import make_agent
from cardlab.envs import huit_v1, make_game
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.observer import HuitObserver, make_layout
from cardlab.envs.huit.rules import HuitRules, HuitState
from tests.envs.helpers import dealt, obs_parts, play, play_all, position

S, H, D, C = range(4)
BOTS = pathlib.Path(__file__).resolve().parents[2] / "agents" / "bots"


def memory_env(hands: list[list[str]], bank: list[str], **options: Any) -> AECEnv:
    return dealt(huit_v1.env, {"hands": hands, "bank": bank}, num_players=len(hands), memory=True, **options)


def drew_on(env: AECEnv) -> list[list[str]]:
    return env.unwrapped.state_dict()["drew_on"]


def seen(env: AECEnv, seat: int) -> list[list[int]]:
    """Seat `seat`'s observed `drew_on`, one row of 4 suit bits per other seat (me+1, me+2, ...)."""
    bits = obs_parts(env, f"player_{seat}")["drew_on"]
    return bits.reshape(-1, 4).astype(int).tolist()


def row(*suits: int) -> list[int]:
    return [int(s in suits) for s in range(4)]


def test_B9_a_draw_marks_the_current_suit_seen_from_each_seat_at_its_offset() -> None:
    """B9: seat 1 has no heart for 9H and draws; seat 0 sees it first in the field, seat 2 second."""
    env = memory_env([["9H", "7C"], ["KS", "7D"], ["JD", "10C"]], ["QS", "10S"])
    play_all(env, ["play 9H", "draw"])
    assert drew_on(env) == [[], ["H"], []]
    assert seen(env, 0) == [row(H), row()]
    assert seen(env, 2) == [row(), row(H)]
    assert seen(env, 1) == [row(), row()]  # its own memory is not in its observation


def test_B5_laying_a_card_of_the_suit_clears_its_bit() -> None:
    """B9 then B5: seat 1 draws on hearts, draws 7H and lays it: the hearts bit goes."""
    env = memory_env([["9H", "7C"], ["KS", "7D"], ["JD", "10C"]], ["7H", "10S"])
    play_all(env, ["play 9H", "draw"])
    assert seen(env, 0)[0] == row(H)
    play(env, "play 7H")
    assert drew_on(env) == [[], [], []]
    assert seen(env, 0) == [row(), row()]


def test_B5_laying_clears_the_suits_laid_and_only_those() -> None:
    """Seat 1 drew on spades and hearts; a heart clears hearts, an 8 its own suit, a group each suit laid."""
    hands = [["9S", "9H", "JH", "9D", "10C"], ["KD", "7S", "7D", "JC"]]
    env = memory_env(hands, ["AC", "KH", "8H", "QC"])
    play_all(env, ["play 9S", "draw", "pass"])  # seat 1 holds 7S but draws AC on spades
    play_all(env, ["play 9H", "draw"])  # and KH on hearts
    assert drew_on(env) == [[], ["S", "H"]]
    assert seen(env, 0) == [row(S, H)]
    play(env, "play KH")
    assert drew_on(env) == [[], ["S"]]
    play_all(env, ["play JH", "draw"])  # 8H on hearts
    assert drew_on(env) == [[], ["S", "H"]]
    play(env, "play 8H declare D")  # the 8's own suit, hearts, is laid
    assert drew_on(env) == [[], ["S"]]
    play_all(env, ["play 9D", "play 7D 7S"])
    assert drew_on(env) == [[], []]


def test_B6_a_draw_on_an_announced_suit_marks_the_announced_suit() -> None:
    env = memory_env([["8S", "7C"], ["KS", "7D"], ["JD", "10C"]], ["QS", "10S"])
    play_all(env, ["play 8S declare H", "draw"])
    assert drew_on(env) == [[], ["H"], []]


def test_B7_the_penalty_draw_marks_nothing_and_the_next_draw_on_the_ace_marks_its_suit() -> None:
    """B7: seat 1 draws the 2-card penalty (nothing marked); seat 2 then draws 1 on the Ace of spades."""
    env = memory_env([["AS", "7C"], ["9H", "7H"], ["9D", "JD"]], ["10S", "KH", "QC", "9S"])
    play_all(env, ["play AS", "draw"])
    assert drew_on(env) == [[], [], []]
    play(env, "draw")
    assert drew_on(env) == [[], [], ["S"]]


def test_B4_a_draw_on_the_empty_table_marks_nothing() -> None:
    env = memory_env([["9H", "7C"], ["KS", "7D"]], ["QS", "10S"])
    play(env, "draw")
    assert env.unwrapped.state_dict()["phase"] == "after_draw"
    assert drew_on(env) == [[], []]


def test_B3_each_hand_of_a_match_starts_with_no_memory() -> None:
    """B3: seat 1 drew on hearts, then seat 0 goes out; the next hand is dealt with every mask empty."""
    env = memory_env([["9H", "7H"], ["KS", "7D"]], ["QS", "10S"], episode="match")
    play_all(env, ["play 9H", "draw", "pass"])
    assert drew_on(env) == [[], ["H"]]
    play(env, "play 7H")
    d = env.unwrapped.state_dict()
    assert d["hands_played"] == 1 and not d["hand_over"]
    assert drew_on(env) == [[], []]


@pytest.mark.parametrize("n", [2, 4, 6])
def test_without_memory_the_layout_is_unchanged_and_the_field_is_last(n: int) -> None:
    """The option only adds `drew_on`, at the end: shipped bots (memory false) keep their layout."""
    plain, memory = make_layout(HuitRules(num_players=n)), make_layout(HuitRules(num_players=n, memory=True))
    assert memory.fields[:-1] == plain.fields
    assert memory.fields[-1].name == "drew_on" and memory.size == plain.size + (n - 1) * 4
    assert "drew_on" not in plain.slices


def test_the_engine_keeps_the_memory_without_the_option_and_play_is_the_same() -> None:
    """Same seed, same actions, memory on or off: the same states (drew_on included), longer vectors."""
    states = []
    for memory in (False, True):
        rules = HuitRules(num_players=3, memory=memory)
        state, rng = HuitState(rules, np.random.default_rng(4)), np.random.default_rng(5)
        observer, trace = HuitObserver(rules), []
        for _ in range(60):
            if state.hand_over:
                break
            legal = state.legal_actions()
            state.apply(int(legal[rng.integers(len(legal))]))
            saved = state.state_dict()
            trace.append({k: v for k, v in saved.items() if k != "rules"})
            parts = observer.layout.split(observer.observe(state, 0))
            assert ("drew_on" in parts) == memory
        states.append(trace)
    assert states[0] == states[1]
    assert any(any(masks) for masks in (t["drew_on"] for t in states[0]))


def test_a_saved_memory_restores_and_a_state_without_it_restores_with_none() -> None:
    env = memory_env([["9H", "7C"], ["KS", "7D"], ["JD", "10C"]], ["QS", "10S"])
    play_all(env, ["play 9H", "draw"])
    saved = env.unwrapped.state_dict()
    rules = HuitRules(**saved["rules"])
    assert HuitState.from_state_dict(saved, rules).state_dict() == saved
    older = {k: v for k, v in saved.items() if k != "drew_on"}
    assert HuitState.from_state_dict(older, rules).drew_on == [0, 0, 0]
    before_memory = {**saved, "rules": {k: v for k, v in saved["rules"].items() if k != "memory"}}
    assert HuitState.from_state_dict(before_memory, HuitRules(num_players=3)).drew_on == [0, 1 << H, 0]
    with pytest.raises(ValueError, match=re.escape("other rule options: memory=False (env: True)")):
        HuitState.from_state_dict(before_memory, rules)  # it was saved without memory: memory false


def test_a_shipped_bot_written_before_the_option_plays_without_memory_and_is_refused_with_it() -> None:
    assert "memory" not in json.loads((BOTS / "huit-2p.json").read_text())["rules"]
    make_agent("bot:huit-2p", make_game("huit", {"num_players": 2}))
    with pytest.raises(ValueError, match=r"other rule options: memory=False \(game: True\)"):
        make_agent("bot:huit-2p", make_game("huit", {"num_players": 2, "memory": True}))


def test_the_batch_and_a_sampled_world_keep_and_show_the_memory() -> None:
    """A position where two seats drew: loaded into the batch, and determinized from seat 0's view."""
    env = memory_env([["9H", "9S", "7C"], ["KS", "7D"], ["JD", "10C"]], ["QS", "10S", "KH"])
    play_all(env, ["play 9H", "draw", "pass", "draw", "pass", "play 9S"])  # seats 1, 2 drew on hearts
    state = env.unwrapped.game_state
    assert state.drew_on == [0, 1 << H, 1 << H]
    observed = env.observe("player_1")
    batch = HuitBatch(state.rules, 2, seed=0)
    batch.load(1, state)
    np.testing.assert_array_equal(batch.observe(np.array([0, 1]))[1], observed["observation"])
    assert position(batch.state_dict(1)) == position(state.state_dict())
    world = make_game("huit", state.rules.to_dict()).determinize(observed, np.random.default_rng(0), seat=1)
    assert world.drew_on == [0, 0, 1 << H]  # seat 1's own memory is not in its view
