"""The single-seat view: the learner's point of view, its rewards, seats, masks, truncation, the league."""

from __future__ import annotations

import collections
import pathlib
from typing import Any

import numpy as np
import pytest
from sb3_contrib import MaskablePPO

from cardlab.agents.base import Agent, register
from cardlab.training.arena.league import (
    League,
    LeagueSettings,
    list_snapshots,
    save_snapshot,
    snapshot_steps,
)
from cardlab.training.arena.single_seat import SingleSeatEnv, discounted_returns, make_game_env


class LowestLegal(Agent):
    """Plays its lowest legal action id: a scripted opponent for stacked deals."""

    name = "test_lowest_legal"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


register(LowestLegal.name, LowestLegal)

# Huit, 2 players, seat 0 (the learner) moves first (dealer = seat 1). The
# opponent holds one 8: after the learner's 7S it lays the 8 (its lowest id,
# before draw) and goes out, so the hand ends on the opponent's move.
OPPONENT_GOES_OUT = {"hands": [["7S", "9H", "KD"], ["8C"]], "bank": ["10S", "JH", "QC"]}
LEARNER_GOES_OUT = {"hands": [["7S"], ["8C", "9D"]], "bank": ["10S", "JH", "QC"]}


def play_random(
    env: SingleSeatEnv, rng: np.random.Generator
) -> tuple[list[float], dict[str, Any], bool, bool]:
    """Random legal learner actions to the end of the hand: (rewards, last info, terminated, truncated)."""
    rewards: list[float] = []
    while True:
        legal = np.flatnonzero(env.action_masks())
        _, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info, terminated, truncated


def test_spaces_hold_what_the_env_returns() -> None:
    # (SB3's check_env cannot be used: it steps with unmasked random actions, which the env refuses.)
    env = SingleSeatEnv("huit", 2, opponents=["random"])
    assert env.observation_space.shape == (env.game_env.layout.size,)
    assert env.action_space.n == env.game_env.NUM_ACTIONS
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert env.observation_space.contains(obs)
        assert env.action_space.contains(int(np.flatnonzero(env.action_masks())[0]))
        obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert isinstance(reward, float)
        if terminated or truncated:
            obs, _ = env.reset()


@pytest.mark.parametrize(("game", "n"), [("huit", 2), ("huit", 3), ("switch", 4)])
def test_every_observation_is_the_learners_own_at_its_decision(game: str, n: int) -> None:
    env = SingleSeatEnv(game, n, opponents=["random"])
    rng = np.random.default_rng(3)
    raw = env.game_env
    for hand in range(15):
        obs, _ = env.reset(seed=hand)
        done = False
        while not done:
            assert raw.agent_selection == env.learner
            np.testing.assert_array_equal(obs, raw.observer.observe(raw.game_state, env.seat))
            mask = env.action_masks()
            assert mask.dtype == bool
            assert set(np.flatnonzero(mask)) == set(raw.legal_actions())
            obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            done = terminated or truncated
        # The final observation is still the learner's, and there is nothing left to do.
        np.testing.assert_array_equal(obs, raw.observer.observe(raw.game_state, env.seat))
        assert not env.action_masks().any()


def test_learner_gets_its_loss_when_an_opponent_ends_the_hand() -> None:
    env = SingleSeatEnv("huit", 2, opponents=[LowestLegal.name])
    obs, info = env.reset(seed=0, options={"seat": 0, "deal": OPPONENT_GOES_OUT})
    assert info["seat"] == 0 and env.game_env.agent_selection == "player_0"
    obs, reward, terminated, truncated, info = env.step(env.game_env.str_to_action("play 7S"))
    assert env.game_env.game_state.winner == 1  # the opponent made the last move
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["winner"] == 1 and not info["won"]
    assert info["hand_points"] == 9 + 4  # 9H and KD left (B11)
    np.testing.assert_array_equal(obs, env.game_env.observer.observe(env.game_env.game_state, 0))


def test_points_reward_also_reaches_the_learner_on_the_opponents_move() -> None:
    env = SingleSeatEnv("huit", 2, opponents=[LowestLegal.name], reward="points")
    env.reset(seed=0, options={"seat": 0, "deal": OPPONENT_GOES_OUT})
    _, reward, terminated, _, _ = env.step(env.game_env.str_to_action("play 7S"))
    assert terminated and reward == pytest.approx(-13 / 100)


def test_learner_gets_its_win_when_it_goes_out() -> None:
    env = SingleSeatEnv("huit", 2, opponents=[LowestLegal.name])
    env.reset(seed=0, options={"seat": 0, "deal": LEARNER_GOES_OUT})
    _, reward, terminated, truncated, info = env.step(env.game_env.str_to_action("play 7S"))
    assert (reward, terminated, truncated, info["won"], info["hand_points"]) == (1.0, True, False, True, 0)


