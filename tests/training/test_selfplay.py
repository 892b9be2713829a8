"""Self-play over the batched engines: points of view, credit of rewards, who yields transitions, seeds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from cardlab.agents.bot import load_bot
from cardlab.envs import make_game
from cardlab.training.arena.league import LeagueSettings, save_snapshot
from cardlab.training.arena.selfplay import LEARNER, SelfPlayBatch, SelfPlayVecEnv, credit
from cardlab.training.trainers.ppo import advantages
from tests.envs.helpers import position

RANDOM = LeagueSettings((("random", 1.0),))
CASES = [("huit", 2), ("huit", 3), ("switch", 4)]


def _rollout(table: SelfPlayBatch, steps: int, seed: int) -> dict[str, np.ndarray]:
    """Random legal learner moves for `steps` calls; everything `credit` needs, stacked over time."""
    rng = np.random.default_rng(seed)
    keep: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "seats", "learner", "rewards", "ended")}
    for _ in range(steps):
        obs, mask, seats, learner = table.observe()
        u = rng.random(mask.shape)
        actions = np.where(mask, u, -1.0).argmax(axis=1)
        rewards, ended = table.step(actions)
        for key, value in zip(keep, (obs, seats, learner, rewards, ended), strict=True):
            keep[key].append(value)
    return {k: np.stack(v) for k, v in keep.items()}


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_observation_is_the_seat_to_move_point_of_view(game_id: str, n: int) -> None:
    game = make_game(game_id, num_players=n)
    table = SelfPlayBatch(game, 8, RANDOM, learner_share=0.5, seed=3)
    for _ in range(30):
        obs, mask, seats, learner = table.observe()
        for b in range(8):
            state = table.engine.to_state(b)
            assert seats[b] == state.current
            np.testing.assert_array_equal(obs[b], game.observer.observe(state, int(seats[b])))
            assert sorted(np.flatnonzero(mask[b])) == sorted(state.legal_actions())
            assert learner[b] == (table.owners[b, seats[b]] == LEARNER)
        table.step(np.where(mask, 1.0, 0.0).argmax(axis=1))


def _assert_episode_ends_reach_every_seat(data: dict[str, np.ndarray], n: int) -> None:
    """Each seat's last move of an episode carries the seat's reward at its end and is terminal; its other
    moves are not, and chain to its next move of the same episode."""
    rewards, ended, seats, learner = data["rewards"], data["ended"], data["seats"], data["learner"]
    assert learner.all()  # every seat is the learner's
    np.testing.assert_allclose(rewards.sum(axis=2), 0.0, atol=1e-6)  # zero-sum
    assert ended.any()
    reward, terminal, next_index = credit(rewards, ended, seats, learner)
    B = ended.shape[1]
    for b in range(B):
        start = 0
        for end in np.flatnonzero(ended[:, b]):
            moved = {int(seats[t, b]) for t in range(start, end + 1)}
            last = {s: max(t for t in range(start, end + 1) if seats[t, b] == s) for s in moved}
            for s, t in last.items():  # each seat's last move of the hand carries its reward, terminal
                assert terminal[t, b] and next_index[t, b] == -1
                assert reward[t, b] == pytest.approx(rewards[end, b, s])
            for t in range(start, end + 1):
                if t not in last.values():
                    assert not terminal[t, b] and reward[t, b] == 0.0
                    assert seats[next_index[t, b], b] == seats[t, b] and t < next_index[t, b] <= end
            start = end + 1
        assert (next_index[start:, b] == -1).sum() <= n and not terminal[start:, b].any()


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_hand_end_rewards_reach_every_learner_seat(game_id: str, n: int) -> None:
    table = SelfPlayBatch(make_game(game_id, num_players=n), 16, RANDOM, learner_share=1.0, seed=1)
    _assert_episode_ends_reach_every_seat(_rollout(table, 300, seed=2), n)


SHORT_MATCH = {"huit": 40, "switch": 60}
"""target scores that end a match of random play in a few hands"""


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_match_win_rewards_reach_every_learner_seat_at_the_match_end(game_id: str, n: int) -> None:
    """With match episodes a hand's end inside a match pays nothing and ends no chain; the match's win
    reward comes at its end, on every seat's last transition of the match."""
    game = make_game(game_id, num_players=n, target_score=SHORT_MATCH[game_id])
    table = SelfPlayBatch(game, 16, RANDOM, learner_share=1.0, seed=1, episode="match")
    data = _rollout(table, 600, seed=2)
    went_on = (data["obs"][..., game.layout.slices["scores"]] != 0).any(axis=2)
    assert went_on.sum() > 100  # moves after a hand's end inside a match: scores in the observation
    assert not data["rewards"][~data["ended"]].any()  # no reward at a hand's end inside a match
    won = data["rewards"][data["ended"]]
    assert (won.max(axis=1) > 0).sum() >= 5  # matches won (a truncated hand ends one with 0)
    _assert_episode_ends_reach_every_seat(data, n)


