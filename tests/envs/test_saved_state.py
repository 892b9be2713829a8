"""Saved states: `reset(options={"state": d})` checks every field of `d` before it restores anything.

Why: a saved state may come from a file, another program or a person editing
one. A damaged state must be refused with a `ValueError` that names the field,
what was wrong and what is accepted, never with a raw `TypeError` or
`IndexError` and never by loading a corrupt game that fails later. A refused
state must leave the env as it was, and a state saved after a hand or a match
ended must restore as ended (RULES.md, "Saved states").
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pettingzoo import AECEnv

from cardlab.envs import cards as C
from cardlab.envs import huit_v1, switch_v1
from cardlab.envs.huit.rules import HuitRules, HuitState
from cardlab.envs.rng import BIT_GENERATORS, rng_from_state
from cardlab.envs.switch.rules import SwitchRules, SwitchState
from tests.envs.helpers import dealt, play_all, play_random, snapshot

MODULES = {"switch": switch_v1, "huit": huit_v1}
PILES = {"switch": ("stock", "discard"), "huit": ("bank", "table")}
RULES = {"switch": SwitchRules, "huit": HuitRules}
# A run of the hypothesis test by hand, looking for crashes: CARDLAB_STATE_EXAMPLES=5000 pytest ...
EXAMPLES = int(os.environ.get("CARDLAB_STATE_EXAMPLES", "150"))


# ---------------------------------------------------------------- base states
def random_state(game: str, seed: int, steps: int, **options: Any) -> dict[str, Any]:
    """The state after `steps` random legal actions from a shuffled deal."""
    env = MODULES[game].env(**options)
    env.reset(seed=seed)
    play_random(env, np.random.default_rng(seed), steps)
    return env.unwrapped.state_dict()


def stacked_state(game: str, deal: dict[str, Any], plays: list[str], **options: Any) -> dict[str, Any]:
    """The state after `plays` (action texts) from a stacked deal."""
    env = dealt(MODULES[game].env, deal, num_players=len(deal["hands"]), **options)
    play_all(env, plays)
    return env.unwrapped.state_dict()


@cache
def base(name: str) -> dict[str, Any]:
    """A valid saved state that the table of bad fields edits (built once, copied for each case)."""
    if name == "switch":
        return random_state("switch", 0, 12)
    if name == "switch_after_draw":  # seat 0 has nothing for 9H, draws 5H and may play it (A8)
        deal = {"hands": [["3C", "4C"], ["5D"], ["6D"], ["7S"]], "starter": "9H", "stock": ["5H", "KC"]}
        return stacked_state("switch", deal, ["draw"])
    if name == "switch_run":  # seat 0 went out on 2H, seat 1 faces the run of 2 (A9)
        deal = {"hands": [["2H"], ["2S", "5C"], ["6D", "7D"], ["9C"]], "starter": "7H", "stock": ["3S", "4S"]}
        return stacked_state("switch", deal, ["play 2H"])
    if name == "huit":
        return random_state("huit", 0, 9)
    if name == "huit_ace":  # seat 1 faces a fresh Ace (B7)
        return stacked_state("huit", {"hands": [["AS", "7C"], ["9H", "7H"], ["9D"], ["JC"]]}, ["play AS"])
    if name == "huit_eights":  # hearts announced by an 8 (B6)
        return stacked_state(
            "huit", {"hands": [["8S", "7C"], ["9H", "7H"], ["9D"], ["JC"]]}, ["play 8S declare H"]
        )
    if name == "huit_empty":  # nothing laid yet (B4)
        return stacked_state("huit", {"hands": [["8S", "7C"], ["9H", "7H"], ["9D"], ["JC"]]}, [])
    raise KeyError(name)


def game_of(base_name: str) -> str:
    return base_name.split("_")[0]


def restored_env(game: str, state: dict[str, Any]) -> AECEnv:
    """An env of the saved rule options, reset to `state`."""
    env = MODULES[game].env(**state["rules"])
    env.reset(options={"state": copy.deepcopy(state)})
    return env


# ---------------------------------------------------------------- bad fields, one at a time
def _hands_plus(card: str) -> Callable[[dict[str, Any]], Any]:
    return lambda d: [[*d["hands"][0], card], *d["hands"][1:]]


def _without_first_card(d: dict[str, Any]) -> Any:
    return [d["hands"][0][1:], *d["hands"][1:]]


def _rng_with(**inner: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda d: {**d["rng"], "state": {**d["rng"]["state"], **inner}}


RNG_MT = {"bit_generator": "MT19937", "state": {"key": [5] * 624, "pos": 9999}}
RNG_PHILOX = {
    "bit_generator": "Philox",
    "state": {"counter": [0, 0, 0, 0], "key": [1, 2]},
    "buffer": [0, 0, 0, 0],
    "buffer_pos": 99,
    "has_uint32": 0,
    "uinteger": 0,
}

# (base state, field, bad value or a function of the state giving it, fragment of the message)
BAD_FIELDS: list[tuple[str, str, Any, str]] = [
    # whole numbers and seats
    ("switch", "turn", -1, "'turn' must be a whole number 0..3000, got -1"),
    ("switch", "turn", 3001, "'turn' must be a whole number 0..3000, got 3001"),
    ("switch", "turn", "12", "'turn' must be a whole number 0..3000, got '12'"),
    ("switch", "turn", 12.0, "'turn' must be a whole number 0..3000, got 12.0"),
    ("switch", "turn", 3000, "'turn' must be below max_turns=3000 while the hand is not over"),
    ("huit", "turn", True, "'turn' must be a whole number 0..1000, got True"),
    ("switch", "hands_played", -1, "'hands_played' must be a whole number 0..1000000000, got -1"),
    ("huit", "hands_played", None, "'hands_played' must be a whole number 0..1000000000, got None"),
    ("switch", "current_player", 7, "'current_player' must be a seat index 0..3, got 7"),
    ("switch", "current_player", True, "'current_player' must be a seat index 0..3, got True"),
    ("huit", "current_player", "1", "'current_player' must be a seat index 0..3, got '1'"),
    ("huit", "current_player", None, "'current_player' must be a seat index 0..3, got None"),
    ("switch", "dealer", -1, "'dealer' must be a seat index 0..3, got -1"),
    ("huit", "dealer", 4, "'dealer' must be a seat index 0..3, got 4"),
    ("switch", "winner", 4, "'winner' must be a seat index 0..3 or None, got 4"),
    ("huit", "winner", 2, "'winner' must be None while the hand is not over, got 2"),
    ("switch", "first_out", 9, "'first_out' must be a seat index 0..3 or None, got 9"),
    ("switch", "first_out", 1, "'first_out' must be None or a seat that went out (holds no cards), got 1"),
    ("switch_run", "first_out", None, "seat(s) [0] hold no cards while the hand goes on"),
    ("switch", "direction", 0, "'direction' must be one of 1, -1, got 0"),
    ("switch", "direction", True, "'direction' must be one of 1, -1, got True"),
    ("switch", "direction", "1", "'direction' must be one of 1, -1, got '1'"),
    ("switch", "pending_draw", -2, "'pending_draw' must be a whole number 0..72, got -2"),
    ("switch", "pending_draw", 10**6, "'pending_draw' must be a whole number 0..72, got 1000000"),
    ("switch", "pending_draw", 2.0, "'pending_draw' must be a whole number 0..72, got 2.0"),
    ("switch_run", "pending_draw", 3, "'pending_draw' must be 0 or a sum of 2s and 5s (A6), got 3"),
    ("switch_run", "pending_draw", 0, "'first_out' is 0 but 'pending_draw' is 0"),
    # choices
    ("switch", "phase", "draw", "'phase' must be one of 'play', 'after_draw', 'declare', got 'draw'"),
    ("huit", "phase", 0, "'phase' must be one of 'play', 'after_draw', got 0"),
    ("huit", "phase", "declare", "'phase' must be one of 'play', 'after_draw', got 'declare'"),
    ("switch", "current_suit", "X", "'current_suit' must be one of None, 'S', 'H', 'D', 'C', got 'X'"),
    ("huit", "current_suit", "h", "'current_suit' must be one of None, 'S', 'H', 'D', 'C', got 'h'"),
    ("huit", "current_suit", 1, "'current_suit' must be one of None, 'S', 'H', 'D', 'C', got 1"),
    ("switch", "drawn_card", 5, "'drawn_card' must be None or a card string such as '9S', got 5"),
    ("switch_after_draw", "drawn_card", "ZZ", "'drawn_card': cannot read card 'ZZ'"),
    # flags
    ("switch", "hand_over", 1, "'hand_over' must be true or false (a bool), got 1"),
    ("huit", "hand_over", "false", "'hand_over' must be true or false (a bool), got 'false'"),
    ("switch", "truncated", 0, "'truncated' must be true or false (a bool), got 0"),
    ("huit", "match_over", None, "'match_over' must be true or false (a bool), got None"),
    ("huit", "announced", 0, "'announced' must be true or false (a bool), got 0"),
    ("huit", "ace_penalty", np.bool_(False), "'ace_penalty' must be true or false (a bool)"),
    ("switch", "truncated", True, "'truncated' is true but 'hand_over' is false"),
    ("huit", "match_over", True, "'match_over' is true but 'hand_over' is false"),
    # lists of one whole number per seat
    (
        "switch",
        "scores",
        [0, 0, 0],
        "'scores' must be a list of 4 whole numbers (one per seat), got [0, 0, 0]",
    ),
    ("huit", "scores", [0, True, 0, 0],
     "'scores'[1] must be a whole number -1000000000..1000000000, got True"),
    ("huit", "scores", "0000", "'scores' must be a list of 4 whole numbers (one per seat), got '0000'"),
    ("huit", "scores", {0: 0, 1: 0, 2: 0, 3: 0}, "'scores' must be a list of 4 whole numbers"),
    ("switch", "streaks", [0, 1, 0, 0], "'streaks'[1] must be 0, got 1"),
    ("huit", "streaks", [0, 0, 3, 0], "'streaks'[2] must be a whole number 0..2, got 3"),
    ("huit", "streaks", [0, 0, -1, 0], "'streaks'[2] must be a whole number 0..2, got -1"),
    ("switch", "hand_points", [0, 0, 0, -1], "'hand_points'[3] must be a whole number 0..1000000000, got -1"),
    ("huit", "hand_points", [5, 0, 0, 0], "'hand_points' must be all 0 while the hand is not over"),
    ("switch", "score_changes", [0, 0, 0, 0.0],
     "'score_changes'[3] must be a whole number -1000000000..1000000000, got 0.0"),
    ("huit", "score_changes", [1, 0, 0, 0], "'score_changes' must be all 0 while the hand is not over"),
    # cards
    ("switch", "hands", None, "'hands' must be a list of 4 lists of card strings"),
    ("switch", "hands", "9S 9H", "'hands' must be a list of 4 lists of card strings"),
    (
        "huit",
        "hands",
        lambda d: dict(enumerate(d["hands"])),
        "'hands' must be a list of 4 lists of card strings",
    ),
    (
        "huit",
        "hands",
        lambda d: [{c: 1 for c in d["hands"][0]}, *d["hands"][1:]],
        "hands[0]: expected a list of card strings such as ['9S', '10H'], got dict",
    ),
    (
        "switch",
        "hands",
        lambda d: [set(d["hands"][0]), *d["hands"][1:]],
        "hands[0]: expected a list of card strings",
    ),
    (
        "switch",
        "hands",
        lambda d: [" ".join(d["hands"][0]), *d["hands"][1:]],
        "hands[0]: expected a list of card",
    ),
    (
        "huit",
        "hands",
        lambda d: [[*d["hands"][0], 9], *d["hands"][1:]],
        "expected a card string such as '10H', got 9",
    ),
    ("huit", "hands", _hands_plus("2S"), "the cards use 2S 1 times (in hands[0]) but the deck holds 0"),
    (
        "huit",
        "hands",
        lambda d: [[*d["hands"][0], d["hands"][1][0]], *d["hands"][1:]],
        "2 times (in hands[0], hands[1])",
    ),
    ("switch", "hands", _hands_plus("AS"), "the cards use AS 5 times"),
    ("switch", "hands", _without_first_card, "the cards miss"),
    ("huit", "hands", _without_first_card, "the cards miss"),
    (
        "switch",
        "stock",
        {"9S", "9H"},
        "stock: expected a list of card strings such as ['9S', '10H'], got set",
    ),
    ("switch", "stock", None, "stock: expected a list of card strings"),
    ("switch", "discard", "9S", "discard: expected a list of card strings, got the string '9S'"),
    ("huit", "bank", lambda d: {c: 1 for c in d["bank"]}, "bank: expected a list of card strings"),
    ("huit", "table", lambda d: (*d["table"], "XX"), "cannot read card 'XX'"),
    ("huit", "left_out", "7S", "left_out: expected a list of card strings, got the string '7S'"),
    ("huit", "left_out", lambda d: [d["hands"][0][0]], "2 times (in hands[0], left_out)"),
    # the memory of the hand: one 4-bit suit mask per seat
    ("switch", "drew_on", [[], [], []], "'drew_on' must be a list of 4 lists of distinct suit letters"),
    ("switch", "drew_on", [0, 0, 0, 0], "'drew_on[0]' must be a list of distinct suit letters S, H, D, C"),
    ("switch", "drew_on", [[], ["S", "S"], [], []], "'drew_on[1]' must be a list of distinct suit letters"),
    # the generator
    ("switch", "rng", None, "'rng' must be a dict from Generator.bit_generator.state, got None"),
    ("huit", "rng", {"bit_generator": "Foo"}, "accepted PCG64, PCG64DXSM, Philox, SFC64, MT19937"),
    ("huit", "rng", {"bit_generator": "RandomState"}, "accepted PCG64, PCG64DXSM, Philox, SFC64, MT19937"),
    (
        "switch",
        "rng",
        lambda d: {**d["rng"], "state": None},
        "['state'] must be a dict with the keys inc, state",
    ),
    (
        "switch",
        "rng",
        _rng_with(state=-1),
        "['state']['state'] must be a whole number 0..340282366920938463463",
    ),
    ("switch", "rng", _rng_with(state=1.5), "['state']['state'] must be a whole number"),
    ("huit", "rng", _rng_with(inc="1"), "['state']['inc'] must be a whole number"),
    (
        "huit",
        "rng",
        lambda d: {**d["rng"], "has_uint32": 2},
        "['has_uint32'] must be a whole number 0..1, got 2",
    ),
    ("huit", "rng", lambda d: {k: v for k, v in d["rng"].items() if k != "uinteger"}, "must have the keys"),
    ("switch", "rng", RNG_MT, "['state']['pos'] must be a whole number 0..624, got 9999"),
    ("switch", "rng", {**RNG_MT, "state": {"key": [5] * 623, "pos": 0}}, "['key'] must be a list of 624"),
    ("huit", "rng", RNG_PHILOX, "['buffer_pos'] must be a whole number 0..4, got 99"),
    # game, rules, keys
    ("switch", "game", 5, "'game' must be one of 'switch', got 5"),
    ("huit", "game", "switch", "this saved state is for game 'switch', not 'huit'"),
    ("switch", "rules", ["num_players", 4], "'rules' must be a dict of rule options"),
    (
        "switch",
        "rules",
        lambda d: {**d["rules"], "match_rank": 1},
        "other rule options: match_rank=1 (env: True)",
    ),
    ("huit", "no_such_key", 1, "unknown saved state key(s) no_such_key"),
    # the memory of the hand (optional: a state without it has none)
    ("huit", "drew_on", [[], [], []], "'drew_on' must be a list of 4 lists of distinct suit letters"),
    ("huit", "drew_on", [0, 0, 0, 0], "'drew_on[0]' must be a list of distinct suit letters S, H, D, C, got"),
    ("huit", "drew_on", [[], ["H", "H"], [], []], "'drew_on[1]' must be a list of distinct suit letters"),
    ("huit", "drew_on", [[], [], ["h"], []], "'drew_on[2]' must be a list of distinct suit letters"),
    # consistency with the cards and the other fields
    (
        "switch_after_draw",
        "current_suit",
        None,
        "'current_suit' is None (a free suit, A4), which needs a Joker",
    ),
    (
        "switch_after_draw",
        "current_suit",
        "S",
        "'current_suit' must be 'H', the suit of the top card 9H (A5)",
    ),
    ("switch", "discard", lambda d: [], "the cards miss"),
    (
        "switch_run",
        "discard",
        lambda d: [*d["discard"][1:], d["discard"][0]],
        "a draw run needs a 2 or a Joker",
    ),
    ("switch_after_draw", "phase", "play", "'drawn_card' must be None outside phase 'after_draw', got '5H'"),
    (
        "switch_after_draw",
        "drawn_card",
        None,
        "'drawn_card' must be the card drawn in phase 'after_draw' (A8)",
    ),
    ("switch_after_draw", "drawn_card", "5D", "'drawn_card' is 5D, which current_player 0 does not hold"),
    ("switch_after_draw", "drawn_card", "3C", "'drawn_card' is 3C, which cannot be played on 9H"),
    ("switch_after_draw", "pending_draw", 2, "a draw run needs a 2 or a Joker on top"),
    ("switch", "phase", "declare", "'phase' is 'declare', the suit choice after a Jack starter (A4)"),
    ("huit_ace", "phase", "after_draw", "'ace_penalty' must be false in phase 'after_draw'"),
    ("huit_eights", "ace_penalty", True, "'ace_penalty' is true but the top card is 8S"),
    ("huit_empty", "ace_penalty", True, "'ace_penalty' is true on an empty table"),
    ("huit_empty", "current_suit", "S", "'current_suit' must be None while the table is empty (B4), got 'S'"),
    ("huit_empty", "announced", True, "'announced' is true on an empty table"),
    ("huit_ace", "current_suit", None, "'current_suit' must be a suit letter S, H, D or C once a card is on"),
    (
        "huit_ace",
        "current_suit",
        "H",
        "'current_suit' must be 'S', the suit of the top card AS (B5), got 'H'",
    ),
    ("huit_ace", "announced", True, "'announced' must be False: it is true exactly when 8s are on top (B6)"),
    ("huit_eights", "announced", False, "'announced' must be True: it is true exactly when 8s are on top"),
    ("huit_ace", "hands", lambda d: [[], *d["hands"][1:]], "the cards miss 7C"),
    # a total at the target in a hand in play: the hand that took it there ended the match (A12/B13)
    ("huit", "scores", lambda d: [151, *d["scores"][1:]], "'scores' must all be below target_score=151 while "
                                                           "a hand is in play"),
    ("switch", "scores", lambda d: [*d["scores"][:-1], 500], "'scores' must all be below target_score=500"),
    # two seats on a B12 streak: a win sets every other seat's to 0
    ("huit", "streaks", lambda d: [1, 1, *d["streaks"][2:]],
     "'streaks' must be 0 for every seat but one at most"),
]


def _case_id(case: tuple[str, str, Any, str]) -> str:
    value = case[2]
    shown = value.__name__ if callable(value) else repr(value)
    return f"{case[0]}-{case[1]}-{shown[:24]}"


@pytest.mark.parametrize(("base_name", "field", "bad", "fragment"), BAD_FIELDS, ids=map(_case_id, BAD_FIELDS))
def test_bad_field_is_refused_naming_it_and_changes_nothing(
    base_name: str, field: str, bad: Any, fragment: str
) -> None:
    game = game_of(base_name)
    valid = base(base_name)
    env = restored_env(game, valid)
    before = snapshot(env)
    damaged = copy.deepcopy(valid)
    damaged[field] = bad(damaged) if callable(bad) else bad
    with pytest.raises(ValueError, match=re.escape(fragment)):
        env.reset(options={"state": damaged})
    assert snapshot(env) == before


def test_a_key_that_is_not_text_is_refused_and_changes_nothing() -> None:
    """A saved state read from elsewhere may hold a key of another type: it is an unknown key."""
    valid = base("huit")
    env = restored_env(game_of("huit"), valid)
    before = snapshot(env)
    damaged: dict[object, Any] = {key: value for key, value in copy.deepcopy(valid).items()}
    damaged[3] = 1
    with pytest.raises(ValueError, match=re.escape("unknown saved state key(s) 3; accepted: game, ")):
        env.reset(options={"state": damaged})
    assert snapshot(env) == before


@pytest.mark.parametrize(
    "base_name",
    ["switch", "switch_after_draw", "switch_run", "huit", "huit_ace", "huit_eights", "huit_empty"],
)
def test_base_states_restore_and_round_trip(base_name: str) -> None:
    """The states the table edits are valid: the cases above fail for the edit alone."""
    env = restored_env(game_of(base_name), base(base_name))
    assert env.unwrapped.state_dict() == base(base_name)


def test_huit_seat_without_cards_in_a_hand_not_over_is_refused() -> None:
    """B11: a hand ends as soon as a seat has no cards, so such a seat in a hand in play is refused."""
    valid = base("huit_ace")
    damaged = {
        **valid,
        "hands": [*valid["hands"][:2], [], valid["hands"][3]],
        "bank": [*valid["bank"], *valid["hands"][2]],
    }
    with pytest.raises(ValueError, match=re.escape("seat(s) [2] hold no cards but 'hand_over' is false")):
        restored_env("huit", damaged)


@pytest.mark.parametrize("name", BIT_GENERATORS)
@pytest.mark.parametrize("game", ["switch", "huit"])
def test_every_accepted_bit_generator_restores_and_saves_as_json(game: str, name: str) -> None:
    """C2: the generator of any accepted kind carries on where it was; its saved form is JSON-ready."""
    bitgen = getattr(np.random, name)(5)
    bitgen.random_raw(3)
    reference = np.random.Generator(getattr(np.random, name)(5))
    reference.bit_generator.random_raw(3)
    saved = {**base(game), "rng": json.loads(json.dumps(bitgen.state, default=lambda a: a.tolist()))}
    env = restored_env(game, saved)
    state = env.unwrapped.state_dict()
    assert json.loads(json.dumps(state)) == state == saved
    copy_env = restored_env(game, state)
    assert copy_env.unwrapped.state_dict() == saved
    assert rng_from_state(state["rng"]).integers(10**6) == reference.integers(10**6)


# ---------------------------------------------------------------- finished hands and matches
def finished(game: str, seed: int, **options: Any) -> dict[str, Any]:
    """The state at the end of the episode (a hand, or a match with episode='match')."""
    env = MODULES[game].env(**options)
    env.reset(seed=seed)
    play_random(env, np.random.default_rng(seed), 100_000)
    state = env.unwrapped.state_dict()
    assert state["hand_over"]
    return state


FINISHED = [
    ("switch", {}),
    ("switch", {"num_players": 2}),
    ("huit", {}),
    ("huit", {"num_players": 3, "hand_size": "all"}),
    ("switch", {"episode": "match", "target_score": 60}),
    ("huit", {"episode": "match", "target_score": 40, "num_players": 2}),
    ("switch", {"max_turns": 5}),
    ("huit", {"max_turns": 3}),
]


@pytest.mark.parametrize(("game", "options"), FINISHED)
@pytest.mark.parametrize("seed", [0, 1])
def test_finished_hand_or_match_restores_finished(game: str, options: dict[str, Any], seed: int) -> None:
    """RULES.md, saved states: a state saved after a hand or a match ended restores as ended."""
    saved = finished(game, seed, **options)
    if options.get("episode") == "match":
        assert saved["match_over"]
    if "max_turns" in options:
        assert saved["truncated"] and saved["winner"] is None
    env = restored_env(game, saved)
    assert env.unwrapped.legal_actions() == []
    assert env.unwrapped.state_dict() == saved
    rules = RULES[game](**saved["rules"])
    state_cls = SwitchState if game == "switch" else HuitState
    assert state_cls.from_state_dict(copy.deepcopy(saved), rules).legal_actions() == []


FINISHED_DAMAGE = [
    ("switch", "winner", None, "'winner' must be the seat that went out"),
    ("huit", "winner", None, "'winner' must be the seat that went out"),
    ("switch", "hand_points", lambda d: [p + 1 for p in d["hand_points"]], "'hand_points' must be ["),
    ("huit", "score_changes", lambda d: [p + 1 for p in d["score_changes"]], "'score_changes' must be ["),
    ("switch", "hands_played", 0, "'hands_played' must be at least 1 once a hand is over"),
    ("huit", "match_over", True, "'match_over' must be False after a won hand"),
    # B12: the winner is the one seat on a streak, and on one exactly when it took no bonus
    ("huit", "streaks", lambda d: [int(s == (d["winner"] + 1) % len(d["streaks"]))
                                   for s in range(len(d["streaks"]))],
     "'streaks' must be 0 for every seat but the winner"),
    ("huit", "streaks", lambda d: [0] * len(d["streaks"]),
     "'streaks' must be above 0 for the winner, who took no bonus (B12)"),
]


@pytest.mark.parametrize(("game", "field", "bad", "fragment"), FINISHED_DAMAGE)
def test_damaged_finished_hand_is_refused(game: str, field: str, bad: Any, fragment: str) -> None:
    saved = finished(game, 3)
    damaged = copy.deepcopy(saved)
    damaged[field] = bad(damaged) if callable(bad) else bad
    env = MODULES[game].env()
    env.reset(seed=0)
    before = snapshot(env)
    with pytest.raises(ValueError, match=re.escape(fragment)):
        env.reset(options={"state": damaged})
    assert snapshot(env) == before


@pytest.mark.parametrize("game", ["switch", "huit"])
def test_truncated_hand_fields_must_agree(game: str) -> None:
    saved = finished(game, 0, max_turns=4)
    for field, bad, fragment in [
        ("turn", 3, "'turn' must be max_turns=4 for a truncated hand (C1)"),
        ("winner", 0, "'winner' must be None for a truncated hand (C1)"),
        ("match_over", True, "'match_over' must be false for a truncated hand (C1)"),
        ("scores", [10**6] * len(saved["scores"]), "'scores' must all be below target_score"),
        *([("streaks", [1] + [0] * (len(saved["streaks"]) - 1), "'streaks' must be all 0 after a truncated "
            "hand (C1 ends every streak, B12)")] if game == "huit" else []),
    ]:
        with pytest.raises(ValueError, match=re.escape(fragment)):
            restored_env(game, {**saved, field: bad})


# ---------------------------------------------------------------- left_out and older states
@pytest.mark.parametrize("game", ["switch", "huit"])
def test_a_stacked_deal_saves_the_cards_it_left_out(game: str) -> None:
    """Every card is accounted for: the cards a stacked deal did not use are in `left_out`."""
    saved = base(f"{game}_run" if game == "switch" else "huit_ace")
    in_play = [c for h in saved["hands"] for c in h] + [c for p in PILES[game] for c in saved[p]]
    deck = RULES[game](**saved["rules"]).deck()
    expected = Counter({C.card_str(k): n for k, n in enumerate(deck) if n}) - Counter(in_play)
    assert Counter(saved["left_out"]) == expected
    without = {k: v for k, v in saved.items() if k != "left_out"}
    with pytest.raises(ValueError, match="every card must be in a hand, a pile or 'left_out'"):
        restored_env(game, without)


@pytest.mark.parametrize("game", ["switch", "huit"])
def test_a_state_saved_without_left_out_used_the_whole_deck(game: str) -> None:
    saved = base(game)
    assert saved["left_out"] == []
    env = restored_env(game, {k: v for k, v in saved.items() if k != "left_out"})
    assert env.unwrapped.state_dict() == saved


# ---------------------------------------------------------------- mutations (hypothesis)
# Player counts and rule variants of the valid states the mutations start from.
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "switch": [
        {"num_players": 2},
        {"num_players": 3, "voluntary_draw": True},
        {},
        {"num_players": 5, "play_after_draw": False, "max_turns": 60},
    ],
    "huit": [
        {"num_players": 2},
        {"num_players": 3, "queen_skips_each": False},
        {},
        {"num_players": 6, "hand_size": "all", "max_turns": 40},
    ],
}
CARD_WORDS = ["9S", "AS", "2C", "10D", "8H", "QS", "JOKER", "7C", "KH", "JD"]


@cache
def valid_states(game: str) -> tuple[dict[str, Any], ...]:
    """Saved states met in random play: several seeds, player counts and rule variants, every few steps."""
    states = []
    for v, options in enumerate(VARIANTS[game]):
        for seed in range(3):
            env = MODULES[game].env(**options)
            env.reset(seed=100 * v + seed)
            rng = np.random.default_rng(seed)
            states.append(env.unwrapped.state_dict())
            while env.unwrapped.legal_actions():
                play_random(env, rng, int(rng.integers(1, 25)))
                states.append(env.unwrapped.state_dict())
    return tuple(states)


def wrong_values(value: Any) -> list[Any]:
    """Plausible wrong values for a field holding `value`: other types, out of range, near misses."""
    pool: list[Any] = [None, True, False, 0, 1, -1, 3, 10**9, 2.5, "", "x", "S", "play", *CARD_WORDS]
    pool += [[], {}, {"9S": 1}, {"9S", "9H"}, ("9S",), [None], [0, 0], np.int64(2), np.bool_(True)]
    if isinstance(value, bool):
        pool += [not value, int(value), str(value).lower()]
    elif isinstance(value, int):
        pool += [value + 1, value - 1, -value - 1, float(value), str(value), [value], 2**200]
    elif isinstance(value, str):
        pool += [value.lower(), f" {value}", value[::-1], [value]]
    elif isinstance(value, list):
        pool += [value[:-1], value + value[:1], tuple(value), " ".join(map(str, value))]
        pool.append(dict(enumerate(value)))
        if all(isinstance(v, str) for v in value):
            pool.append(set(value))
    elif isinstance(value, dict):
        pool += [list(value), {**value, "extra": 1}, {k: v for k, v in list(value.items())[1:]}]
    return pool


def mutate(draw: Callable[[Any], Any], value: Any, depth: int = 0) -> Any:
    """`value` with one change: replaced, shuffled, or one item (of a list or dict) changed in turn."""
    kinds = ["replace"]
    if isinstance(value, list) and len(value) > 1:
        kinds.append("shuffle")
    if isinstance(value, (list, dict)) and value and depth < 3:
        kinds += ["inner", "inner"]
    kind = draw(st.sampled_from(kinds))
    if kind == "replace":
        return draw(st.sampled_from(wrong_values(value)))
    if kind == "shuffle":
        return draw(st.permutations(value))
    if isinstance(value, list):
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], mutate(draw, value[i], depth + 1), *value[i + 1 :]]
    key = draw(st.sampled_from(sorted(value)))
    return {**value, key: mutate(draw, value[key], depth + 1)}


def swap_cards(draw: Callable[[Any], Any], state: dict[str, Any], game: str) -> dict[str, Any]:
    """Two cards trade places between hands and piles: the deck is still whole, the position is new."""
    places: list[tuple[str, int | None]] = [("hands", i) for i, h in enumerate(state["hands"]) if h]
    places += [(pile, None) for pile in PILES[game] if state[pile]]
    (key_a, i_a), (key_b, i_b) = draw(st.permutations(places))[:2] if len(places) > 1 else places * 2
    out = copy.deepcopy(state)
    list_a = out[key_a] if i_a is None else out[key_a][i_a]
    list_b = out[key_b] if i_b is None else out[key_b][i_b]
    a, b = draw(st.integers(0, len(list_a) - 1)), draw(st.integers(0, len(list_b) - 1))
    list_a[a], list_b[b] = list_b[b], list_a[a]
    return out


def deck_counts(state: dict[str, Any], game: str) -> Counter[str]:
    """Every card of a saved state: hands, both piles and the cards left out."""
    cards = [c for h in state["hands"] for c in h] + state["left_out"]
    return Counter(cards + [c for p in PILES[game] for c in state[p]])


def play_out(env: AECEnv, rng: np.random.Generator, limit: int) -> None:
    """Random legal actions until the engine offers none (the hand is over); the mover observes each time."""
    for _ in range(limit):
        legal = env.unwrapped.legal_actions()
        if not legal:
            return
        env.observe(env.agent_selection)
        env.step(int(rng.choice(legal)))
    raise AssertionError(f"the hand did not end within {limit} actions")


@pytest.mark.parametrize("game", ["switch", "huit"])
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_mutated_state_is_refused_or_plays_to_the_end(game: str, data: st.DataObject) -> None:
    """Property: change one field of a valid state; restoring either raises ValueError (the env
    unchanged) or gives a game that plays to the end of the hand, conserving the cards."""
    valid = data.draw(st.sampled_from(valid_states(game)))
    field = data.draw(st.sampled_from([*sorted(valid), "swap"]))
    if field == "swap":
        damaged = swap_cards(data.draw, valid, game)
    else:
        damaged = {**copy.deepcopy(valid), field: mutate(data.draw, valid[field])}
    env = MODULES[game].env(**valid["rules"])
    env.reset(options={"state": copy.deepcopy(valid)})
    before = snapshot(env)
    try:
        env.reset(options={"state": damaged})
    except ValueError:
        assert snapshot(env) == before
        event("refused")
        return
    event(f"restored, then played out: {field}")
    restored = env.unwrapped.state_dict()
    full_deck = deck_counts(valid, game)
    assert deck_counts(restored, game) == full_deck
    again = restored_env(game, restored)
    assert again.unwrapped.state_dict() == restored
    for agent in env.possible_agents:
        env.observe(agent)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    play_out(env, rng, RULES[game](**valid["rules"]).max_turns + 1)
    assert deck_counts(env.unwrapped.state_dict(), game) == full_deck
    for agent in env.possible_agents:
        env.observe(agent)
