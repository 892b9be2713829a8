"""PettingZoo `state()`, finished saved states, and the one rule for action ids, in both games.

Why: `state()` is what centralised critics read, so it must hold every card
(all hands and the pile) and stay inside `state_space`; a saved finished hand
must not come back as a live game nobody can move in; and `step` and
`action_to_str` must agree on what an action id is.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from cardlab.envs import huit_v1, switch_v1
from tests.envs.helpers import play_random

by_game = pytest.mark.parametrize("module", [switch_v1, huit_v1], ids=["switch", "huit"])


@by_game
@pytest.mark.parametrize("players", [2, 3])
def test_state_holds_every_card_and_stays_in_its_space(module: ModuleType, players: int) -> None:
    env = module.env(num_players=players)
    raw = env.unwrapped
    rng = np.random.default_rng(players)
    for seed in range(3):
        env.reset(seed=seed)
        while True:
            vector = raw.state()
            assert vector.shape == raw.state_space.shape and vector in raw.state_space
            parts = raw.game.state_layout.split(vector)
            st = raw.game_state
            mover = np.flatnonzero(parts["to_move"]).tolist()
            assert mover == ([] if st.hand_over else [st.current])
            # Seat 0's observation, verbatim, then every other seat's cards and the whole face-down pile.
            public = raw.observe("player_0")["observation"]
            assert np.array_equal(np.concatenate([parts[f.name] for f in raw.layout.fields]), public)
            hidden = raw.observer.observe_hidden(st, 0)
            assert np.array_equal(np.concatenate([parts["other_hands"], parts["pile_next"]]), hidden)
            pile = getattr(st, st.PILES[0])
            assert (parts["pile"] > 0).sum() == len(set(pile))
            if st.hand_over:
                break
            play_random(env, rng, 1)


@by_game
def test_state_before_reset_says_so(module: ModuleType) -> None:
    with pytest.raises(RuntimeError, match="call reset"):
        module.raw_env().state()


@by_game
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_a_finished_state_restores_finished(module: ModuleType, episode: str) -> None:
    """A state saved at the end of a hand (or match) restores ended: terminations set, no moves offered."""
    env = module.env(num_players=2, episode=episode, target_score=1)
    env.reset(seed=5)
    play_random(env, np.random.default_rng(5), 10_000)
    saved = env.unwrapped.state_dict()
    assert saved["hand_over"]
    again = module.env(num_players=2, episode=episode, target_score=1)
    again.reset(options={"state": saved})
    raw = again.unwrapped
    done = raw.truncations if saved["truncated"] else raw.terminations
    assert all(done.values())
    assert raw.legal_actions() == []
    assert not again.observe(again.agent_selection)["action_mask"].any()
    assert raw.state_dict() == saved
    for _agent in again.agent_iter():
        again.step(None)  # PettingZoo's way out of a finished episode
    assert again.agents == []


@by_game
@pytest.mark.parametrize("make", [int, np.int16, np.int64, lambda a: np.array(a, dtype=np.int32)],
                         ids=["int", "int16", "int64", "0-d array"])
def test_integer_action_ids_are_accepted_by_step_and_action_to_str(module: ModuleType, make: object) -> None:
    env = module.env(num_players=2)
    env.reset(seed=2)
    legal = env.unwrapped.legal_actions()[0]
    action = make(legal)  # type: ignore[operator]
    assert env.unwrapped.action_to_str(action) == env.unwrapped.action_to_str(legal)
    env.step(action)
    assert env.unwrapped.state_dict()["turn"] == 1


@by_game
@pytest.mark.parametrize("action", [1.0, np.float32(1), "1", True, np.bool_(True), np.array([1]), None],
                         ids=repr)
def test_non_integer_action_ids_are_refused_alike(module: ModuleType, action: object) -> None:
    env = module.env(num_players=2)
    env.reset(seed=2)
    before = env.unwrapped.state_dict()
    with pytest.raises(ValueError, match="not an action id"):
        env.unwrapped.action_to_str(action)
    with pytest.raises(ValueError, match="not an action id"):
        env.step(action)
    assert env.unwrapped.state_dict() == before
