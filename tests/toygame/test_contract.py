"""A third game joins in one folder plus one registration line (`tests/toygame`, `register(SPEC)`).

Why: the game contract (`GameSpec`) is all the env, agents, evaluation,
training and bot files may know of a game. If any of them still named Switch
or Huit directly, the toy game below would fail somewhere along this path.
"""

from __future__ import annotations

import dataclasses
import pathlib
import textwrap
from collections.abc import Iterator

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot import load_bot
from cardlab.cli import main
from cardlab.envs import games, make_env, make_game, register
from cardlab.envs.batched_engine import BatchedEngine
from cardlab.envs.game_spec import unregister
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.training.harness.config import (
    EvalConfig,
    OpponentConfig,
    PolicyConfig,
    PPOConfig,
    TrainConfig,
    load_config,
)
from cardlab.training.trainers.train import train
from tests.toygame.spec import SPEC


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    register(SPEC)  # the one registration line
    yield
    unregister(SPEC.id)


def test_the_toy_game_is_listed_and_described() -> None:
    assert games()[-1] == "toy"
    text = make_game("toy").markdown()
    assert "| 0..11 | lay card i (10 J Q of S H D C) | 0 + i | `play 10S` |" in text
    assert "| `num_players` | 2 | 2 to 3 | players at the table |" in text


def test_the_toy_env_passes_pettingzoo_api_and_seed_tests() -> None:
    api_test(make_env("toy", num_players=3), num_cycles=300)
    seed_test(lambda: make_env("toy"), num_cycles=300)
    env = make_env("toy")
    env.reset(seed=3)
    assert env.unwrapped.state() in env.unwrapped.state_space


def test_the_toy_game_is_evaluated_with_its_own_heuristic() -> None:
    result = evaluate(EvalRequest("toy", ["first_play", "random"], hands=200, seed=1))
    rows = {row.spec: row for row in result.stats}
    assert rows["first_play"].hands.n == rows["random"].hands.n == 200
    # Laying whenever possible beats drawing at random: a real, not a scripted, result.
    assert rows["first_play"].hands.rate > 0.6


def test_a_quick_training_run_on_the_toy_game_exports_a_playable_bot(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = TrainConfig(
        name="toy", game="toy", num_players=2, opponents=[OpponentConfig("random")], total_timesteps=512,
        checkpoint_every=512, num_envs=2, vec_env="dummy",
        ppo=PPOConfig(n_steps=128, batch_size=64, n_epochs=1), policy=PolicyConfig(net_arch=[16]),
        eval=EvalConfig(every_steps=512, hands=10, final_hands=20, opponents=["random", "first_play"]),
    )
    run = train(cfg, runs_dir=tmp_path, progress=False)
    bot = load_bot(run / "bot.json")
    assert bot.game == make_game("toy")
    env = make_env("toy")
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][bot.act(obs)] == 1
    result = evaluate(EvalRequest("toy", [f"bot:{run / 'bot.json'}", "first_play"], hands=20, seed=2))
    assert sum(row.hands.n for row in result.stats) == 40
    assert main(["rules", "toy", "--markdown"]) == 0
    assert "`Discrete(13)`" in capsys.readouterr().out


LEAN = """
    name: toy_lean
    seed: 3
    game: toy
    num_players: 2
    trainer: lean
    opponents: [{spec: first_play, weight: 1}, {spec: random, weight: 1}]
    self_play: {enabled: true, share: 0.5, snapshot_every: 1000, pool_size: 2, learner_share: 0.5}
    ppo: {n_steps: 32, batch_size: 128, n_epochs: 1}
    policy: {net_arch: [16, 16]}
    num_envs: 8
    total_timesteps: 1500
    checkpoint_every: 1000
    eval: {every_steps: 1000, hands: 4, final_hands: 20, opponents: [random, first_play]}
    device: cpu
"""
"""A lean self-play config for the toy game, shrunk to seconds."""


def test_the_toy_game_trains_with_the_lean_trainer_on_the_generic_batch(tmp_path: pathlib.Path) -> None:
    """The toy game has no batched engine of its own: `batched_engine()` gives the generic batch."""
    engine = SPEC.batched_engine()
    assert issubclass(engine, BatchedEngine)
    path = tmp_path / "toy_lean.yaml"
    path.write_text(textwrap.dedent(LEAN))
    cfg = load_config(path)
    assert cfg.trainer == "lean" and cfg.game == "toy"
    run = train(cfg, runs_dir=tmp_path / "runs", progress=False)
    bot = load_bot(run / "bot.json")
    assert bot.game == make_game("toy")
    result = evaluate(EvalRequest("toy", [f"bot:{run / 'bot.json'}", "random"], hands=20, seed=4))
    assert sum(row.hands.n for row in result.stats) == 40


def test_agents_for_the_toy_game_are_built_from_its_game_only() -> None:
    game = make_game("toy", num_players=3)
    agent = make_agent("first_play", game, seed=0)
    assert agent.game is game
    legal = np.zeros(13, dtype=np.int8)
    legal[[4, 12]] = 1
    assert agent.act({"observation": np.zeros(game.layout.size, np.float32), "action_mask": legal}) == 4


def test_a_game_id_is_registered_once() -> None:
    with pytest.raises(ValueError, match="a game 'toy' is registered already"):
        register(dataclasses.replace(SPEC))
