"""`benchmarks/match_suite_size.py` refuses, before any match, what it measured wrong or failed on after
playing: a hand suite (its hands taken for matches), a half-width of 0, below or NaN (a division by zero
after the matches, or 1 deal said to be enough), deals outside the suite, an agent spec after others."""

from __future__ import annotations

import pytest

from tests.benchmarks import load_benchmark

MATCH_SUITES = ("huit-2p-match, huit-3p-match, huit-4p-match, huit-5p-match, huit-6p-match, switch-4p-match, "
                "switch-5p-match, switch-6p-match (or a match suite's .json)")


@pytest.mark.parametrize(("argv", "said"), [
    (["--suite", "huit-4p"],
     f"--suite='huit-4p' is a suite of hands, not of matches; accepted: {MATCH_SUITES}"),
    (["--half", "0"], "--half=0.0 is out of range; accepted: a half-width of the interval > 0 and <= 0.5"),
    (["--half", "-1"], "--half=-1.0 is out of range"),
    (["--half", "nan"], "--half=nan is out of range"),
    (["--deals", "0"], "--deals=0 is out of range; accepted: a whole number from 1 to the suite's 500 deals"),
    (["--deals", "501"], "--deals=501 is out of range"),
    (["--agents", "expert", "nobody"], "unknown agent spec 'nobody' for huit"),
])
def test_bad_arguments_are_refused_before_any_match(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], argv: list[str],
                                                     said: str) -> None:
    bench = load_benchmark("match_suite_size", monkeypatch)
    monkeypatch.setattr(bench, "bench", lambda *args, **kwargs: pytest.fail("played"))
    with pytest.raises(SystemExit):
        bench.main(["--suite", "huit-2p-match", "--deals", "2", *argv])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.split(": error: ", 1)[1].startswith(said), error