def test_zero_sum_rewards_over_a_four_player_table() -> None:
    env = SingleSeatEnv("switch", 4, opponents=["random"])
    rng = np.random.default_rng(0)
    totals: collections.Counter[bool] = collections.Counter()
    for hand in range(30):
        env.reset(seed=100 + hand)
        rewards, info, terminated, _ = play_random(env, rng)
        assert all(r == 0 for r in rewards[:-1])  # win reward comes at the end of the hand only
        if terminated:
            expected = 1.0 if info["won"] else -1 / 3
            assert rewards[-1] == pytest.approx(expected)
            totals[info["won"]] += 1
    assert totals[True] > 0 and totals[False] > 0


def test_learner_seat_varies_and_is_seeded() -> None:
    def seats(seed: int) -> list[int]:
        env = SingleSeatEnv("switch", 4, opponents=["random"])
        env.reset(seed=seed)
        out = []
        for _ in range(40):
            env.reset()
            out.append(env.seat)
        return out

    first = seats(7)
    assert set(first) == {0, 1, 2, 3}
    assert seats(7) == first
    assert seats(8) != first


def test_same_seed_same_hands() -> None:
    def trace(seed: int) -> list[float]:
        env = SingleSeatEnv("huit", 3, opponents=["random"])
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        sums = [float(obs.sum())]
        for _ in range(200):
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, reward, terminated, truncated, _ = env.step(action)
            sums.append(float(obs.sum()) + reward)
            if terminated or truncated:
                obs, _ = env.reset()
        return sums

    assert trace(5) == trace(5)
    assert trace(5) != trace(6)


def test_turn_limit_truncates() -> None:
    env = SingleSeatEnv("huit", 2, rules={"max_turns": 4}, opponents=["random"])
    env.reset(seed=0)
    rewards, info, terminated, truncated = play_random(env, np.random.default_rng(0))
    assert truncated and not terminated
    assert rewards[-1] == 0.0 and info["truncated"] and info["winner"] is None and not info["won"]


def test_misuse_is_refused() -> None:
    env = SingleSeatEnv("huit", 2, opponents=["random"])
    with pytest.raises(ValueError, match=r"seat 0\.\.1"):
        env.reset(seed=0, options={"seat": 2})
    env.reset(seed=0, options={"seat": 0, "deal": LEARNER_GOES_OUT})
    with pytest.raises(ValueError, match="illegal action"):
        env.step(env.game_env.str_to_action("pass"))  # not legal before drawing (B9)
    env.step(env.game_env.str_to_action("play 7S"))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(ValueError, match="unknown game"):
        make_game_env("poker", 2)


def test_discounted_returns() -> None:
    assert discounted_returns([0.0, 0.0, 1.0], 0.5) == [0.25, 0.5, 1.0]
    assert discounted_returns([1.0, -1.0], 1.0) == [0.0, -1.0]
    assert discounted_returns([], 0.9) == []


def test_demonstrate_records_the_teachers_moves_and_discounted_outcomes() -> None:
    def demo(seed: int) -> dict[str, np.ndarray]:
        env = SingleSeatEnv("huit", 2, opponents=["random"])
        env.reset(seed=seed)
        return env.demonstrate(LowestLegal.name, hands=6, gamma=0.9)

    data = demo(0)
    n = len(data["actions"])
    assert data["observations"].shape == (n, make_game_env("huit", 2).layout.size)
    assert data["masks"].shape == (n, make_game_env("huit", 2).NUM_ACTIONS) and data["masks"].dtype == bool
    pairs = zip(data["masks"], data["actions"], strict=True)
    assert all(action == np.flatnonzero(mask)[0] for mask, action in pairs)
    returns = data["returns"]
    ends = np.flatnonzero(np.isclose(np.abs(returns), 1.0))  # the win reward comes on a hand's last move
    assert len(ends) == 6 and ends[-1] == n - 1
    starts = np.concatenate([[0], ends[:-1] + 1])
    for start, end in zip(starts, ends, strict=True):
        np.testing.assert_allclose(returns[start:end], 0.9 * returns[start + 1:end + 1], rtol=1e-5)
    again = demo(0)
    assert all(np.array_equal(data[k], again[k]) for k in data)
    assert not np.array_equal(demo(1)["actions"], data["actions"])


def test_demonstrations_in_chunks_are_the_demonstrations_of_one_call() -> None:
    """Training collects them in chunks to show progress; the data (and so the run) must not change."""

    def demos(*sizes: int, keep: bool = True) -> dict[str, np.ndarray]:
        env = SingleSeatEnv("huit", 2, opponents=["random"])
        env.reset(seed=4)
        parts = [env.demonstrate("random", size, 0.9, keep_teacher=keep and k > 0)
                 for k, size in enumerate(sizes)]
        return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}

    whole, chunked = demos(5), demos(2, 1, 2)
    assert all(np.array_equal(whole[k], chunked[k]) for k in whole)
    assert not np.array_equal(whole["actions"], demos(2, 1, 2, keep=False)["actions"])  # a new teacher each