@pytest.mark.parametrize(("changes", "expected"), [
    ({"episode": "round"}, "episode='round' is not one of the choices; accepted: 'hand', 'match'"),
    ({"episode": "match", "reward": "points"},
     "reward='points' is not accepted with episode: match; accepted: 'win' (the match's win reward) or "
     "'match' (its equity's change at each hand's end); 'points' pays each hand's points, as hand "
     "episodes do"),
    ({"learner_share": 1.5}, "learner_share=1.5 is out of range; accepted: a number from 0 to 1"),
])
def test_the_table_refuses_what_it_does_not_play(changes: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):  # the whole sentence: one wording
        SelfPlayBatch(make_game("huit", num_players=2), 2, RANDOM, seed=0, **changes)


@pytest.mark.parametrize(("game_id", "n"), [("huit", 3), ("switch", 4)])
def test_the_table_view_is_every_seat_observation_from_the_given_seat_on(game_id: str, n: int) -> None:
    game = make_game(game_id, num_players=n)
    table = SelfPlayBatch(game, 3, RANDOM, seed=2)
    _rollout(table, 7, seed=3)
    size = game.layout.size
    first = np.array([0, 1, n - 1])
    view = table.observe_table(first)
    assert view.shape == (3, n * size)
    for b in range(3):
        state = table.engine.to_state(b)
        for k in range(n):  # block k: seat first + k (mod n), as the game's observer sees it
            np.testing.assert_array_equal(view[b, k * size:(k + 1) * size],
                                          game.observer.observe(state, int(first[b] + k) % n))
    obs, _, seats, _ = table.observe()
    np.testing.assert_array_equal(table.observe_table(seats)[:, :size], obs)  # the acting seat's own first
    both, movers_table = table.observe_with_table()  # the same, each seat observed once
    for part, expected in zip(both, table.observe(), strict=True):
        np.testing.assert_array_equal(part, expected)
    np.testing.assert_array_equal(movers_table, table.observe_table(seats))
    every = table.observe_table(np.broadcast_to(np.arange(n), (3, n)))
    assert every.shape == (3, n, n * size)
    for s in range(n):
        np.testing.assert_array_equal(every[:, s], table.observe_table(np.full(3, s)))


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_points_reward_pays_each_seat_minus_its_hand_points(game_id: str, n: int) -> None:
    """reward: points as the AEC env pays it: at a won hand's end, -score change / 100 per seat, else 0."""
    game = make_game(game_id, num_players=n)
    table = SelfPlayBatch(game, 8, RANDOM, learner_share=1.0, seed=5, reward="points")
    rng = np.random.default_rng(6)
    won = 0
    for _ in range(250):
        before = [table.engine.to_state(b) for b in range(8)]
        mask = table.observe()[1]
        actions = np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)
        rewards, ended = table.step(actions)
        for b, state in enumerate(before):
            state.apply(int(actions[b]))
            assert ended[b] == state.hand_over
            expected = [-c / 100.0 for c in state.score_changes] if state.hand_over and not state.truncated \
                else [0.0] * n
            np.testing.assert_allclose(rewards[b], expected, rtol=0, atol=1e-6)
            won += bool(state.hand_over and not state.truncated)
    assert won >= 5


