"""A log is never silent for long: `cardlab eval` and `bench` (stderr not a terminal, so no bar) write a line
of how far they are, flushed, at least every `HEARTBEAT_SECONDS` (here 0: after every deal)."""

from __future__ import annotations

import pytest

from cardlab.cli import main
from cardlab.training import progress


def test_eval_writes_how_far_it_is_into_a_log(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.0)
    assert main(["eval", "--game", "huit", "--agents", "random", "random", "--hands", "6"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "episodes played" in line]
    assert lines and lines[-1] == "cardlab eval: 6 of 6 episodes played", out
