"""The privileged critic: the hidden-card view, the split policy, and training with it.

Claims: the hidden view holds exactly the other seats' cards (in seat order
from the observer) and the next cards of the pile, the next one first; the
actor of a `PrivilegedCriticPolicy` is not moved by the hidden part while the
critic is; the bot exported from it plays exactly like the trained actor on
the public observation; a run trains with it from a config.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.vec_env import DummyVecEnv

from cardlab.agents.bot import export_bot, load_bot
from cardlab.envs import cards as C
from cardlab.envs.huit.observer import DECK_IDS
from cardlab.envs.huit_v1 import raw_env as huit_env
from cardlab.envs.layout import PEEK
from cardlab.envs.switch.rules import SwitchRules
from cardlab.envs.switch_v1 import raw_env as switch_env
from cardlab.training.arena.single_seat import SingleSeatEnv, make_game_env
from cardlab.training.harness.config import TrainConfig, load_config
from cardlab.training.trainers.policy import PrivilegedCriticPolicy
from cardlab.training.trainers.train import train

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def cards_in(part: np.ndarray, kinds: list[int], scale: np.ndarray | float = 1.0) -> dict[str, int]:
    """Card text -> copies, read from a per-kind slice (`kinds[i]` is the card at position i)."""
    counts = np.rint(part * scale).astype(int)
    return {C.card_str(kinds[i]): int(counts[i]) for i in np.flatnonzero(counts)}


def parts(env: Any, seat: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The hidden view of `seat`, cut into per-seat hands and per-position pile cards."""
    layout = env.observer.hidden_layout
    hidden = env.observer.observe_hidden(env.game_state, seat)
    assert hidden.shape == (layout.size,) and hidden.dtype == np.float32
    split = layout.split(hidden)
    n = env.rules.num_players
    return np.split(split["other_hands"], n - 1), np.split(split["pile_next"], PEEK)


def test_huit_hidden_view_shows_other_hands_and_the_next_bank_cards() -> None:
    env = huit_env(num_players=3)
    deal = {"hands": [["7S", "9H"], ["8C", "KD"], ["AS", "AH", "QC"]], "bank": ["10S", "JH", "QD", "7C"]}
    env.reset(options={"deal": deal})
    kinds = [int(c) for c in DECK_IDS]
    hands, pile = parts(env, seat=1)
    assert [cards_in(h, kinds) for h in hands] == [{"AS": 1, "AH": 1, "QC": 1}, {"7S": 1, "9H": 1}]
    assert [cards_in(p, kinds) for p in pile] == [{"10S": 1}, {"JH": 1}, {"QD": 1}]
    # The next bank card is the one a draw takes.
    mover = env.agent_seat[env.agent_selection]
    env.step(env.str_to_action("draw"))
    assert "10S" in env.state_dict()["hands"][mover]
    _, pile = parts(env, seat=0)
    assert [cards_in(p, kinds) for p in pile] == [{"JH": 1}, {"QD": 1}, {"7C": 1}]


def test_switch_hidden_view_counts_copies_and_pads_a_short_stock() -> None:
    env = switch_env(num_players=2)
    deal = {"hands": [["7H", "7H", "KS"], ["3C", "JOKER"]], "stock": ["9D", "2S"], "starter": "5H"}
    env.reset(options={"deal": deal})
    kinds = list(range(C.NUM_KINDS))
    rules = env.rules
    assert isinstance(rules, SwitchRules)
    copies = np.array(rules.deck(), dtype=np.float32)
    hands, pile = parts(env, seat=1)
    assert [cards_in(h, kinds, copies) for h in hands] == [{"7H": 2, "KS": 1}]
    assert [cards_in(p, kinds) for p in pile] == [{"9D": 1}, {"2S": 1}, {}]


@pytest.mark.parametrize("game, n", [("huit", 2), ("switch", 4)])
def test_privileged_single_seat_observation_is_public_then_hidden(game: str, n: int) -> None:
    env = SingleSeatEnv(game, n, opponents=["random"], privileged=True)
    public = env.game_env.layout.size
    assert env.public_size == public
    assert env.observation_space.shape == (public + env.game_env.observer.hidden_layout.size,)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(100):
        assert env.observation_space.contains(obs)
        game_env = env.game_env
        np.testing.assert_array_equal(obs[:public], game_env.observe(env.learner)["observation"])
        hidden = game_env.observer.observe_hidden(game_env.game_state, env.seat)
        np.testing.assert_array_equal(obs[public:], hidden)
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            obs, _ = env.reset()