def test_heuristic_and_snapshot_seats_yield_no_transitions(tmp_path: Path) -> None:
    game = make_game("huit", num_players=3)
    obs_size, actions = game.layout.size, game.num_actions
    actor = nn.Sequential(nn.Linear(obs_size, 16), nn.Tanh(), nn.Linear(16, actions))
    save_snapshot(actor, tmp_path, 0, game="huit", rules={}, num_players=3)
    league = LeagueSettings((("greedy", 1.0),), snapshot_dir=str(tmp_path), snapshot_share=0.5)
    table = SelfPlayBatch(game, 32, league, learner_share=0.0, seed=5)
    assert "snapshot_000000000000" in table.policies and "greedy" in table.policies
    assert ((table.owners == LEARNER).sum(axis=1) == 1).all()  # only the kept seat is the learner's
    data = _rollout(table, 200, seed=6)
    reward, terminal, next_index = credit(data["rewards"], data["ended"], data["seats"], data["learner"])
    assert 0 < data["learner"].mean() < 0.6
    off = ~data["learner"]
    assert (reward[off] == 0).all() and not terminal[off].any() and (next_index[off] == -1).all()


def test_snapshot_plays_as_its_bot_file(tmp_path: Path) -> None:
    game = make_game("huit", num_players=2)
    actor = nn.Sequential(nn.Linear(game.layout.size, 8), nn.ReLU(), nn.Linear(8, game.num_actions))
    path = save_snapshot(actor, tmp_path, 7, game="huit", rules={}, num_players=2)
    league = LeagueSettings((("random", 1.0),), snapshot_dir=str(tmp_path), snapshot_share=1.0,
                            snapshot_deterministic=True)
    table = SelfPlayBatch(game, 16, league, learner_share=0.0, seed=0)
    bot = load_bot(path, game)
    for _ in range(20):
        obs, mask, _, learner = table.observe()
        before = [table.engine.to_state(b) for b in range(16)]
        _, ended = table.step(np.where(mask, 1.0, 0.0).argmax(axis=1))
        for b in np.flatnonzero(~learner & ~ended):  # the snapshot's move is its bot's masked argmax
            before[b].apply(bot.act({"observation": obs[b], "action_mask": mask[b]}))
            assert json.dumps(position(before[b].state_dict()), default=str) == json.dumps(
                position(table.engine.state_dict(int(b))), default=str)


def test_same_seed_same_games() -> None:
    def run() -> dict[str, np.ndarray]:
        table = SelfPlayBatch(make_game("switch", num_players=4), 8, RANDOM, learner_share=0.5, seed=11)
        return _rollout(table, 100, seed=12)

    first, second = run(), run()
    for key in first:
        np.testing.assert_array_equal(first[key], second[key])


