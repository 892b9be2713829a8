"""The lean masked PPO trainer: its run folder, bot file, resume, masking, and the self-play configs."""

from __future__ import annotations

import csv
import dataclasses
import pathlib
import re
import time
from typing import Any

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.agents.bot import load_bot
from cardlab.cli import main
from cardlab.envs import make_game
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.training.arena.league import LeagueSettings, list_population, list_snapshots
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.checkpoints import list_checkpoints, record_checkpoint
from cardlab.training.harness.config import TrainConfig, config_from_dict, config_to_dict, load_config
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers.lean import LeanRun, load_actor
from cardlab.training.trainers.lean_model import ActorCritic, new_model, sample
from cardlab.training.trainers.ppo import ILLEGAL_LOGIT
from cardlab.training.trainers.train import train

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def tiny(**changes: Any) -> TrainConfig:
    """The Huit self-play config, shrunk to seconds."""
    cfg = load_config(CONFIGS / "huit_selfplay.yaml")
    cfg = dataclasses.replace(
        cfg,
        num_envs=16,
        total_timesteps=1500,
        checkpoint_every=1000,
        ppo=dataclasses.replace(cfg.ppo, n_steps=32, batch_size=128),
        policy=dataclasses.replace(cfg.policy, net_arch=[32, 32]),
        self_play=dataclasses.replace(cfg.self_play, snapshot_every=1000),
        eval=dataclasses.replace(cfg.eval, every_steps=1000, hands=4, final_hands=6, opponents=["random"]),
    )
    return dataclasses.replace(cfg, **changes)


@pytest.mark.parametrize("name", ["huit_selfplay", "switch_selfplay", "huit_selfplay_match"])
def test_selfplay_configs_load_and_use_the_lean_trainer(name: str) -> None:
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert cfg.trainer == "lean" and not cfg.imitation.enabled and cfg.self_play.enabled
    assert cfg.num_players == {"huit": 2, "switch": 4}[cfg.game]
    assert set(cfg.eval.opponents) == {"expert", "greedy", "random"}
    assert cfg.max_minutes <= 60 and cfg.eval.final_hands >= 4000  # the budget and evaluation
    assert (cfg.reward, cfg.eval.final_matches >= 400) == (
        ("points", True) if name.endswith("match") else ("win", False))


def test_other_configs_keep_maskable_ppo() -> None:
    assert load_config(CONFIGS / "huit_ppo.yaml").trainer == "maskable_ppo"


@pytest.mark.parametrize(("changes", "expected"), [
    ({"trainer": "sb3"}, "trainer='sb3' is not one of the choices; accepted: 'maskable_ppo', 'lean'"),
    ({"episode": "round"}, "episode='round' is not one of the choices; accepted: 'hand', 'match'"),
    ({"episode": "match", "reward": "points"},
     "reward='points' is not accepted with episode: match; accepted: 'win' (the match's win reward) or "
     "'match'"),
    ({"episode": "match", "trainer": "maskable_ppo"},
     "episode='match' is not accepted with trainer: maskable_ppo; accepted: 'hand', or trainer: lean"),
    ({"eval": {"matches": -1}}, "eval.matches=-1 is out of range; accepted: a value >= 0"),
    ({"reward": "match"}, "reward='match' is not accepted with episode: hand; accepted: 'win' or 'points', "
                          "or episode: match ('match' pays the change of the match equity across the hands "
                          "of a match)"),
    ({"reward": "match", "episode": "match", "trainer": "maskable_ppo"},
     "reward='match' is not accepted with trainer: maskable_ppo; accepted: 'win' or 'points', or trainer: "
     "lean"),
    ({"skip_forced_moves": True},
     "skip_forced_moves=True is not accepted with trainer: lean; accepted: false, or trainer: maskable_ppo"),
    ({"population": {"dir": "runs/pool"}, "self_play": {"enabled": False}},
     "population.dir='runs/pool' is not accepted without self-play; accepted: '' (no population), or set "
     "self_play.enabled: true as well"),
    ({"eval": {"final_hands": 0, "final_matches": 4}},
     "eval.final_matches=4 is not accepted with eval.final_hands: 0; accepted: 0, or eval.final_hands > 0"),
    ({"reward": "match", "episode": "match", "game": "switch", "num_players": 3},
     "reward: match needs the table's match equity: no match equity ships for switch with 3 players "
     "(equity models: huit-2p, huit-3p, huit-4p, huit-5p, huit-6p, switch-4p, switch-5p, switch-6p)"),
    ({"reward": "match", "episode": "match", "rules": {"target_score": 100}},
     "reward: match needs the table's match equity: match equity "),
    ({"opponents": [{"spec": "search:belief=expert:worlds=2:ms=0:expert", "weight": 1.0}]},
     "opponents[0].spec='search:belief=exp...rlds=2:ms=0:expert' is an agent that must be shown the hand's "
     "record or true state; accepted: an agent that plays from its observation (the lean trainer's batched "
     "play shows nothing else), or trainer: maskable_ppo"),
    ({"imitation": {"enabled": True, "teacher": "search:cheat=1:worlds=2:ms=0:expert"}},
     "imitation.teacher='search:cheat=1:worlds=2:ms=0:expert' is an agent that must be shown"),
])
def test_lean_refuses_what_it_does_not_do(changes: dict[str, Any], expected: str) -> None:
    data = config_to_dict(load_config(CONFIGS / "huit_selfplay.yaml"))
    for key, value in changes.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    with pytest.raises(ValueError, match=re.escape(expected)):
        config_from_dict(data)