def test_demonstrations_record_the_privileged_input_but_teach_from_the_public_one() -> None:
    env = SingleSeatEnv("huit", 2, opponents=["random"], privileged=True)
    env.reset(seed=0)
    data = env.demonstrate("greedy", hands=3, gamma=1.0)
    assert data["observations"].shape[1] == env.observation_space.shape[0]
    public = SingleSeatEnv("huit", 2, opponents=["random"])
    public.reset(seed=0)
    same = public.demonstrate("greedy", hands=3, gamma=1.0)  # the same seeds: the same teacher moves
    np.testing.assert_array_equal(data["actions"], same["actions"])
    np.testing.assert_array_equal(data["observations"][:, : env.public_size], same["observations"])


@pytest.fixture(scope="module")
def model() -> MaskablePPO:
    vec = DummyVecEnv([lambda: SingleSeatEnv("huit", 2, opponents=["random"], privileged=True)])
    public_size = vec.get_attr("public_size")[0]
    return MaskablePPO(PrivilegedCriticPolicy, vec, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                       policy_kwargs={"net_arch": {"pi": [32], "vf": [32]}, "public_size": public_size})


def test_actor_ignores_the_hidden_part_and_critic_reads_it(model: MaskablePPO) -> None:
    policy, shape = model.policy, model.observation_space.shape
    assert isinstance(policy, PrivilegedCriticPolicy) and shape is not None
    size = shape[0]
    public = policy.public_size
    obs = torch.rand(5, size)
    other = obs.clone()
    other[:, public:] = torch.rand(5, size - public)
    with torch.no_grad():
        logits = policy.action_net(policy.mlp_extractor.forward_actor(obs))
        logits_other = policy.action_net(policy.mlp_extractor.forward_actor(other))
        values, values_other = policy.predict_values(obs), policy.predict_values(other)
    torch.testing.assert_close(logits, logits_other)
    assert not torch.allclose(values, values_other)


def test_learning_keeps_the_split_and_the_bot_plays_the_actor(
    model: MaskablePPO, tmp_path: pathlib.Path
) -> None:
    model.set_logger(Logger(None, []))  # without one, learn() makes an SB3-<time> folder in the system temp
    model.learn(128)
    assert model.policy.mlp_extractor.policy_net[0].in_features == model.policy.public_size
    path = export_bot(model.policy, tmp_path / "bot", game="huit", rules={}, num_players=2, summary={})
    env = SingleSeatEnv("huit", 2, opponents=["random"], privileged=True)
    obs, _ = env.reset(seed=1)
    bot = load_bot(path, env.game_env, seed=0)
    for _ in range(40):
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert bot.act(env.game_env.observe(env.learner)) == int(action)
        obs, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            obs, _ = env.reset()


def test_policy_refuses_a_public_size_outside_the_input() -> None:
    vec = DummyVecEnv([lambda: SingleSeatEnv("huit", 2, opponents=["random"], privileged=True)])
    with pytest.raises(ValueError, match="public_size must be between 1 and"):
        MaskablePPO(PrivilegedCriticPolicy, vec, policy_kwargs={"net_arch": {"pi": [8], "vf": [8]},
                                                                "public_size": 10_000})


def test_a_run_trains_with_the_privileged_critic(tmp_path: pathlib.Path) -> None:
    cfg: TrainConfig = load_config(CONFIGS / "huit_quick.yaml")
    cfg = dataclasses.replace(
        cfg, total_timesteps=512, checkpoint_every=512, vec_env="dummy",
        policy=dataclasses.replace(cfg.policy, net_arch=[32, 32], privileged_critic=True),
        imitation=dataclasses.replace(cfg.imitation, hands=20, epochs=1),
        ppo=dataclasses.replace(cfg.ppo, n_steps=128, batch_size=64, n_epochs=1),
        eval=dataclasses.replace(cfg.eval, every_steps=512, hands=10, final_hands=10, opponents=["random"]),
        self_play=dataclasses.replace(cfg.self_play, snapshot_every=256),
    )
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    resumed = train(dataclasses.replace(cfg, total_timesteps=768), runs_dir=tmp_path, resume=run_dir,
                    progress=False)
    assert resumed == run_dir
    # refused if it read more than the public part
    load_bot(run_dir / "bot.json", make_game_env("huit", 2), seed=0)
