"""`benchmarks/match_reward_cost.py` refuses counts it failed on after measuring (a median of no repeats, a
rate of 0 steps, a training run of -5 steps) in one line before the first figure."""

from __future__ import annotations

import pytest

from tests.benchmarks import load_benchmark


@pytest.mark.parametrize(("argv", "said"), [
    (["--repeats", "0"], "--repeats=0 is out of range; accepted: a whole number >= 1"),
    (["--steps", "0"], "--steps=0 is out of range; accepted: a whole number >= 1"),
    (["--games", "-1"], "--games=-1 is out of range; accepted: a whole number >= 1"),
    (["--train-steps", "-5"], "--train-steps=-5 is out of range; accepted: a whole number >= 0"),
])
def test_counts_it_cannot_measure_are_refused_before_any_figure(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str],
                                                                argv: list[str], said: str) -> None:
    bench = load_benchmark("match_reward_cost", monkeypatch)
    monkeypatch.setattr(bench, "moves_per_second", lambda *args, **kwargs: pytest.fail("measured"))
    with pytest.raises(SystemExit):
        bench.main(argv)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.split(": error: ", 1)[1] == said, error
