"""RLlib's multi-agent PPO (`cardlab rllib`): one iteration on a local Ray, its bot file played; refusals."""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from cardlab.cli import main
from cardlab.cluster.rllib import check_rllib_config, import_rllib
from cardlab.evaluation.request import EvalRequest
from cardlab.training.harness.config import config_from_dict

pytestmark = pytest.mark.ray
pytest.importorskip("ray")

TINY: dict[str, Any] = {
    "name": "rl_tiny", "game": "switch", "num_players": 3, "seed": 3,
    "ppo": {"n_steps": 16, "batch_size": 32, "n_epochs": 1}, "policy": {"net_arch": [16]},
    "num_envs": 2, "total_timesteps": 10, "eval": {"final_hands": 12, "opponents": ["random"]},
    "rllib": {"num_env_runners": 1},
}


def test_one_iteration_on_a_local_ray_writes_a_bot_that_plays(ray_local: Any, tmp_path: pathlib.Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Claim: `cardlab rllib` trains (one iteration: 32 steps > total_timesteps) with an env runner actor and
    writes bot.json, which evaluate and the Gymnasium vector env play as any bot."""
    pytest.importorskip("ray.rllib")
    from cardlab.agents.bot import load_bot
    from cardlab.evaluation.evaluate import evaluate
    from cardlab.training.arena.vector import CardVectorEnv

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    assert main(["rllib", str(config), "--runs-dir", str(tmp_path / "runs")]) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    rows = [json.loads(line) for line in (run_dir / "progress.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1]
    assert rows[0]["steps"] >= 32 and rows[0]["steps_per_second"] > 0
    assert "Final evaluation" in capsys.readouterr().out
    bot = load_bot(run_dir / "bot.json")
    assert bot.game.num_players == 3 and bot.metadata["summary"]["algorithm"].startswith("RLlib")
    assert bot.metadata["summary"]["steps"] == rows[0]["steps"]
    result = evaluate(EvalRequest("switch", [f"bot:{run_dir / 'bot.json'}", "random", "greedy"],
                                  hands=6, seed=1, rules={"num_players": 3}))
    assert result.stats[0].hands.n == 6
    envs = CardVectorEnv("switch", 4, opponents=[f"bot:{run_dir / 'bot.json'}"], num_players=3)
    obs, _ = envs.reset(seed=0)
    for _ in range(20):
        mask = obs["action_mask"].astype(bool)
        obs, *_ = envs.step(np.argmax(mask, axis=1))


def test_the_module_masks_illegal_actions_and_its_actor_is_the_bot(tmp_path: pathlib.Path) -> None:
    """Claim: illegal actions get ILLEGAL_LOGIT in the module's forward pass, and the exported bot's network
    computes the module's actor logits exactly."""
    pytest.importorskip("ray.rllib")
    from gymnasium import spaces
    from ray.rllib.core.columns import Columns

    from cardlab.agents.bot import export_bot, load_bot
    from cardlab.cluster.rllib import make_env
    from cardlab.cluster.rllib_module import MaskedActorCritic
    from cardlab.training.trainers.ppo import ILLEGAL_LOGIT

    env = make_env({"game": "huit", "num_players": 2, "rules": {}, "reward": "win"})
    obs, _ = env.reset(seed=4)
    (agent,) = obs
    module = MaskedActorCritic(observation_space=env.observation_spaces[agent],
                               action_space=spaces.Discrete(354),
                               model_config={"net_arch": [8, 8], "activation": "relu"})
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in obs[agent].items()}}
    logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
    illegal = obs[agent]["action_mask"] == 0
    assert illegal.any() and (~illegal).any()
    assert torch.all(logits[torch.as_tensor(illegal)] == ILLEGAL_LOGIT)
    assert module.compute_values(batch).shape == (1,)
    path = export_bot(module.model.actor, tmp_path / "bot", game="huit", num_players=2, summary={})
    bot = load_bot(path)
    with torch.no_grad():
        want = module.model.actor(batch[Columns.OBS]["observation"])[0]
        got = bot.network(batch[Columns.OBS]["observation"])[0]
    torch.testing.assert_close(got, want)
    assert bot.metadata["network"]["activation"] == "relu"


@pytest.mark.parametrize(("change", "named"), [
    ({"self_play": {"enabled": True}}, "self_play.enabled"),
    ({"opponents": ["greedy"]}, "opponents"),
    ({"trainer": "lean"}, "trainer"),
    ({"imitation": {"enabled": True}}, "imitation.enabled"),
    ({"eval": {"matches": 2}}, "eval.matches"),
])
def test_what_rllib_does_not_do_is_refused_by_name(change: dict[str, Any], named: str) -> None:
    cfg = config_from_dict({**TINY, **change})
    with pytest.raises(ValueError, match=rf"cardlab rllib does not take {named} \("):
        check_rllib_config(cfg)


def test_negative_env_runners_are_refused_by_the_config() -> None:
    with pytest.raises(ValueError, match=r"rllib.num_env_runners=-1 is out of range; accepted: a value >= 0"):
        config_from_dict({**TINY, "rllib": {"num_env_runners": -1}})


def test_without_rllib_the_command_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # `import ray.rllib` raises ImportError
    hint = r"install cardlab's rllib extra: pip install torch==2\.13\.0 -e \"\.\[rllib\]\"$"
    with pytest.raises(ValueError, match=hint):
        import_rllib()
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    assert main(["rllib", str(config), "--runs-dir", str(tmp_path / "runs")]) == 2
    assert "rllib extra" in capsys.readouterr().err and not (tmp_path / "runs").exists()