def test_league_draws_specs_by_weight() -> None:
    env = make_game_env("huit", 2)
    league = League(env, LeagueSettings((("random", 3.0), (LowestLegal.name, 1.0))), seed=0)
    rng = np.random.default_rng(0)
    counts = collections.Counter(label for _ in range(2000) for label, _ in league.pick(rng, 1))
    assert 0.70 < counts["random"] / 2000 < 0.80
    picked = league.pick(rng, 3)
    assert len(picked) == 3 and len({id(agent) for _, agent in picked}) == 3  # one agent per seat


def tiny_policy(env: SingleSeatEnv, seed: int) -> Any:
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=seed,
                        policy_kwargs={"net_arch": [8]}, device="cpu")
    return model.policy


def test_snapshots_join_the_league_and_newer_ones_are_picked_up(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "league"
    settings = LeagueSettings((("random", 1.0),), snapshot_dir=str(folder), snapshot_share=1.0, pool_size=2)
    env = SingleSeatEnv("huit", 2, opponents=settings)
    env.reset(seed=0)
    assert env.opponent_labels == ["random"]  # no snapshot yet: the specs stand in

    policy = tiny_policy(env, 0)
    save_snapshot(policy, folder, 0, game="huit", rules={}, num_players=2)
    env.reset()
    assert env.opponent_labels == ["snapshot_000000000000"]
    play_random(env, np.random.default_rng(0))  # the snapshot opponent plays legal moves

    for steps in (100, 200):
        save_snapshot(policy, folder, steps, game="huit", rules={}, num_players=2)
    assert [snapshot_steps(p) for p in list_snapshots(folder)] == [0, 100, 200]
    seen = set()
    for _ in range(30):
        env.reset()
        seen.update(env.opponent_labels)
    assert seen == {"snapshot_000000000100", "snapshot_000000000200"}  # pool_size newest only
    assert not list(folder.glob(".tmp*"))  # no scratch files left behind


def test_snapshot_share_mixes_specs_and_snapshots(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "league"
    env = SingleSeatEnv("switch", 4, opponents=LeagueSettings(
        (("random", 1.0),), snapshot_dir=str(folder), snapshot_share=0.5, pool_size=3))
    save_snapshot(tiny_policy(env, 1), folder, 0, game="switch", rules={}, num_players=4)
    env.reset(seed=0)
    labels: collections.Counter[str] = collections.Counter()
    for _ in range(100):
        env.reset()
        labels.update("snapshot" if label.startswith("snapshot_") else label for label in env.opponent_labels)
    assert 0.4 < labels["snapshot"] / 300 < 0.6


def test_skip_forced_moves_leaves_only_real_decisions_and_keeps_the_rewards() -> None:
    rng = np.random.default_rng(0)
    forced_seen, hands, total = 0, 0, 0.0
    env = SingleSeatEnv("huit", 2, opponents=["greedy"], skip_forced=True)
    env.reset(seed=0)
    while hands < 60:
        legal = np.flatnonzero(env.action_masks())
        assert len(legal) > 1  # every decision PPO sees is a real one
        _, reward, terminated, truncated, _ = env.step(int(rng.choice(legal)))
        total += reward
        if terminated or truncated:
            hands += 1
            env.reset()
    plain = SingleSeatEnv("huit", 2, opponents=["greedy"])
    plain.reset(seed=0)
    for _ in range(200):
        forced_seen += len(np.flatnonzero(plain.action_masks())) == 1
        _, _, terminated, truncated, _ = plain.step(int(rng.choice(np.flatnonzero(plain.action_masks()))))
        if terminated or truncated:
            plain.reset()
    assert forced_seen > 0  # without the option, forced moves do reach the learner
    assert -60 <= total <= 60 and total != 0  # one +-1 outcome per hand, credited through skipped moves


def test_skip_forced_plays_the_learners_forced_moves_and_credits_the_end() -> None:
    # Learner (seat 0) lays 7S; the opponent lays 8C announcing S; the learner, holding 9H, can only draw
    # (10D), then only pass; the opponent goes out with KS. With skip_forced that is one learner step.
    deal = {"hands": [["7S", "9H"], ["8C", "KS"]], "bank": ["10D", "JH", "QC"]}
    skipping = SingleSeatEnv("huit", 2, opponents=[LowestLegal.name], skip_forced=True)
    skipping.reset(options={"deal": deal, "seat": 0})
    _, reward, terminated, _, info = skipping.step(skipping.game_env.str_to_action("play 7S"))
    assert terminated and reward == -1.0 and info["winner"] == 1
    assert sorted(skipping.game_env.state_dict()["hands"][0]) == ["10D", "9H"]
    plain = SingleSeatEnv("huit", 2, opponents=[LowestLegal.name])
    plain.reset(options={"deal": deal, "seat": 0})
    _, reward, terminated, _, _ = plain.step(plain.game_env.str_to_action("play 7S"))
    assert not terminated and reward == 0.0
    assert np.flatnonzero(plain.action_masks()).tolist() == [plain.game_env.str_to_action("draw")]
