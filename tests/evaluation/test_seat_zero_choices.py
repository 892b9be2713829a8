"""`seat_zero_choices`: seat 0's choices of a hand the agents play, each met before its move."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.envs import make_env
from cardlab.envs.world_replay import deals_back
from cardlab.evaluation.episodes import run_episode, seat_zero_choices


def greedy_table(players: int) -> tuple[Any, list[Any]]:
    env = make_env("huit", num_players=players)
    return env, [make_agent("greedy", env.unwrapped.game, seed=s) for s in range(players)]


@pytest.mark.parametrize("players", [2, 4])
def test_each_choice_is_seat_zero_s_with_a_choice_and_says_whether_its_record_replays(players: int) -> None:
    """Met at the decision itself (seat 0 to move, more than one legal move); a record said to replay is
    played back from the deal in sampled worlds, one said not to is refused for the reason given."""
    env, agents = greedy_table(players)
    rng = np.random.default_rng(0)
    replays = refused = 0
    for hand in range(6):
        for choice in seat_zero_choices(env, agents, seed=hand):
            raw = choice.raw
            assert raw is env.unwrapped and raw.agent_selection == choice.name
            assert raw.agent_seat[choice.name] == 0
            assert np.count_nonzero(choice.obs["action_mask"]) > 1
            assert choice.record == raw.public_record(choice.name)
            known = choice.determinization()
            if choice.unreplayable is None:
                assert deals_back(known, known.deal(rng, 16), choice.record, rng).ok.any()
                replays += 1
            else:
                with pytest.raises(ValueError, match=re.escape(choice.unreplayable)):
                    deals_back(known, known.deal(rng, 16), choice.record, rng)
                refused += 1
    assert replays >= 20 and refused >= 1


def test_the_agents_play_the_whole_hand_as_run_episode_plays_it() -> None:
    """Every move is the agents' own, the yielded decisions' too: the hand ends as `run_episode` ends it
    from the same seed, and the same seed meets the same choices again."""
    def met(seed: int) -> tuple[list[Any], Any]:
        env, agents = greedy_table(2)
        choices = [(c.record, c.obs["action_mask"].tolist(), c.unreplayable)
                   for c in seat_zero_choices(env, agents, seed)]
        assert not env.unwrapped.agents  # played to the end
        return choices, env.unwrapped.public_record(env.unwrapped.possible_agents[0])

    for seed in (5, 11):
        choices, record = met(seed)
        env, agents = greedy_table(2)
        run_episode(env, agents, seed)
        assert record == env.unwrapped.public_record(env.unwrapped.possible_agents[0])
        assert choices and met(seed) == (choices, record)
