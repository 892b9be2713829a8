"""`live_turns`: the one AEC play loop, yielding the turns that are played and stepping the finished agents.

Why: every play loop of the package (evaluation, teach positions, reader data,
benchmarks) walks an episode through it, so it must yield each seat's turn
when that seat is to move (the state's mover, its observation and mask), no
finished agent, and run until PettingZoo's episode is over (every agent
stepped out), in single hands and in matches (A1: turns pass round the table).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cardlab.envs import make_env
from cardlab.envs.aec import live_turns

TABLES = [("huit", 2, "hand"), ("huit", 4, "hand"), ("switch", 3, "hand"), ("huit", 3, "match")]


def raw_api_turns(env: Any, seed: int) -> list[tuple[str, bytes, bytes]]:
    """The played turns of a hand as PettingZoo's documented loop finds them, each seat moving at random."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    turns = []
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        turns.append((name, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return turns


@pytest.mark.parametrize(("game", "players", "episode"), TABLES)
def test_it_yields_each_played_turn_in_order_by_the_seat_to_move_until_the_episode_ends(
        game: str, players: int, episode: str) -> None:
    env = make_env(game, num_players=players, episode=episode)
    raw = env.unwrapped
    for seed in range(3):
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        turns = []
        for name, seat, obs in live_turns(env):
            state = raw.game_state
            assert not state.hand_over and seat == state.current and name == env.agent_selection
            assert name == raw.possible_agents[seat]
            assert np.array_equal(np.flatnonzero(obs["action_mask"]), sorted(raw.legal_actions()))
            assert np.array_equal(obs["observation"], env.observe(name)["observation"])
            turns.append((name, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert raw.game_state.hand_over and env.agents == []  # every finished agent stepped out
        assert episode == "hand" or raw.game_state.match_over
        assert {name for name, _, _ in turns} == set(raw.possible_agents)  # every seat's turns
        assert turns == raw_api_turns(make_env(game, num_players=players, episode=episode), seed)


def test_a_loop_left_at_a_turn_leaves_the_next_reset_to_start_afresh() -> None:
    env = make_env("huit", num_players=3)
    env.reset(seed=1)
    for count, (_, _, obs) in enumerate(live_turns(env)):
        if count == 4:
            break
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    env.reset(seed=1)
    name, seat, obs = next(live_turns(env))
    fresh = make_env("huit", num_players=3)
    fresh.reset(seed=1)
    assert name == fresh.agent_selection and seat == fresh.unwrapped.agent_seat[name]
    assert np.array_equal(obs["observation"], fresh.observe(name)["observation"])