def test_maskable_ppo_seats_agents_that_must_be_shown_the_record() -> None:
    """Its env shows every seat the table (`show_table`), which the lean trainer's batched play cannot."""
    data = config_to_dict(load_config(CONFIGS / "huit_ppo.yaml"))
    data["opponents"] = [{"spec": "search:belief=expert:worlds=2:ms=0:expert", "weight": 1.0}]
    assert config_from_dict(data).opponents[0].spec.startswith("search:belief=expert")


def test_lean_takes_the_privileged_critic_and_match_episodes() -> None:
    data = config_to_dict(load_config(CONFIGS / "huit_selfplay.yaml"))
    data["policy"]["privileged_critic"], data["episode"] = True, "match"
    cfg = config_from_dict(data)
    assert cfg.policy.privileged_critic and cfg.episode == "match"


def test_masked_sampling_never_picks_an_illegal_action() -> None:
    torch.manual_seed(0)
    model = ActorCritic(20, 50, [16], "tanh")
    with torch.no_grad():
        last = model.actor[-1]
        assert isinstance(last, torch.nn.Linear)
        last.bias[:] = torch.linspace(10.0, -10.0, 50)  # the illegal ones look best
    mask = torch.rand(4096, 50) < 0.05
    mask[torch.arange(4096), torch.randint(0, 50, (4096,))] = True
    logits = model.masked_logits(torch.randn(4096, 20), mask)
    for _ in range(5):
        assert mask[torch.arange(4096), sample(logits)].all()
    probs = torch.softmax(logits, dim=-1)
    assert (probs[~mask] == 0).all() and (logits[~mask] == ILLEGAL_LOGIT).all()


def test_tiny_run_writes_its_folder_and_a_bot_that_plays(tmp_path: pathlib.Path) -> None:
    run_dir = train(tiny(), runs_dir=tmp_path, progress=False)
    for name in ("config.yaml", "eval.csv", "bot.json", "bot.safetensors", "checkpoints/SHA256SUMS"):
        assert (run_dir / name).is_file(), name
    assert list(run_dir.glob("events.out.tfevents.*"))
    assert list_checkpoints(run_dir) and list_snapshots(run_dir / "checkpoints" / "league")
    bot = load_bot(run_dir)
    assert bot.metadata["summary"]["algorithm"] == "lean masked PPO"
    assert bot.metadata["network"]["layer_sizes"][1:3] == [32, 32]
    result = evaluate(EvalRequest("huit", [f"bot:{run_dir}", "random"], hands=4, seed=0))
    assert result.stats[0].hands.n == 4
    rows = (run_dir / "eval.csv").read_text().splitlines()
    assert len(rows) >= 3  # header, an evaluation along the run, the final one


def test_points_reward_run_logs_hand_points_and_writes_a_bot(tmp_path: pathlib.Path) -> None:
    run_dir = train(tiny(reward="points"), runs_dir=tmp_path, progress=False)
    bot = load_bot(run_dir)
    assert bot.metadata["summary"]["steps"] >= 1500
    acc = EventAccumulator(str(next(run_dir.glob("events.out.tfevents.*"))))
    acc.Reload()
    points = [e.value for e in acc.Scalars("charts/hand_points")]
    assert points and all(p >= 0 for p in points) and any(p > 0 for p in points)
    assert "charts/win_rate" not in acc.Tags()["scalars"]  # a points run has no training win rate


