"""The generic batch (`cardlab.envs.generic_batch`) plays as the rules engine and the game's own batch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cardlab.envs import get_spec
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.game_spec import GameSpec
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.match import win_rewards
from cardlab.envs.switch.batched import SwitchBatch
from tests.envs.helpers import position


def without_engine(game: str) -> GameSpec:
    """The game's spec as a game without a batched engine of its own would declare it."""
    return dataclasses.replace(get_spec(game), batched=None)


def test_batched_engine_names_each_games_own_class_and_the_generic_one_otherwise() -> None:
    assert get_spec("huit").batched_engine() is HuitBatch
    assert get_spec("switch").batched_engine() is SwitchBatch
    spec = without_engine("huit")
    engine = spec.batched_engine()
    assert engine.__name__ == "HuitGenericBatch" and engine is spec.batched_engine()
    with pytest.raises(ValueError, match="has no batched engine"):
        spec.batched_engine(generic=False)


@pytest.mark.parametrize("game", ["huit", "switch"])
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_generic_batch_steps_as_the_games_own_batch(game: str, episode: str) -> None:
    """Same seed, same actions: the same states, masks, observations, rewards and ends, step by step."""
    spec = get_spec(game)
    rules = spec.make({"num_players": 3, "max_turns": 120, "target_score": 30}).rules
    own = spec.batched_engine()(rules, 5, seed=7, episode=episode)
    generic = without_engine(game).batched_engine()(rules, np.int64(5), seed=7, episode=episode)
    rng = np.random.default_rng(3)
    ends = 0
    for _ in range(400):
        mask = own.legal_mask()
        np.testing.assert_array_equal(generic.legal_mask(), mask)
        seats = own.current_player()
        np.testing.assert_array_equal(generic.current_player(), seats)
        np.testing.assert_array_equal(generic.observe(seats), own.observe(seats))
        actions = sample_legal(mask, rng)
        want, got = own.step(actions), generic.step(actions)
        for a, b in zip(want, got, strict=True):
            np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(generic.score_changes(), own.score_changes())
        assert all(position(generic.state_dict(i)) == position(own.state_dict(i)) for i in range(5))
        finished = got[1] | got[2]
        ends += int(finished.sum())
        own.reset(finished)
        generic.reset(finished)
    assert ends > 5  # the comparison went through ends of episodes and resets


def test_generic_batch_is_the_rules_engine_with_win_rewards() -> None:
    spec = without_engine("switch")
    rules = spec.make({"num_players": 2}).rules
    batch = spec.batched_engine()(rules, 3, seed=1)
    states = [batch.to_state(i) for i in range(3)]
    rng = np.random.default_rng(0)
    while not (batch.done | batch.truncated).all():
        actions = sample_legal(batch.legal_mask(), rng)
        rewards, done, truncated = batch.step(actions)
        for i, state in enumerate(states):
            if state.hand_over:
                assert not rewards[i].any()
                continue
            state.apply(int(actions[i]))
            want = win_rewards(2, [state.winner]) if state.hand_over and not state.truncated else [0.0, 0.0]
            assert rewards[i].tolist() == want
            assert (done[i], truncated[i]) == (state.hand_over and not state.truncated, state.truncated)
            assert position(batch.state_dict(i)) == position(state.state_dict())


def test_generic_batch_refuses_before_moving_and_holds_inactive_slots() -> None:
    spec = without_engine("huit")
    batch = spec.batched_engine()(spec.make({"num_players": 2}).rules, 2, seed=4)
    before = [batch.state_dict(i) for i in range(2)]
    mask = batch.legal_mask()
    bad = np.array([int(np.flatnonzero(mask[0])[0]), int(np.flatnonzero(~mask[1])[0])])
    with pytest.raises(ValueError, match="slot 1: illegal action"):
        batch.step(bad)
    assert [batch.state_dict(i) for i in range(2)] == before
    batch.step(sample_legal(mask, np.random.default_rng(0)), active=np.array([False, True]))
    assert batch.state_dict(0) == before[0] and batch.state_dict(1) != before[1]
    with pytest.raises(ValueError, match="rules must be HuitRules"):
        spec.batched_engine()(get_spec("switch").make().rules, 2)
    with pytest.raises(ValueError, match="batch_size"):
        spec.batched_engine()(batch.rules, 0)
