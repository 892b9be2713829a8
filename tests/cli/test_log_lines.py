"""A log is never silent for long: `cardlab eval` and `bench` (stderr not a terminal, so no bar) write a line
of how far they are, flushed, at least every `HEARTBEAT_SECONDS` (here 0: after every deal)."""

from __future__ import annotations

import time

import pytest

from cardlab.cli import main
from cardlab.training.harness import progress


def test_eval_writes_how_far_it_is_into_a_log(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.0)
    assert main(["eval", "--game", "huit", "--agents", "random", "random", "--hands", "6"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "episodes played" in line]
    assert lines and lines[-1] == "cardlab eval: 6 of 6 episodes played", out


def test_a_training_log_gets_a_line_while_one_call_runs_long(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A call that says nothing for a long time (kernels compiling, one long update) gets lines all the
    same: `Progress.watched` says the run's status whenever the log was silent for `WATCH_SECONDS`."""
    monkeypatch.setattr(progress, "WATCH_SECONDS", 0.3)
    show = progress.Progress(True)
    collected = 0
    show.doing(lambda: f"imitation: {collected} of 40 hands collected")
    with show.watched():
        collected = 12
        time.sleep(2.0)  # silent, as a compiling call is
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 3, lines
    assert lines[0].startswith("imitation: 12 of 40 hands collected (the last line "), lines
    time.sleep(1.0)
    assert capsys.readouterr().out == ""  # the thread ends with the block
