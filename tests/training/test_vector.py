"""The Gymnasium ids over the batched engines, checked against the AEC env (a differential test)."""

from __future__ import annotations

import re
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import cardlab  # noqa: F401 - registers the ids
from cardlab.envs import env_class
from cardlab.training.arena.vector import MAX_NUM_ENVS, CardVectorEnv


def chooser(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A deterministic policy of the observation: equal observations give equal moves."""
    mask = mask.astype(bool)
    key = (np.abs(obs).sum(axis=1) * 1000).astype(np.int64)
    counts = mask.sum(axis=1)
    k = key % np.maximum(counts, 1)
    order = np.cumsum(mask, axis=1) - 1
    return np.argmax(mask & (order == k[:, None]), axis=1)


class Shadow:
    """The AEC env of one vector env slot, played by the same seeds and moves."""

    def __init__(self, game: str, seed: int, reward: str, **rules: Any) -> None:
        self.env = env_class(game)(reward=reward, **rules)
        self.env.reset(seed=seed)
        self.seat = -1

    def start(self, seat: int) -> None:
        self.seat = seat
        total, over = self.others()
        assert not over and total == 0.0

    def others(self) -> tuple[float, bool]:
        """Play chooser for the other seats up to the learner's turn: its reward on the way, and the end."""
        env, me = self.env, f"player_{self.seat}"
        total = 0.0
        while not (env.terminations[me] or env.truncations[me]) and env.agent_selection != me:
            ob = env.observe(env.agent_selection)
            env.step(int(chooser(ob["observation"][None], ob["action_mask"][None])[0]))
            total += env.rewards[me]
        return total, env.terminations[me] or env.truncations[me]

    def move(self, action: int) -> tuple[float, bool, bool]:
        env, me = self.env, f"player_{self.seat}"
        env.step(action)
        total = env.rewards[me]
        more, _ = self.others()
        return total + more, env.terminations[me], env.truncations[me]


@pytest.mark.parametrize(("game", "players", "reward"), [("huit", 2, "win"), ("huit", 3, "points"),
                                                         ("switch", 4, "win"), ("switch", 2, "points")])
def test_same_rewards_ends_and_observations_as_the_aec_env(game: str, players: int, reward: str) -> None:
    """Claim: slot b with reset(seed=s) plays as the AEC env reset(seed=s + b) with the same moves."""
    B, seed = 6, 11
    envs = CardVectorEnv(game, B, opponents=["self"], policy=chooser, reward=reward, num_players=players)
    obs, infos = envs.reset(seed=seed)
    shadows = [Shadow(game, seed + b, reward, num_players=players) for b in range(B)]
    for b, shadow in enumerate(shadows):
        shadow.start(int(infos["seat"][b]))
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(300):
        for b, shadow in enumerate(shadows):
            ob = shadow.env.observe(f"player_{shadow.seat}")
            np.testing.assert_array_equal(ob["observation"], obs["observation"][b])
            np.testing.assert_array_equal(ob["action_mask"], obs["action_mask"][b])
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for b, shadow in enumerate(shadows):
            want, term, trunc = shadow.move(int(actions[b]))
            assert rewards[b] == pytest.approx(want, abs=1e-6)
            assert (terminated[b], truncated[b]) == (term, trunc)
            if term or trunc:
                ends += 1
                np.testing.assert_array_equal(infos["final_obs"][b]["observation"],
                                              shadow.env.observe(f"player_{shadow.seat}")["observation"])
                shadow.env.reset()  # the AEC env's next deal, from its running generator
                shadow.start(int(infos["seat"][b]))
    assert ends >= 10


def test_make_vec_by_id_with_heuristic_and_bot_opponents() -> None:
    """Claim: the id resolves to the vector env, with Gymnasium's autoreset metadata and Dict spaces."""
    envs = gymnasium.make_vec("cardlab/Huit-v1", num_envs=8, vectorization_mode="vector_entry_point",
                              num_players=2, opponents=["expert", "bot:huit-2p", "random"])
    assert isinstance(envs.unwrapped, CardVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, _ = envs.reset(seed=3)
    assert envs.observation_space.contains(obs)
    rng = np.random.default_rng(1)
    returns = []
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, rewards, terminated, truncated, _ = envs.step(actions)
        assert envs.observation_space.contains(obs)
        assert obs["action_mask"].any(axis=1).all()  # the learner is to move in every game
        returns += rewards[terminated | truncated].tolist()
    assert returns and set(returns) <= {-1.0, 0.0, 1.0}
    assert np.mean(returns) < 0  # a random learner loses to the expert and the bot more than it wins


def test_the_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    def run(seed: int) -> list[float]:
        envs = CardVectorEnv("switch", 4, opponents=["random"], num_players=3)
        obs, _ = envs.reset(seed=seed)
        out = []
        for _ in range(60):
            obs, rewards, *_ = envs.step(np.argmax(obs["action_mask"], axis=1))
            out += rewards.tolist() + obs["observation"][:, :8].ravel().tolist()
        return out

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_one_game_env_passes_gymnasiums_checker_and_ends_like_an_episode() -> None:
    env = gymnasium.make("cardlab/Switch-v1", num_players=3, illegal_action="penalize")
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    steps = 0
    while True:
        obs, _reward, terminated, truncated, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
        if terminated or truncated:
            break
    assert steps > 1
    assert obs["action_mask"].sum() == 0  # the ended game's last observation, not the next deal's
    obs, _ = env.reset()
    assert obs["action_mask"].sum() > 0


def test_illegal_actions_raise_or_are_penalized() -> None:
    envs = CardVectorEnv("huit", 3, num_players=2)
    obs, _ = envs.reset(seed=0)
    bad = np.argmin(obs["action_mask"], axis=1)
    with pytest.raises(ValueError, match="illegal action"):
        envs.step(bad)
    envs = CardVectorEnv("huit", 3, num_players=2, illegal_action="penalize")
    obs, _ = envs.reset(seed=0)
    actions = np.argmax(obs["action_mask"], axis=1)
    actions[1] = np.argmin(obs["action_mask"][1])
    obs, rewards, terminated, _, infos = envs.step(actions)
    assert rewards[1] == -1.0 and terminated[1] and infos["_final_obs"][1]
    assert obs["action_mask"][1].any()  # dealt again, the learner to move


def test_bad_arguments_say_what_is_accepted() -> None:
    for kwargs, refused in (
            ({"opponents": "random"},
             "opponents='random' is of the wrong type; accepted: a non-empty list of agent specs"),
            ({"opponents": []}, "opponents=[] is empty; accepted: a non-empty list of agent specs"),
            ({"reward": "money"}, "reward='money' is not one of the choices; accepted: 'win', 'points'"),
            ({"illegal_action": "skip"},
             "illegal_action='skip' is not one of the choices; accepted: 'raise', 'penalize'")):
        with pytest.raises(ValueError, match=f"^{re.escape(refused)}$"):
            CardVectorEnv("huit", 2, **kwargs)
    with pytest.raises(ValueError, match="unknown agent spec"):
        CardVectorEnv("huit", 2, opponents=["nobody"])
    envs = CardVectorEnv("huit", 8, opponents=["self"])
    with pytest.raises(ValueError, match="no policy"):
        envs.reset(seed=0)  # some game has the other seat first


@pytest.mark.parametrize("num_envs", [0, 10**9, MAX_NUM_ENVS + 1, 2.0, "4", True])
def test_num_envs_is_bounded_before_anything_is_allocated(num_envs: Any) -> None:
    whole = isinstance(num_envs, int) and not isinstance(num_envs, bool)
    problem = "out of range" if whole else "of the wrong type"
    with pytest.raises(ValueError, match=rf"^num_envs=.* is {problem}; accepted: a whole number from 1 to "
                                         rf"{MAX_NUM_ENVS:,}$"):
        gymnasium.make_vec("cardlab/Huit-v1", num_envs=num_envs, vectorization_mode="vector_entry_point")


@pytest.mark.parametrize("action", [76.9, "76", np.float32(76.5), True, 1.0, [0], np.array([0]), None],
                         ids=repr)
def test_the_one_game_env_refuses_non_integer_actions_as_the_vector_env_does(action: Any) -> None:
    """Before, `int(action)` read 76.9, "76" and np.float32(76.5) as action 76 without a word."""
    env = gymnasium.make("cardlab/Huit-v1", num_players=2).unwrapped
    obs, _ = env.reset(seed=0)
    before = obs["observation"].copy()
    with pytest.raises(ValueError, match=r"is not an action id: give a whole number \(an int or a numpy "
                                         r"integer\) 0\.\.353"):
        env.step(action)
    envs = CardVectorEnv("huit", 1, num_players=2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="integer array"):
        envs.step(np.array([action], dtype=object if action is None else None))
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    assert np.array_equal(env.reset(seed=0)[0]["observation"], before)
    env.step(np.int64(legal))  # numpy integers are action ids
    env.reset(seed=0)
    env.step(legal)


def test_any_whole_seed_deals_and_others_are_refused() -> None:
    """Any size, as the AEC env takes: `seed + b` with a numpy b overflowed int64 at reset(seed=2**64)."""
    for seed in (2**64, 10**30):
        dealt = CardVectorEnv("huit", 2, num_players=2).reset(seed=seed)[0]["observation"]
        listed = CardVectorEnv("huit", 2, num_players=2).reset(seed=[seed, seed + 1])[0]["observation"]
        assert np.array_equal(dealt, listed)
        one = gymnasium.make("cardlab/Huit-v1", num_players=2).unwrapped
        assert np.array_equal(one.reset(seed=seed)[0]["observation"], one.reset(seed=seed)[0]["observation"])
    for env in (CardVectorEnv("huit", 2), gymnasium.make("cardlab/Huit-v1").unwrapped):
        bads: tuple[Any, ...] = (-1, 1.5, "3", True)
        for bad in bads:
            with pytest.raises(ValueError, match=r"^seed=.* is (out of range|of the wrong type); accepted: a "
                                                 r"whole number >= 0 \(of any size\)$"):
                env.reset(seed=bad)
    with pytest.raises(ValueError, match=r"seed\[1\]=-2 is out of range; accepted"):
        CardVectorEnv("huit", 2).reset(seed=[1, -2])


@pytest.mark.parametrize("kind", ["bot", "heuristic"])
def test_a_failing_opponent_is_named_and_the_env_asks_for_a_reset(
        kind: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """No "no slot was stepped" after turns moved on: the opponent is named, and no step goes on from it."""
    from cardlab.agents.failure import AgentFailure
    from tests.agents.test_bot import unchecked_overflowing_bot
    from tests.failing_agents import register_failing

    register_failing(monkeypatch)
    spec = f"bot:{unchecked_overflowing_bot(tmp_path, monkeypatch)}" if kind == "bot" else "fails-later"
    env = CardVectorEnv("huit", num_envs=4, opponents=[spec], num_players=2)
    name = "huit-over" if kind == "bot" else spec
    words = "its logits are not finite on this observation" if kind == "bot" else "it raised RuntimeError"
    with pytest.raises(AgentFailure, match=rf"opponent .*{name}\S* \(game \d, seat \d\) failed: {words}"):
        obs, _ = env.reset(seed=0)
        for _ in range(200):
            obs, *_ = env.step(np.argmax(obs["action_mask"], axis=1))
    with pytest.raises(RuntimeError, match=r"the last reset or step stopped: .* failed: .*; call reset\(\)"):
        env.step(np.zeros(4, dtype=np.int64))