def test_final_matches_are_played_and_reported(tmp_path: pathlib.Path) -> None:
    cfg = tiny()
    cfg = dataclasses.replace(cfg, eval=dataclasses.replace(cfg.eval, final_matches=4))
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    final = load_bot(run_dir).metadata["summary"]["final_eval"]["random"]
    assert final["matches"] == 4 and 0.0 <= final["match_ci_low"] <= final["match_win_rate"] <= 1.0
    assert final["match_ci_high"] > final["match_ci_low"]
    assert final["match_paired_ci_low"] <= final["match_win_rate"] <= final["match_paired_ci_high"]
    with (run_dir / "eval.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[-1]["matches"] == "4" and all(r["matches"] == "0" for r in rows[:-1])


def test_max_minutes_ends_training_on_wall_clock(tmp_path: pathlib.Path) -> None:
    start = time.monotonic()
    run_dir = train(tiny(total_timesteps=10**9, max_minutes=0.05), runs_dir=tmp_path, progress=False)
    steps = load_bot(run_dir).metadata["summary"]["steps"]
    assert 0 < steps < 10**9
    assert time.monotonic() - start < 120  # 3 s of training, then the final checkpoint and evaluation
    assert (run_dir / "eval.csv").read_text().count("\n") >= 2 and list_checkpoints(run_dir)


def test_resume_continues_from_the_last_checkpoint(tmp_path: pathlib.Path) -> None:
    run_dir = train(tiny(), runs_dir=tmp_path, progress=False)
    first = int(list_checkpoints(run_dir)[-1].stem.split("_")[1])
    train(tiny(total_timesteps=3000), resume=run_dir, progress=False)
    last = int(list_checkpoints(run_dir)[-1].stem.split("_")[1])
    assert first >= 1500 and last >= 3000
    assert load_bot(run_dir).metadata["summary"]["steps"] == last


def test_resume_refuses_another_trainer(tmp_path: pathlib.Path) -> None:
    run_dir = train(tiny(), runs_dir=tmp_path, progress=False)
    (run_dir / "config.yaml").write_text((run_dir / "config.yaml").read_text().replace(
        "trainer: lean", "trainer: maskable_ppo"))
    with pytest.raises(ValueError, match="config differs in trainer"):
        train(tiny(total_timesteps=3000), resume=run_dir, progress=False)


def test_cardlab_export_writes_the_bot_of_a_lean_checkpoint(tmp_path: pathlib.Path) -> None:
    run_dir = train(tiny(), runs_dir=tmp_path, progress=False)
    assert main(["export", str(run_dir), "-o", str(tmp_path / "exported")]) == 0
    exported, trained = load_bot(tmp_path / "exported.json"), load_bot(run_dir)
    assert exported.metadata["summary"]["algorithm"] == "lean masked PPO"
    obs = torch.randn(8, trained.game.layout.size).numpy()
    assert (exported.logits(obs) == trained.logits(obs)).all()  # the final checkpoint is the bot's actor


def test_a_lean_run_publishes_its_snapshots_to_its_population_and_draws_the_others(
    tmp_path: pathlib.Path,
) -> None:
    """Two lean learners sharing a population folder: each publishes its snapshots, the other plays them."""
    population = tmp_path / "population"
    pop = dataclasses.replace(tiny().population, dir=str(population), share=1.0)
    first = train(tiny(population=pop), runs_dir=tmp_path / "runs", progress=False)
    own = [p.name for p in list_snapshots(first / "checkpoints" / "league")]
    published = [p.name for p in list_population(population)]
    assert own and published == [f"{first.name}__{name}" for name in own]
    assert list_population(population, learner=first.name) == []  # a learner never draws itself

    cfg = tiny(population=pop)
    league = LeagueSettings(opponents=(("random", 1.0),), population_dir=str(population),
                            population_share=1.0, learner="second")
    game = make_game(cfg.game, {**cfg.rules, "num_players": cfg.num_players})
    table = SelfPlayBatch(game, 8, league, learner_share=0.0, seed=0)
    drawn = set(table.policies) - {"learner"}
    assert drawn and drawn <= {p.stem for p in list_population(population)}


def _privileged(cfg: TrainConfig, on: bool = True) -> TrainConfig:
    return dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, privileged_critic=on))


