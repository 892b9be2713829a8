"""The ways a policy from outside becomes an ONNX bot, each played once by `cardlab bench` on a suite: the
recipes of docs/onnx.md as written there (a plain torch module, a Stable-Baselines3 policy) and a lean
training run through `cardlab export --format onnx`."""

from __future__ import annotations

import pathlib
import re
from typing import Any

import gymnasium
import numpy as np
import pytest
import yaml

from cardlab.agents.bot import load_bot
from cardlab.agents.bot.onnx_bot import OnnxNetwork
from cardlab.cli import main
from cardlab.envs import make_game
from tests.onnx_helpers import seated, tiny_suite

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "onnx.md"


def recipe(heading: str) -> str:
    """The Python block of the page's section `heading`."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, f"docs/onnx.md's section {heading!r} has {len(blocks)} Python blocks"
    return blocks[0]


def benched(folder: pathlib.Path, spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`cardlab bench SPEC` on a tiny Huit 2-player suite, which it plays to the end."""
    capsys.readouterr()
    assert main(["bench", spec, "--suite", str(tiny_suite(folder, "huit", 2))]) == 0
    assert f"{spec} on suite tiny v1" in capsys.readouterr().out


def test_the_plain_torch_recipe_plays(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(recipe("A plain torch module"), "docs/onnx.md", "exec"), {})
    assert isinstance(load_bot("my_policy.onnx").network, OnnxNetwork)
    benched(tmp_path, "bot:my_policy.onnx", capsys)
    seated(tmp_path / "my_policy.onnx")


class SpacesOnly(gymnasium.Env):
    """The smallest env MaskablePPO accepts: the flat observation and the actions of a Huit table."""

    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Discrete

    def __init__(self, size: int, actions: int) -> None:
        self.observation_space = gymnasium.spaces.Box(-1e3, 1e3, (size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(actions)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict]:
        return np.zeros(self.observation_space.shape, np.float32), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(self.action_space.n, dtype=bool)


def test_the_stable_baselines3_recipe_plays_the_policys_moves(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from sb3_contrib import MaskablePPO

    monkeypatch.chdir(tmp_path)
    game = make_game("huit", {"num_players": 2})
    model = MaskablePPO("MlpPolicy", SpacesOnly(game.layout.size, game.num_actions), n_steps=8, batch_size=8,
                        device="cpu", policy_kwargs={"net_arch": [32]}, seed=0)
    model.save("my_model.zip")
    exec(compile(recipe("A Stable-Baselines3 policy"), "docs/onnx.md", "exec"), {})
    bot = load_bot("my_sb3.onnx", game)
    rng = np.random.default_rng(0)
    obs = rng.standard_normal((32, game.layout.size)).astype(np.float32)
    masks = rng.random((32, game.num_actions)) < 0.2
    masks[:, 0] = True
    import torch

    with torch.no_grad():
        distribution = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        categorical = distribution.distribution
        assert isinstance(categorical, torch.distributions.Categorical)
        expected = categorical.probs.argmax(dim=1).numpy()
    np.testing.assert_array_equal(bot.act_batch(obs, masks), expected)
    benched(tmp_path, "bot:my_sb3.onnx", capsys)
    seated(tmp_path / "my_sb3.onnx")


LEAN = {
    "name": "lean", "seed": 1, "game": "huit", "num_players": 2, "trainer": "lean",
    "opponents": [{"spec": "random", "weight": 1}], "policy": {"net_arch": [16]},
    "num_envs": 8, "total_timesteps": 256, "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1},
    "eval": {"every_steps": 100_000, "hands": 4, "final_hands": 4, "opponents": ["random"]},
    "checkpoint_every": 100_000,
}


@pytest.mark.slow
def test_a_lean_run_exports_to_an_onnx_bot_that_plays(tmp_path: pathlib.Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "lean.yaml"
    config.write_text(yaml.safe_dump(LEAN))
    assert main(["train", str(config), "--runs-dir", str(tmp_path / "runs")]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert main(["export", str(run), "--format", "onnx", "-o", str(tmp_path / "lean")]) == 0
    assert f"wrote {tmp_path / 'lean.json'} and {tmp_path / 'lean.onnx'}" in capsys.readouterr().out
    game = make_game("huit", {"num_players": 2})
    onnx, file = load_bot(tmp_path / "lean.onnx", game), load_bot(run / "bot.json", game)
    obs = np.random.default_rng(1).random((64, game.layout.size)).astype(np.float32)
    np.testing.assert_allclose(onnx.logits(obs), file.logits(obs), rtol=1e-4, atol=1e-4)
    benched(tmp_path, f"bot:{tmp_path / 'lean.onnx'}", capsys)
    seated(tmp_path / "lean.onnx")
