"""Bad input to both envs: illegal actions, action text, deals, options and saved states.

Why: a person or a buggy agent must get a `ValueError` that says what was
wrong and what is accepted, the env must never silently replace an illegal
action, and a refused action must leave the game untouched.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.envs import huit_v1, switch_v1
from tests.envs.helpers import play_random, snapshot

MODULES = [switch_v1, huit_v1]
MODULE_IDS = ["switch", "huit"]
by_game = pytest.mark.parametrize("module", MODULES, ids=MODULE_IDS)


def started(module: ModuleType, seed: int, steps: int, **options: Any) -> AECEnv:
    """An env `steps` random legal actions into a hand (fewer if it ends)."""
    env = module.env(**options)
    env.reset(seed=seed)
    play_random(env, np.random.default_rng(seed), steps)
    return env


def an_illegal_id(env: AECEnv) -> int:
    legal = set(env.unwrapped.legal_actions())
    return next(a for a in range(env.unwrapped.NUM_ACTIONS) if a not in legal)


def case_ids(cases: list[tuple[Any, ...]]) -> list[str]:
    """Test ids 'switch-0', 'huit-3', ... for a table of cases whose first column is the module."""
    return [f"{case[0].__name__.rsplit('.', 1)[-1][:-3]}-{i}" for i, case in enumerate(cases)]


def assert_lists_legal(message: str, env: AECEnv) -> None:
    for a in env.unwrapped.legal_actions():
        assert f"{a} ({env.unwrapped.action_to_str(a)})" in message


# ---------------------------------------------------------------- illegal actions, "raise"
@by_game
@pytest.mark.parametrize(("seed", "steps"), [(0, 0), (1, 7), (2, 25)])
def test_illegal_action_raises_and_changes_nothing(module: ModuleType, seed: int, steps: int) -> None:
    env = started(module, seed, steps)
    before = snapshot(env)
    action = an_illegal_id(env)
    with pytest.raises(ValueError, match="illegal action") as err:
        env.step(action)
    message = str(err.value)
    assert f"{action} ({env.unwrapped.action_to_str(action)})" in message
    assert_lists_legal(message, env)
    assert snapshot(env) == before
    env.step(env.unwrapped.legal_actions()[0])  # the game goes on normally
    assert env.unwrapped.state_dict()["turn"] == before["state"]["turn"] + 1


@by_game
@pytest.mark.parametrize("action", [-1, "size", 10**9])
def test_out_of_range_id_is_refused(module: ModuleType, action: int | str) -> None:
    env = started(module, 3, 5)
    size = env.unwrapped.NUM_ACTIONS
    action = size if action == "size" else action
    before = snapshot(env)
    with pytest.raises(ValueError, match=rf"not an action id 0\.\.{size - 1}") as err:
        env.step(action)
    assert_lists_legal(str(err.value), env)
    assert snapshot(env) == before


@by_game
@pytest.mark.parametrize("action", ["draw", 1.0, None, True, [0], np.float32(0)], ids=repr)
def test_non_int_action_is_refused(module: ModuleType, action: Any) -> None:
    """Only ints (and numpy ints) are action ids; text goes through `str_to_action`."""
    env = started(module, 4, 3)
    before = snapshot(env)
    with pytest.raises(ValueError, match="not an action id"):
        env.step(action)
    assert snapshot(env) == before


@by_game
def test_numpy_int_action_is_accepted(module: ModuleType) -> None:
    env = started(module, 5, 0)
    env.step(np.int64(env.unwrapped.legal_actions()[0]))
    assert env.unwrapped.state_dict()["turn"] == 1


# ---------------------------------------------------------------- illegal actions, "penalize"
@by_game
@pytest.mark.parametrize("kind", ["illegal", "out_of_range", "not_int"])
def test_penalize_ends_the_episode_with_minus_one(module: ModuleType, kind: str) -> None:
    """TerminateIllegalWrapper convention: offender -1, others 0, everyone terminated."""
    env = started(module, 6, 4, illegal_action="penalize")
    offender = env.agent_selection
    action = {"illegal": an_illegal_id(env), "out_of_range": -5, "not_int": "draw"}[kind]
    env.step(action)
    assert env.rewards == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    assert all(env.terminations.values())
    assert env.unwrapped.legal_actions() == []
    seen = {}
    for agent in env.agent_iter():
        obs, reward, terminated, _, info = env.last()
        assert terminated and not obs["action_mask"].any()
        assert "illegal action" in info["illegal_action"]
        seen[agent] = reward
        env.step(None)
    assert seen == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}


# ---------------------------------------------------------------- action text
BAD_TEXT = [
    (switch_v1, "", "empty"),
    (switch_v1, "   ", "empty"),
    (switch_v1, "jump 9S", "unknown action 'jump'"),
    (switch_v1, "play", "needs a card"),
    (switch_v1, "play 9X", "unknown suit 'X'"),
    (switch_v1, "play 1S", "unknown rank '1'"),
    (switch_v1, "play JS", "play JS declare S"),
    (switch_v1, "play JS declare X", "unknown suit 'X'"),
    (switch_v1, "play 9S 9H", "exactly one card"),
    (switch_v1, "play 9S declare H", "only a Jack"),
    (switch_v1, "declare", "declare S"),
    (switch_v1, "draw 2", "takes no arguments"),
    (huit_v1, "", "empty"),
    (huit_v1, "fold", "unknown action 'fold'"),
    (huit_v1, "play", "needs a card"),
    (huit_v1, "play 9S 10H", "one rank"),
    (huit_v1, "play 8S", "declare S"),
    (huit_v1, "play 9S 9S", "9S appears twice"),
    (huit_v1, "play 2S", "2S is not in the 32-card deck"),
    (huit_v1, "play JOKER", "JOKER is not in the 32-card deck"),
    (huit_v1, "play 9S declare H", "only 8s"),
    (huit_v1, "play 9Z", "unknown suit 'Z'"),
    (huit_v1, "pass now", "takes no arguments"),
]


@pytest.mark.parametrize(("module", "text", "fragment"), BAD_TEXT, ids=case_ids(BAD_TEXT))
def test_bad_action_text_is_refused_with_the_reason(module: ModuleType, text: str, fragment: str) -> None:
    env = module.env()
    with pytest.raises(ValueError) as err:
        env.unwrapped.str_to_action(text)
    assert fragment in str(err.value)


@by_game
@pytest.mark.parametrize("action", [-1, "size"])
def test_action_to_str_refuses_out_of_range_ids(module: ModuleType, action: int | str) -> None:
    env = module.env()
    size = env.unwrapped.NUM_ACTIONS
    with pytest.raises(ValueError, match=rf"0\.\.{size - 1}"):
        env.unwrapped.action_to_str(size if action == "size" else action)


@by_game
def test_every_action_text_reads_back(module: ModuleType) -> None:
    """The text form is a faithful name: a message quoting it identifies one action id."""
    env = module.env().unwrapped
    ids = list(range(env.NUM_ACTIONS))
    assert [env.str_to_action(env.action_to_str(a)) for a in ids] == ids


# ---------------------------------------------------------------- stacked deals
SWITCH_HANDS = [["9S", "9S", "3C"], ["4C"], ["5C"], ["6C"]]
HUIT_HANDS = [["9S", "AS"], ["7C"], ["KD"], ["8H"]]
BAD_DEALS = [
    (switch_v1, {"hands": [["9S"] * 5, *SWITCH_HANDS[1:]], "starter": "5C"}, ["9S 5 times", "holds 4"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "9S", "stock": ["9S", "9S"]}, ["9S 5 times"]),
    (switch_v1, {"hands": [["JOKER"] * 9, *SWITCH_HANDS[1:]], "starter": "7C"}, ["JOKER 9 times", "holds 8"]),
    (switch_v1, {"hands": SWITCH_HANDS[:3], "starter": "5D"}, ["list of 4 lists"]),
    (switch_v1, {"hands": "9S 3C", "starter": "5D"}, ["list of 4 lists"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "bank": []}, ["unknown Switch deal key(s) bank"]),
    (switch_v1, {"hands": SWITCH_HANDS}, ["missing starter"]),
    (switch_v1, {"hands": [["9X"], ["4C"], ["5C"], ["6C"]], "starter": "5D"}, ["hands[0][0]", "9X"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "ZZ"}, ["starter", "ZZ"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "dealer": 4}, ["dealer", "0..3"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "dealer": -1}, ["dealer", "0..3"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "dealer": True}, ["dealer", "0..3"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "scores": [1, 2]}, ["scores", "4 whole numbers"]),
    (huit_v1, {"hands": [["9S", "9S"], ["7C"], ["KD"], ["8H"]]}, ["9S 2 times", "holds 1"]),
    (huit_v1, {"hands": HUIT_HANDS, "bank": ["AS"]}, ["AS 2 times"]),
    (huit_v1, {"hands": [["2S"], ["7C"], ["KD"], ["8H"]]}, ["2S 1 times", "holds 0"]),
    (huit_v1, {"hands": HUIT_HANDS[:2]}, ["list of 4 lists"]),
    (huit_v1, {"hands": HUIT_HANDS, "starter": "7S"}, ["unknown Huit deal key(s) starter", "bank"]),
    (huit_v1, {"bank": ["7S"]}, ["missing hands"]),
    (huit_v1, {"hands": [["9S", 9], ["7C"], ["KD"], ["8H"]]}, ["hands[0][1]", "card string"]),
    (huit_v1, {"hands": HUIT_HANDS, "dealer": "0"}, ["dealer", "0..3"]),
    # not a dict, card lists that are not lists, keys that are not strings
    (switch_v1, None, ["Switch deal must be a dict with the keys hands, starter, stock, dealer", "got None"]),
    (switch_v1, "9S 9H", ["Switch deal must be a dict", "got str '9S 9H'"]),
    (huit_v1, 7, ["Huit deal must be a dict with the keys hands, bank, dealer, scores, got int 7"]),
    (switch_v1, {"hands": [{"9S": 1}, *SWITCH_HANDS[1:]], "starter": "5D"},
     ["hands[0]: expected a list of card strings such as ['9S', '10H'], got dict {'9S': 1}"]),
    (huit_v1, {"hands": [{"9S", "AS"}, *HUIT_HANDS[1:]]}, ["hands[0]: expected a list of card", "got set"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "stock": {"9H": 1}}, ["stock: expected", "dict"]),
    (huit_v1, {"hands": HUIT_HANDS, "bank": None}, ["bank: expected a list of card strings", "got NoneType"]),
    (huit_v1, {"hands": HUIT_HANDS, "bank": "7S 7H"}, ["bank: expected a list of card strings, got the"]),
    (switch_v1, {"hands": None, "starter": "5D"}, ["'hands' must be a list of 4 lists", "got None"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": 5}, ["deal['starter'] must be one card string", "'7H'"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": ["5D"]}, ["deal['starter'] must be one card string"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", 1: 2}, ["deal key(s) 1; accepted: ",
                                                                  "keys are strings"]),
    (huit_v1, {"hands": HUIT_HANDS, None: []}, ["unknown Huit deal key(s) None; accepted: ",
                                                 "keys are strings"]),
    (huit_v1, {"hands": [["9S"], [], ["KD"], []]}, ["no cards to seat(s) [1, 3]"]),
    (huit_v1, {"hands": HUIT_HANDS, "scores": [0, 151, 0, 0]},  # the match would be over (B13)
     ["deal['scores'] must all be below target_score=151 while a hand is in play", "got [0, 151, 0, 0]"]),
    (switch_v1, {"hands": SWITCH_HANDS, "starter": "5D", "scores": [600, 0, 0, 0]}, ["target_score=500"]),
]


@pytest.mark.parametrize(("module", "deal", "fragments"), BAD_DEALS, ids=case_ids(BAD_DEALS))
def test_bad_deal_is_refused_with_the_reason(module: ModuleType, deal: Any, fragments: list[str]) -> None:
    env = module.env()
    with pytest.raises(ValueError) as err:
        env.reset(seed=0, options={"deal": deal})
    for fragment in fragments:
        assert fragment in str(err.value)


@by_game
@pytest.mark.parametrize("seed", [None, 9])
def test_refused_deal_changes_nothing(module: ModuleType, seed: int | None) -> None:
    """A refused deal leaves the hand in play, its generator included, as it was."""
    env = started(module, 0, 3)
    before = snapshot(env)
    with pytest.raises(ValueError, match="must be a dict"):
        env.reset(seed=seed, options={"deal": None})
    assert snapshot(env) == before


@by_game
def test_deal_and_state_together_are_refused(module: ModuleType) -> None:
    env = started(module, 0, 0)
    with pytest.raises(ValueError, match="not both"):
        env.reset(options={"deal": {"hands": []}, "state": env.unwrapped.state_dict()})


# ---------------------------------------------------------------- options
BAD_OPTIONS = [
    (switch_v1, {"num_players": 1}, ["num_players=1", "2 to 10"]),
    (switch_v1, {"num_players": 11}, ["num_players=11", "2 to 10"]),
    (huit_v1, {"num_players": 1}, ["num_players=1", "2 to 6"]),
    (huit_v1, {"num_players": 7}, ["num_players=7", "2 to 6"]),
    (switch_v1, {"hand_size": 60}, ["hand_size=60", "deck holds 216"]),
    (switch_v1, {"hand_size": 0}, ["hand_size=0", "1 to 279"]),
    (huit_v1, {"hand_size": 9}, ["hand_size=9", "1 to 8", "'all'"]),
    (huit_v1, {"hand_size": "most"}, ["hand_size", "'most'", "'all'"]),
    (switch_v1, {"num_players": "4"}, ["num_players", "whole number"]),
    (switch_v1, {"match_rank": 1}, ["match_rank", "true or false"]),
    (huit_v1, {"queen_skips_each": "yes"}, ["queen_skips_each", "true or false"]),
    (huit_v1, {"max_turns": 0}, ["max_turns=0", "1 to 1,000,000"]),
    (switch_v1, {"foo": 1}, ["foo", "accepted", "num_players", "env options"]),
    (huit_v1, {"num_decks": 2}, ["num_decks", "accepted", "hand_size"]),
    (switch_v1, {"episode": "foo"}, ["env option episode='foo' is not one of the choices; accepted: 'hand', "
                                     "'match'"]),
    (huit_v1, {"reward": "x"}, ["env option reward='x' is not one of the choices; accepted: 'win', "
                                "'points'"]),
    (switch_v1, {"illegal_action": "y"}, ["env option illegal_action='y' is not one of the choices; "
                                          "accepted: 'raise', 'penalize'"]),
    (huit_v1, {"render_mode": "rgb"}, ["env option render_mode='rgb' is not one of the choices; accepted: "
                                       "None, 'ansi', 'human'"]),
    (huit_v1, {"reward": ["win"]}, ["env option reward=['win'] is not one of the choices; accepted: "
                                    "'win'"]),
]


@pytest.mark.parametrize(("module", "options", "fragments"), BAD_OPTIONS, ids=case_ids(BAD_OPTIONS))
def test_bad_option_is_refused_naming_what_is_accepted(
    module: ModuleType, options: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(ValueError) as err:
        module.env(**options)
    for fragment in fragments:
        assert fragment in str(err.value)
    # The env options are listed only when a name is unknown (it may be one of them), not after a bad value.
    unknown_name = any(k not in module.raw_env.SPEC.rules.names() for k in options)
    env_option = set(options) & {"render_mode", "episode", "reward", "illegal_action"}
    assert ("env options" in str(err.value)) == (unknown_name and not env_option)


# ---------------------------------------------------------------- saved states
def test_state_of_the_other_game_is_refused() -> None:
    switch_state = started(switch_v1, 0, 3).unwrapped.state_dict()
    huit_state = started(huit_v1, 0, 3).unwrapped.state_dict()
    with pytest.raises(ValueError, match="for game 'switch', not 'huit'"):
        huit_v1.env().reset(options={"state": switch_state})
    with pytest.raises(ValueError, match="for game 'huit', not 'switch'"):
        switch_v1.env().reset(options={"state": huit_state})


@pytest.mark.parametrize(
    ("module", "saved_with", "restored_with"),
    [
        (switch_v1, {}, {"match_rank": False}),
        (switch_v1, {"num_players": 4}, {"num_players": 5}),
        (huit_v1, {"hand_size": 5}, {"hand_size": "all"}),
        (huit_v1, {}, {"max_turns": 999}),
    ],
)
def test_state_with_other_rule_options_is_refused(
    module: ModuleType, saved_with: dict[str, Any], restored_with: dict[str, Any]
) -> None:
    saved = started(module, 1, 3, **saved_with).unwrapped.state_dict()
    with pytest.raises(ValueError, match="create the env with the saved options") as err:
        module.env(**restored_with).reset(options={"state": saved})
    name, value = next(iter(restored_with.items()))
    assert f"{name}=" in str(err.value) and f"(env: {value!r})" in str(err.value)


@by_game
def test_damaged_state_is_refused(module: ModuleType) -> None:
    """A saved state with a key missing, or with an extra copy of a card, does not load."""
    env = started(module, 2, 5)
    saved = env.unwrapped.state_dict()
    with pytest.raises(ValueError, match="missing turn"):
        module.env().reset(options={"state": {k: v for k, v in saved.items() if k != "turn"}})
    hands = [list(h) for h in saved["hands"]]
    hands[0] += [hands[1][0]] * 9
    with pytest.raises(ValueError, match=rf"{hands[1][0]} \d+ times"):
        module.env().reset(options={"state": {**saved, "hands": hands}})
    with pytest.raises(ValueError, match="must be a dict"):
        module.env().reset(options={"state": [saved]})
