"""Training progress as a person sees it: the bar counts to whichever limit comes first, says "done" at
100%, and Ctrl-C in the first seconds leaves a checkpoint to resume from (real `cardlab train` processes)."""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
import yaml

from cardlab.training.harness.progress import Deadline, Progress, TrainingBar
from tests.cli.test_cli_process import TIMEOUT, environment, first_run, run_in_terminal, seconds, wait_for

CARDLAB = [sys.executable, "-m", "cardlab"]
# the lean trainer at the shape of configs/huit_selfplay.yaml, small: thousands of steps a second
LEAN: dict[str, Any] = {
    "name": "lean", "seed": 1, "game": "huit", "num_players": 2, "trainer": "lean",
    "opponents": [{"spec": "random", "weight": 1}], "self_play": {"enabled": False},
    "imitation": {"enabled": False}, "ppo": {"n_steps": 16, "batch_size": 256, "n_epochs": 1},
    "policy": {"net_arch": [16]}, "num_envs": 16, "total_timesteps": 10**9, "max_minutes": 0.1,
    "eval": {"every_steps": 1024, "hands": 4, "final_hands": 4, "opponents": ["random"]},
    "checkpoint_every": 10**9,
}


def write(folder: pathlib.Path, **changes: object) -> pathlib.Path:
    path = folder / "lean.yaml"
    path.write_text(yaml.safe_dump({**LEAN, **changes}))
    return path


def test_the_bar_counts_to_the_deadline_when_it_comes_first() -> None:
    deadline = Deadline(1.0)  # a minute left
    bar = TrainingBar(Progress(False), 10**12, 0, deadline, "run")
    assert bar.total == 10**12  # no rate yet
    time.sleep(0.2)
    bar.update(1000)
    # ~5,000 steps a second for the minute left: ~300k steps, not the ceiling of 10^12.
    assert 1000 < bar.total < 10**6
    assert bar.finish() == "done: 1,000 steps"
    unlimited = TrainingBar(Progress(False), 5000, 0, Deadline(0), "run")
    time.sleep(0.01)
    unlimited.update(1000)
    assert unlimited.total == 5000


@pytest.mark.slow
def test_a_run_capped_by_minutes_shows_a_short_eta_and_done_at_100(tmp_path: pathlib.Path) -> None:
    config = write(tmp_path)  # 6 seconds of training, a ceiling of 10^9 steps
    argv = [*CARDLAB, "train", str(config), "--runs-dir", str(tmp_path / "r")]
    status, _out, screen = run_in_terminal(argv, environment(tmp_path / "tmp"), lambda: False)
    assert status == 0, screen[-2000:]
    updates = [u for u in re.split(r"[\r\n]+", screen) if u.startswith("lean:")]
    etas = [seconds(m) for u in updates for m in re.findall(r"<(\d+(?::\d+)+)", u)]
    assert etas and max(etas) < 60, (max(etas), updates[-3:])  # the minutes left, not 10^9 steps' worth
    assert "100%" in updates[-1] and "done: " in updates[-1] and "last eval" not in updates[-1], updates[-1]


@pytest.mark.slow
def test_ctrl_c_in_the_first_seconds_leaves_a_checkpoint(tmp_path: pathlib.Path) -> None:
    config = write(tmp_path, max_minutes=0)  # no step-based checkpoint for 10^9 steps
    runs = tmp_path / "runs"
    process = subprocess.Popen([*CARDLAB, "train", str(config), "--runs-dir", str(runs)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment(tmp_path / "tmp"), start_new_session=True)
    try:
        wait_for(lambda: any(runs.glob("*/eval.csv")), process, "an evaluation")
        os.killpg(process.pid, signal.SIGINT)
        _out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    run = first_run(runs)
    assert process.returncode == 130 and run is not None, err[-3000:]
    (line,) = err.splitlines()
    assert re.search(r"continue from its checkpoint at [\d,]+ steps with: ", line), line
    assert list((run / "checkpoints").glob("*.zip")) or list((run / "checkpoints").glob("*.pt"))


def test_the_default_checkpoint_interval_is_minutes() -> None:
    from cardlab.training.harness.config import TrainConfig

    assert 0 < TrainConfig().checkpoint_minutes <= 10


def test_a_log_gets_a_line_when_nothing_was_said_for_the_heartbeat(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from cardlab.training.harness import progress as progress_module

    clock = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    shown = Progress(True)
    shown.bars = False  # a log, not a terminal
    shown.say("evaluation at 0 steps")
    for seconds_later in (5, 10, progress_module.HEARTBEAT_SECONDS, progress_module.HEARTBEAT_SECONDS + 3):
        clock[0] = 100.0 + seconds_later
        shown.heartbeat(lambda: f"still at it, {clock[0] - 100:.0f} s")
    assert capsys.readouterr().out.splitlines() == ["evaluation at 0 steps", "still at it, 20 s"]
    terminal = Progress(True)
    terminal.bars = True
    clock[0] += 1000
    terminal.heartbeat(lambda: "not on a terminal: the bar shows it")
    assert capsys.readouterr().out == ""


def test_a_run_logged_to_a_file_is_never_silent_for_long(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Training and the final evaluation each print where they are, through a short heartbeat here."""
    from cardlab.training.harness import progress as progress_module
    from cardlab.training.harness.config import config_from_dict
    from cardlab.training.trainers.train import train

    monkeypatch.setattr(progress_module, "HEARTBEAT_SECONDS", 0.0)  # every heartbeat says: no race with speed
    said: list[float] = []
    real_say = Progress.say

    def say(self: Progress, text: str) -> None:
        said.append(time.monotonic())
        real_say(self, text)

    monkeypatch.setattr(Progress, "say", say)
    cfg = config_from_dict({**LEAN, "eval": {**LEAN["eval"], "final_hands": 400}})
    train(cfg, runs_dir=tmp_path, progress=True)
    out = capsys.readouterr().out
    assert re.search(r"^training: [\d,]+ of [\d,]+ steps \([\d,]+ steps/s\)$", out, re.MULTILINE)
    assert re.search(r"^  evaluating against random: [\d,]+ of 400 episodes played$", out, re.MULTILINE)
    assert max(b - a for a, b in itertools.pairwise(said)) < 3.0
