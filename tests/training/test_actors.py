"""The lean trainer's actors: `actors: 0` is the single process of before, bit for bit; actor processes
train, resume, survive a killed actor and stop on Ctrl-C; bad placements are refused in one line."""

from __future__ import annotations

import csv
import hashlib
import json
import multiprocessing
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import torch
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.agents.bot import bot_paths, load_bot
from cardlab.cli import main
from cardlab.cluster.lean_actors import check_address
from cardlab.training.arena.league import list_snapshots
from cardlab.training.harness.checkpoints import checkpoint_steps, list_checkpoints
from cardlab.training.harness.config import config_from_dict, config_to_dict, load_config
from cardlab.training.harness.placement import learner_device, usable_cores
from cardlab.training.harness.records import LearnerEval
from cardlab.training.harness.runs import TrainingInterrupted, league_folder
from cardlab.training.trainers.lean_model import ActorCritic
from cardlab.training.trainers.rollouts import Rollout, score
from cardlab.training.trainers.train import train
from tests.training.test_ppo import CONFIGS, tiny

REFERENCE = pathlib.Path(__file__).with_name("lean_reference.json")


def fingerprint(run_dir: pathlib.Path) -> dict[str, Any]:
    """The final checkpoint's steps, weights (sha256 and per-tensor sums) and the run's eval.csv win rates."""
    data = torch.load(list_checkpoints(run_dir)[-1], weights_only=True)
    state = data["model"]
    digest = hashlib.sha256(b"".join(state[k].numpy().tobytes() for k in sorted(state))).hexdigest()
    sums = {k: [float(state[k].double().sum()), float((state[k].double() ** 2).sum())] for k in sorted(state)}
    with (run_dir / "eval.csv").open() as f:
        rows = [[r["steps"], r["opponent"], r["win_rate"]] for r in csv.DictReader(f)]
    return {"steps": data["steps"], "digest": digest, "sums": sums, "eval": rows}


def test_no_actors_trains_as_the_single_process_did(tmp_path: pathlib.Path) -> None:
    """`tiny()` with `actors: 0` gives the weights and evaluations recorded (lean_reference.json's made_by).

    The sums are compared to 1e-9 relative rather than the digest alone, so that a CPU whose matrix
    kernels round differently in the last bit still passes; another draw of any random number (a
    different deal, sample or minibatch) moves them by far more."""
    reference = json.loads(REFERENCE.read_text())
    found = fingerprint(train(tiny(actors=0), runs_dir=tmp_path, progress=False))
    assert (found["steps"], found["eval"]) == (reference["steps"], reference["eval"])
    assert found["sums"].keys() == reference["sums"].keys()
    for key, sums in reference["sums"].items():
        assert found["sums"][key] == pytest.approx(sums, rel=1e-9, abs=1e-12), key


# ---------------------------------------------------------------- refused in one line
def _config(**changes: Any) -> dict[str, Any]:
    data = config_to_dict(load_config(CONFIGS / "huit_selfplay.yaml"))
    return {**data, **changes}