def test_advantages_follow_each_seat_chain() -> None:
    # One game, two seats alternating; seat 0 moves at t=0, 2 and seat 1 at t=1; the hand ends at t=2
    # (seat 0 wins +1, seat 1 gets -1), then a new hand where seat 1 moves at t=3 (cut by the rollout).
    rewards = np.zeros((4, 1, 2), dtype=np.float32)
    rewards[2, 0] = (1.0, -1.0)
    ended = np.array([[False], [False], [True], [False]])
    seats = np.array([[0], [1], [0], [1]])
    learner = np.ones((4, 1), dtype=bool)
    reward, terminal, next_index = credit(rewards, ended, seats, learner)
    assert reward[:, 0].tolist() == [0.0, -1.0, 1.0, 0.0]
    assert terminal[:, 0].tolist() == [False, True, True, False]
    assert next_index[:, 0].tolist() == [2, -1, -1, -1]
    values = torch.tensor([[0.5], [0.1], [0.7], [0.2]])
    last = torch.tensor([[0.0, 0.3]])
    adv = advantages(torch.as_tensor(reward), torch.as_tensor(terminal), torch.as_tensor(next_index),
                     values, last, torch.as_tensor(seats), gamma=1.0, lam=1.0)
    # gamma = lambda = 1: the advantage is the chain's return minus the value
    assert adv[:, 0].tolist() == pytest.approx([1.0 - 0.5, -1.0 - 0.1, 1.0 - 0.7, 0.3 - 0.2])


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_held_games_keep_their_state(game_id: str, n: int) -> None:
    table = SelfPlayBatch(make_game(game_id, num_players=n), 8, RANDOM, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        active = rng.random(8) < 0.5
        before = [json.dumps(table.engine.state_dict(b), default=str) for b in range(8)]
        _, mask, _, _ = table.observe()
        rewards, ended = table.step(np.where(mask, 1.0, 0.0).argmax(axis=1), active=active)
        for b in np.flatnonzero(~active):
            assert json.dumps(table.engine.state_dict(int(b)), default=str) == before[b]
            assert not ended[b] and not rewards[b].any()


@pytest.mark.parametrize(("game_id", "n"), [("huit", 2), ("switch", 4)])
def test_vec_env_gives_the_learner_seat_its_turns_and_hand_rewards(game_id: str, n: int) -> None:
    game = make_game(game_id, num_players=n)
    env = SelfPlayVecEnv(game, 8, RANDOM, seed=2)
    obs = env.reset()
    rng = np.random.default_rng(1)
    finished = 0
    for _ in range(300):
        masks = env.action_masks()
        seats = env.table.engine.current_player()
        assert (env.table.owners[np.arange(8), seats] == LEARNER).all()
        np.testing.assert_array_equal(obs, env.table.engine.observe(seats))
        env.step_async(np.where(masks, rng.random(masks.shape), -1.0).argmax(axis=1))
        obs, rewards, dones, _ = env.step_wait()
        outcomes = rewards[dones][:, None]
        assert np.isclose(outcomes, [1.0, -1.0 / (n - 1), 0.0]).any(axis=1).all()
        assert not rewards[~dones].any()
        finished += int(dones.sum())
    assert finished > 0


def test_maskable_ppo_trains_on_the_vec_env() -> None:
    from sb3_contrib import MaskablePPO

    env = SelfPlayVecEnv(make_game("huit", num_players=2), 4, RANDOM, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1,
                        policy_kwargs={"net_arch": [16]}, seed=0)
    model.learn(256)
    assert model.num_timesteps == 256


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_the_table_plays_on_the_engine_its_game_spec_names(game: str) -> None:
    """Self-play takes its engine from `GameSpec.batched_engine()`: no list of games of its own."""
    rules = make_game(game, num_players=2)
    table = SelfPlayBatch(rules, 4, LeagueSettings(opponents=(("random", 1.0),)), seed=0)
    assert type(table.engine) is rules.spec.batched_engine()
    assert type(table.engine).__name__ == {"huit": "HuitBatch", "switch": "SwitchBatch"}[game]



def test_a_bot_spec_plays_batched_as_its_bot_agent() -> None:
    """A ``bot:`` opponent spec moves all its games in one forward pass, each move its BotAgent's argmax."""
    game = make_game("huit", num_players=2)
    table = SelfPlayBatch(game, 16, LeagueSettings((("bot:huit-2p", 1.0),)), learner_share=0.0, seed=0)
    bot = load_bot(Path(__file__).resolve().parents[2] / "agents" / "bots" / "huit-2p.json", game)
    moved = 0
    for _ in range(30):
        obs, mask, _, learner = table.observe()
        before = [table.engine.to_state(b) for b in range(16)]
        _, ended = table.step(np.where(mask, 1.0, 0.0).argmax(axis=1))
        for b in np.flatnonzero(~learner & ~ended):
            before[b].apply(bot.act({"observation": obs[b], "action_mask": mask[b]}))
            assert json.dumps(position(before[b].state_dict()), default=str) == json.dumps(
                position(table.engine.state_dict(int(b))), default=str)
            moved += 1
    assert moved > 100
    assert not table.players.agents  # no agent was built: the bot played batched, as a network
