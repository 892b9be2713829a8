"""Training runs: the artifacts a run writes, resuming, evaluation statistics, the vector envs."""

from __future__ import annotations

import csv
import dataclasses
import pathlib
import shutil
from typing import Any

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot.agent import BotAgent
from cardlab.evaluation.stats import wilson_interval
from cardlab.training.arena.league import list_snapshots, snapshot_steps
from cardlab.training.arena.single_seat import make_game_env
from cardlab.training.harness.config import TrainConfig, load_config
from cardlab.training.harness.records import EVAL_FIELDS, RenamingWriter
from cardlab.training.trainers.train import train, train_from_file
from cardlab.training.trainers.vec_env import make_vec_env

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"
STEPS = 1024  # two rollouts of 2 envs x 256 steps


def tiny(**changes: Any) -> TrainConfig:
    """The Huit quick config, shrunk, against random opponents, without imitation."""
    cfg = load_config(CONFIGS / "huit_quick.yaml")
    cfg = dataclasses.replace(
        cfg,
        opponents=[dataclasses.replace(cfg.opponents[0], spec="random")],
        total_timesteps=STEPS,
        checkpoint_every=512,
        ppo=dataclasses.replace(cfg.ppo, n_steps=256, batch_size=128, n_epochs=2),
        policy=dataclasses.replace(cfg.policy, net_arch=[32, 32]),
        self_play=dataclasses.replace(cfg.self_play, enabled=True, snapshot_every=512, share=0.5),
        eval=dataclasses.replace(cfg.eval, every_steps=512, hands=10, final_hands=30, opponents=["random"]),
        imitation=dataclasses.replace(cfg.imitation, enabled=False),
        vec_env="dummy",
    )
    return dataclasses.replace(cfg, **changes)


def eval_rows(run_dir: pathlib.Path) -> list[dict[str, str]]:
    with (run_dir / "eval.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def scalars(run_dir: pathlib.Path) -> dict[str, list[tuple[int, float]]]:
    """Every TensorBoard scalar of the run (all event files), tag -> [(step, value)]."""
    out: dict[str, list[tuple[int, float]]] = {}
    for events in sorted(run_dir.glob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events))
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            out.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))
    return out


def checkpoint_steps(run_dir: pathlib.Path) -> list[int]:
    return sorted(int(p.stem.split("_")[1]) for p in (run_dir / "checkpoints").glob("model_*.zip"))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return train(tiny(), runs_dir=tmp_path_factory.mktemp("runs"), progress=False)