@pytest.mark.parametrize(("changes", "expected"), [
    ({"actors": -1}, "actors=-1 is not a whole number >= 0; accepted: 0 (one process) or a number of actor "
                     "processes >= 1"),
    ({"actors": 4 * usable_cores() + 1}, f"actors={4 * usable_cores() + 1} is more than this machine's "
                                         f"{usable_cores()} cores take; accepted: at most "
                                         f"{4 * usable_cores()}"),
    ({"device": "cuda"}, "device='cuda' is not usable: torch sees no GPU here (torch.cuda.is_available() is "
                         "false); accepted: 'cpu', or 'auto'"),
    ({"device": "gpu"}, "device='gpu' is not one of the choices; accepted: 'cpu', 'cuda', 'auto'"),
    ({"max_policy_lag": -1}, "max_policy_lag=-1 is out of range; accepted: a value >= 0"),
    ({"ray": {"address": "local"}}, "ray.address='local' is not accepted with actors: 0; accepted: '' "
                                    "(this machine's processes), or actors of 1 or more (the cluster runs "
                                    "the actors)"),
    ({"trainer": "maskable_ppo", "actors": 2},
     "actors=2 is not accepted with trainer: maskable_ppo; accepted: 0, or trainer: lean"),
])
def test_bad_placements_are_refused_in_one_line(changes: dict[str, Any], expected: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without a GPU
    with pytest.raises(ValueError, match=re.escape(expected)) as err:
        config_from_dict(_config(**changes))
    assert "\n" not in str(err.value)


def test_auto_falls_back_to_the_cpu_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert learner_device("auto") == torch.device("cpu") and learner_device("cpu") == torch.device("cpu")
    assert config_from_dict(_config(device="auto")).device == "auto"


def test_a_ray_address_that_does_not_answer_is_refused_in_one_line(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: pathlib.Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        refused = (rf"^ray\.address='127\.0\.0\.1:{port}' is a Ray cluster that cannot be reached "
                   r"\(.* within 0\.5 s\)")
        with pytest.raises(ValueError, match=refused):
            check_address(f"127.0.0.1:{port}", timeout=0.5)
        config = tmp_path / "actors.yaml"
        config.write_text(yaml.safe_dump(_config(actors=1)))
        assert main(["train", str(config), "--ray-address", f"127.0.0.1:{port}", "--runs-dir",
                     str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert f"ray.address='127.0.0.1:{port}' is a Ray cluster that cannot be reached (" in err
    assert "; accepted: HOST:PORT" in err
    assert not (tmp_path / "runs").exists()  # refused before a run folder is made
    bad = ("ray.address='nowhere:port' is not a cluster address; accepted: HOST:PORT (what `ray start "
           "--head` prints), ray://HOST:PORT, 'auto' or 'local'")
    with pytest.raises(ValueError, match=f"^{re.escape(bad)}$"):
        check_address("nowhere:port")


# ---------------------------------------------------------------- actor processes
def _actors() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name.startswith("cardlab-actor-")]


def test_two_actors_train_survive_a_killed_actor_and_resume(tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    killed: list[int] = []

    def kill_an_actor(steps: int, results: Sequence[LearnerEval], final: bool) -> None:
        if not killed:  # at the first evaluation along the run, in the learner's process
            (actor,) = [p for p in _actors() if p.name == "cardlab-actor-0"]
            assert actor.pid is not None
            os.kill(actor.pid, signal.SIGKILL)
            killed.append(steps)

    run_dir = train(tiny(actors=2, total_timesteps=3000), runs_dir=tmp_path, reporter=kill_an_actor)
    out = capsys.readouterr().out
    assert killed and "actor 0 ended (exit code -9); started again" in out
    assert not _actors()  # all stopped at the end
    bot = load_bot(run_dir)
    summary = bot.metadata["summary"]
    assert summary["steps"] >= 3000 and summary["algorithm"] == "lean masked PPO"
    acc = EventAccumulator(str(next(run_dir.glob("events.out.tfevents.*"))))
    acc.Reload()
    assert max(e.value for e in acc.Scalars("charts/actor_restarts")) == 1
    lags = [e.value for e in acc.Scalars("charts/policy_lag")]
    assert lags and max(lags) <= tiny().max_policy_lag

    train(tiny(actors=2, total_timesteps=5000), resume=run_dir, progress=False)
    assert checkpoint_steps(list_checkpoints(run_dir)[-1]) >= 5000
    assert load_bot(run_dir).metadata["summary"]["steps"] >= 5000


def test_ctrl_c_stops_the_actors_and_leaves_a_checkpoint(tmp_path: pathlib.Path) -> None:
    def interrupt(steps: int, results: Sequence[LearnerEval], final: bool) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends the learner (its actors ignore it)

    with pytest.raises(TrainingInterrupted) as stopped:
        train(tiny(actors=2, total_timesteps=3000), runs_dir=tmp_path, progress=False, reporter=interrupt)
    assert stopped.value.checkpoint_steps is not None and stopped.value.checkpoint_steps > 0
    assert not _actors()


def test_a_cut_rollout_scores_as_the_whole_one() -> None:
    """What an actor sends (the learner's moves alone, `Rollout.cut`) makes the whole rollout's batch."""
    T, B, n, size, actions = 6, 5, 3, 7, 4
    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)
    obs = torch.randn(T, B, size, generator=gen)
    played = Rollout(obs=obs, critic=obs, mask=torch.ones(T, B, actions, dtype=torch.bool),
                     actions=torch.randint(0, actions, (T, B), generator=gen),
                     logp=-torch.rand(T, B, generator=gen),
                     seats=np.tile(np.arange(T)[:, None] % n, (1, B)), learner=rng.random((T, B)) < 0.6,
                     rewards=np.where(rng.random((T, B, n)) < 0.1, 1.0, 0.0).astype(np.float32),
                     ended=rng.random((T, B)) < 0.1, hands=torch.empty(T, B, 0),
                     final_inputs=torch.randn(B, n, size, generator=gen))
    model = ActorCritic(size, actions, [8], "tanh")
    cfg = tiny()
    whole, whole_stats, whole_steps = score(played, cfg, model, torch.device("cpu"))
    cut, cut_stats, cut_steps = score(played.cut(), cfg, model, torch.device("cpu"))
    assert (whole_steps, whole_stats) == (cut_steps, cut_stats) and whole_steps == int(played.learner.sum())
    for key, value in whole.items():
        assert torch.equal(value, cut[key]), key


RUN_IN_A_FRESH_PROCESS = """
import pathlib, sys
import torch
from cardlab.training.trainers.train import train
from tests.training.test_ppo import tiny
torch.rand(int(sys.argv[3]))  # what else ran before in the process: it must not move the run
train(tiny(actors=int(sys.argv[2])), runs_dir=pathlib.Path(sys.argv[1]), progress=False)
"""


def _fresh_run(runs_dir: pathlib.Path, actors: int, before: int) -> pathlib.Path:
    """The run folder of `tiny(actors=actors)` trained in a new Python process that drew `before` numbers
    from torch's global generator first."""
    subprocess.run([sys.executable, "-c", RUN_IN_A_FRESH_PROCESS, str(runs_dir), str(actors), str(before)],
                   check=True, cwd=pathlib.Path(__file__).resolve().parents[2], timeout=600)
    (run_dir,) = runs_dir.iterdir()
    return run_dir


def _first_snapshot(run_dir: pathlib.Path) -> bytes:
    return bot_paths(list_snapshots(league_folder(run_dir))[0])[1].read_bytes()


def test_a_run_is_the_same_in_fresh_processes(tmp_path: pathlib.Path) -> None:
    """The lean trainer seeds torch before it builds its network: two runs of one config in new processes
    (each starting torch's generator at its own seed, one also drawing from it first) have the same first
    weights, and with `actors: 0` the same final weights and evaluations; with actors the rest depends on
    which rollout comes first, so the first weights (the league's 0-step snapshot) are compared."""
    alone = [_fresh_run(tmp_path / f"alone{i}", 0, before) for i, before in enumerate((1, 1000))]
    assert fingerprint(alone[0]) == fingerprint(alone[1])
    assert _first_snapshot(alone[0]) == _first_snapshot(alone[1])
    acting = _fresh_run(tmp_path / "acting", 1, 3)
    assert _first_snapshot(acting) == _first_snapshot(alone[0])
