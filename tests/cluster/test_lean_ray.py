"""The lean trainer's actors as Ray actors (`cardlab.cluster.lean_actors`), on the tests' local Ray."""

from __future__ import annotations

import pathlib
from typing import Any

import yaml

from cardlab.agents.bot import load_bot
from cardlab.cli import main
from cardlab.training.harness.checkpoints import checkpoint_steps, list_checkpoints
from cardlab.training.harness.config import config_to_dict
from tests.training.test_ppo import tiny


def test_two_ray_actors_train_resume_and_write_a_bot(ray_local: Any, tmp_path: pathlib.Path,
                                                     capsys: Any) -> None:
    config = tmp_path / "ray.yaml"
    config.write_text(yaml.safe_dump(config_to_dict(tiny(actors=2, total_timesteps=2000))))
    runs = tmp_path / "runs"
    assert main(["train", str(config), "--ray-address", "local", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "2 Ray actors on a local Ray (2 CPUs)" in out
    (run_dir,) = runs.iterdir()
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["ray"] == {"address": "local"}
    assert load_bot(run_dir).metadata["summary"]["steps"] >= 2000

    config.write_text(yaml.safe_dump(config_to_dict(tiny(actors=2, total_timesteps=3500))))
    assert main(["train", str(config), "--ray-address", "local", "--resume", str(run_dir)]) == 0
    assert checkpoint_steps(list_checkpoints(run_dir)[-1]) >= 3500
    assert load_bot(run_dir).metadata["summary"]["steps"] >= 3500
    assert ray_local.is_initialized()  # the tests' Ray, joined and left running