def copy_run(run: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    return pathlib.Path(shutil.copytree(run, tmp_path / run.name))


# ---------------------------------------------------------------- a run's artifacts
def test_run_folder_is_named_by_name_seed_and_time(run: pathlib.Path) -> None:
    name, seed, stamp = run.name.split("__")
    assert (name, seed) == ("huit_quick", "1")
    assert len(stamp) == len("20240101-120000") and stamp[8] == "-"


def test_resolved_config_is_saved(run: pathlib.Path) -> None:
    assert load_config(run / "config.yaml") == tiny()


def test_eval_history(run: pathlib.Path) -> None:
    rows = eval_rows(run)
    assert list(rows[0]) == list(EVAL_FIELDS)
    # Periodic evaluation at 512 steps, then the final one (30 hands) at the end (2 seats: even counts).
    assert [(int(r["steps"]), r["opponent"], int(r["hands"])) for r in rows] == [(512, "random", 10),
                                                                                  (STEPS, "random", 30)]
    for r in rows:
        hands, rate = int(r["hands"]), float(r["win_rate"])
        wins = round(rate * hands)
        assert rate == pytest.approx(wins / hands)
        assert (float(r["ci_low"]), float(r["ci_high"])) == pytest.approx(wilson_interval(wins, hands))
        assert 0 <= float(r["paired_ci_low"]) <= rate <= float(r["paired_ci_high"]) <= 1
        assert float(r["mean_points"]) >= 0


def test_tensorboard_scalars_are_namespaced(run: pathlib.Path) -> None:
    tags = scalars(run)
    for tag in ("charts/win_rate", "charts/SPS", "charts/ep_rew_mean", "charts/learning_rate",
                "losses/value_loss", "losses/policy_gradient_loss", "losses/entropy_loss", "losses/approx_kl",
                "eval/win_rate_random", "eval/ci_low_random", "eval/paired_ci_low_random",
                "eval/paired_ci_high_random", "eval/final_win_rate_random",
                "eval/final_paired_ci_low_random"):
        assert tag in tags, tag
    assert {t.split("/")[0] for t in tags} == {"charts", "losses", "eval"}
    assert [step for step, _ in tags["eval/win_rate_random"]] == [512]
    rows = eval_rows(run)
    step, final = tags["eval/final_win_rate_random"][0]
    assert step == STEPS and final == pytest.approx(float(rows[-1]["win_rate"]))


def test_checkpoints_and_league_snapshots(run: pathlib.Path) -> None:
    assert checkpoint_steps(run) == [512, STEPS]
    assert [snapshot_steps(p) for p in list_snapshots(run / "checkpoints" / "league")] == [0, 512, STEPS]


def test_bot_file_plays_legal_moves(run: pathlib.Path) -> None:
    env = make_game_env("huit", 2)
    bot = make_agent(f"bot:{run / 'bot.json'}", env, seed=0)
    assert isinstance(bot, BotAgent)
    assert bot.metadata["summary"]["steps"] == STEPS
    assert bot.metadata["summary"]["final_eval"]["random"]["hands"] == 30
    final = bot.metadata["summary"]["final_eval"]["random"]
    assert final["paired_ci_low"] <= final["win_rate"] <= final["paired_ci_high"]
    env.reset(seed=0)
    for _ in range(200):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.reset()
            continue
        env.step(bot.act(env.observe(agent)))  # raises on an illegal action


def test_imitation_warm_start_copies_the_teacher(tmp_path: pathlib.Path) -> None:
    cfg = tiny(total_timesteps=512, imitation=dataclasses.replace(
        tiny().imitation, enabled=True, teacher="greedy", hands=60, epochs=6, batch_size=64))
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    accuracy = [value for _, value in sorted(scalars(run_dir)["imitation/accuracy"])]
    assert len(accuracy) == 6 and accuracy[-1] > max(0.85, accuracy[0])
    assert [int(r["steps"]) for r in eval_rows(run_dir)] == [0, 512]  # imitation alone is evaluated too


# ---------------------------------------------------------------- resume
def test_max_minutes_ends_maskable_ppo_training_on_wall_clock(tmp_path: pathlib.Path) -> None:
    run_dir = train(tiny(total_timesteps=10**9, max_minutes=0.05), runs_dir=tmp_path, progress=False)
    steps = checkpoint_steps(run_dir)
    assert steps and 0 < steps[-1] < 10**9
    rows = eval_rows(run_dir)
    assert rows and int(rows[-1]["hands"]) == 30  # the final evaluation ran (final_hands)


def test_resume_continues_the_step_counter_and_the_logs(run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    copy = copy_run(run, tmp_path)
    before = scalars(copy)
    assert train(tiny(total_timesteps=2 * STEPS), resume=copy, progress=False) == copy
    assert checkpoint_steps(copy) == [512, STEPS, 1536, 2 * STEPS]
    assert load_config(copy / "config.yaml").total_timesteps == 2 * STEPS
    steps = [int(r["steps"]) for r in eval_rows(copy)]
    assert steps == [512, STEPS, 1536, 2 * STEPS]
    snapshots = [snapshot_steps(p) for p in list_snapshots(copy / "checkpoints" / "league")]
    assert snapshots == [0, 512, STEPS, 1536, 2 * STEPS]
    after = scalars(copy)
    assert len(list(copy.glob("events.out.tfevents.*"))) == 2
    new_win_steps = sorted(s for s, _ in after["charts/win_rate"])[len(before["charts/win_rate"]):]
    assert new_win_steps and min(new_win_steps) > STEPS  # the curves continue where they stopped


def test_resume_rolls_back_to_the_last_checkpoint(run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    copy = copy_run(run, tmp_path)
    (copy / "checkpoints" / f"model_{STEPS:012d}.zip").unlink()  # as if killed before the final save
    train(tiny(), resume=copy, progress=False)
    rows = [(int(r["steps"]), int(r["hands"])) for r in eval_rows(copy)]
    assert rows == [(512, 10), (STEPS, 30)]  # the old final row was dropped, then redone once
    assert checkpoint_steps(copy) == [512, STEPS]


def test_resume_refuses_another_config(run: pathlib.Path) -> None:
    other = tiny(ppo=dataclasses.replace(tiny().ppo, learning_rate=0.1))
    may = r"only total_timesteps, max_minutes, actors, device, ray\.address may"
    with pytest.raises(ValueError, match=r"ppo\.learning_rate .*" + may):
        train(other, resume=run, progress=False)


def test_resume_refuses_a_folder_that_is_not_a_run(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match=r"no config\.yaml"):
        train(tiny(), resume=tmp_path, progress=False)


# ---------------------------------------------------------------- pieces
def test_wilson_interval() -> None:
    low, high = wilson_interval(50, 100)
    assert (low, high) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low99, high99 = wilson_interval(50, 100, z=2.576)
    assert low99 < low and high99 > high
    with pytest.raises(ValueError, match="wins <= n"):
        wilson_interval(11, 10)


def test_sb3_keys_are_renamed() -> None:
    rename = RenamingWriter.rename
    assert rename("train/value_loss") == "losses/value_loss"
    assert rename("train/learning_rate") == "charts/learning_rate"
    assert rename("rollout/ep_rew_mean") == "charts/ep_rew_mean"
    assert rename("time/fps") == "charts/SPS"
    assert rename("time/iterations") is None
    assert rename("eval/win_rate_expert") == "eval/win_rate_expert"


def test_subprocess_envs_step_with_masks(tmp_path: pathlib.Path) -> None:
    env = make_vec_env(tiny(vec_env="subproc", num_envs=2), tmp_path / "league")
    try:
        env.seed(0)
        obs = env.reset()
        shape = env.observation_space.shape
        assert isinstance(obs, np.ndarray) and shape is not None and obs.shape == (2, shape[0])
        for _ in range(50):
            masks = np.stack(env.env_method("action_masks"))
            obs, _, _, _ = env.step(np.array([np.flatnonzero(m)[0] for m in masks]))
            assert isinstance(obs, np.ndarray) and obs.shape[0] == 2
    finally:
        env.close()


@pytest.mark.slow
def test_quick_config_trains_as_shipped(tmp_path: pathlib.Path) -> None:
    run_dir = train_from_file(CONFIGS / "huit_quick.yaml", runs_dir=tmp_path)
    assert (run_dir / "bot.json").is_file() and (run_dir / "eval.csv").is_file()