def test_a_privileged_critic_run_trains_resumes_and_exports_its_actor(tmp_path: pathlib.Path) -> None:
    cfg = _privileged(tiny(num_players=3))
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    train(dataclasses.replace(cfg, total_timesteps=3000), resume=run_dir, progress=False)
    checkpoint = list_checkpoints(run_dir)[-1]
    actor, steps = load_actor(checkpoint, run_dir, cfg)
    assert steps >= 3000
    game = make_game("huit", num_players=3)
    critic = torch.load(checkpoint, weights_only=True)["model"]["critic.0.weight"]
    assert critic.shape[1] == 3 * game.layout.size  # every seat's observation
    bot = load_bot(run_dir)  # the actor alone, reading the learner's observation
    assert bot.metadata["network"]["layer_sizes"][0] == game.layout.size
    obs = torch.randn(8, game.layout.size)
    with torch.no_grad():
        torch.testing.assert_close(torch.as_tensor(bot.logits(obs.numpy())), actor(obs))
    result = evaluate(EvalRequest("huit", [f"bot:{run_dir}", "random", "random"], hands=3, seed=0))
    assert result.stats[0].hands.n == 3


def test_the_privileged_critic_reads_each_transition_from_its_acting_seat_on(tmp_path: pathlib.Path) -> None:
    run = LeanRun(_privileged(tiny(num_players=3)), tmp_path, None, Progress(False))
    batch, _ = run.rollout()
    size = run.game.layout.size
    assert batch["critic"].shape == (len(batch["obs"]), 3 * size)
    assert torch.equal(batch["critic"][:, :size], batch["obs"])  # the acting seat's own observation first
    assert not torch.equal(batch["critic"][:, size:2 * size], batch["obs"])


@pytest.mark.parametrize("trained_privileged", [False, True])
def test_a_checkpoint_with_the_other_kind_of_critic_is_refused(tmp_path: pathlib.Path,
                                                                trained_privileged: bool) -> None:
    cfg = tiny()
    run_dir = tmp_path / "run"
    path = run_dir / "checkpoints" / "model_64.zip"
    path.parent.mkdir(parents=True)
    torch.save({"model": new_model(_privileged(cfg, trained_privileged)).state_dict(), "optimizer": {},
                "steps": 64}, path)
    record_checkpoint(path)
    kinds = ["privileged_critic: false", "a privileged critic"]
    trained, asked = kinds[::-1] if trained_privileged else kinds
    with pytest.raises(ValueError, match=f"holds .*{trained}.* but the config asks for .*{asked}"):
        load_actor(path, run_dir, _privileged(cfg, not trained_privileged))
    assert load_actor(path, run_dir, _privileged(cfg, trained_privileged))[1] == 64


def test_a_match_reward_run_trains_end_to_end_and_writes_a_bot(tmp_path: pathlib.Path) -> None:
    """reward: match at a table with a shipped equity (Huit 2p, to 151): hands' equity changes are paid."""
    run_dir = train(tiny(episode="match", reward="match"), runs_dir=tmp_path, progress=False)
    bot = load_bot(run_dir)
    assert bot.metadata["summary"]["steps"] >= 1500
    assert (run_dir / "bot.json").is_file() and load_config(run_dir / "config.yaml").reward == "match"


def test_a_match_episode_run_trains_and_evaluates_matches_along_the_run(tmp_path: pathlib.Path) -> None:
    cfg = tiny(episode="match", rules={"target_score": 30})
    cfg = dataclasses.replace(cfg, eval=dataclasses.replace(cfg.eval, matches=2))
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    assert load_bot(run_dir).metadata["summary"]["steps"] >= 1500
    acc = EventAccumulator(str(next(run_dir.glob("events.out.tfevents.*"))))
    acc.Reload()
    assert sum(e.value for e in acc.Scalars("charts/matches")) > 0
    assert "charts/win_rate" in acc.Tags()["scalars"] and "charts/hands" not in acc.Tags()["scalars"]
    with (run_dir / "eval.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 2 and all(int(r["matches"]) >= 2 for r in rows[:-1])  # along the run
