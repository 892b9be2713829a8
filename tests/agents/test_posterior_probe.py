"""benchmarks/posterior_probe.py's refusals: bad arguments and a `--json` that is not JSON, not the probe's,
or written with other arguments end in one line that says what is accepted, before a hand is played, the
file left as it was (the playing function is replaced: no test here plays a hand)."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from tests.benchmarks import load_benchmark

TINY = ["--game", "huit", "--players", "2", "--hands", "2", "--round", "1", "--reader", "none",
        "--count", "4", "--block", "8", "--budget", "16", "--chains", "2", "--burn", "0", "--thin", "1",
        "--likelihood-worlds", "8"]


def row(hand: int) -> dict[str, Any]:
    """A decision's row as `decisions` writes it (made up: the refusals never read the figures)."""
    return {"hand": hand, "decision": 0, "uniform": 0.5, "reader": 0.5, "likelihood": 0.5, "weighted": 0.5,
            "exact": 0.6, "likelihood_fell_back": False, "method": "rejection", "proposed": 8, "kept": 4,
            "moved": 0.0, "chain_spread": None, "mcmc_check": 0.6, "truth_kept": 1.0, "seconds": 0.1}


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The probe with `decisions` and `round_tools` replaced (no engine built), noting the hands asked for."""
    bench = load_benchmark("posterior_probe", monkeypatch)
    bench.played = []

    def decisions(args: Any, hand: int, tools: dict[str, Any]) -> list[dict[str, Any]]:
        bench.played.append(hand)
        return [row(hand)]

    monkeypatch.setattr(bench, "decisions", decisions)
    monkeypatch.setattr(bench, "round_tools", lambda *args: {})
    return bench


def run(probe: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line refusal of `argv` (argparse's usage line aside); nothing was played."""
    capsys.readouterr()
    with pytest.raises(SystemExit):
        probe.main(argv)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("posterior_probe.py: error: ") or "error:" in error
    assert probe.played == []
    return error


@pytest.mark.parametrize(("extra", "said"), [
    (["--game", "chess"], "--game chess --players 2"),
    (["--players", "9"], "--players 9"),
    (["--field", "nonsense"], "--field nonsense"),
    (["--player", "nonsense"], "--player nonsense"),
    (["--round", "0"], "--round=0 is out of range; accepted: a whole number >= 1"),
    (["--round", "-3"], "--round=-3 is out of range; accepted: a whole number >= 1"),
    (["--hands", "0"], "--hands=0 is out of range; accepted: a whole number >= 1"),
    (["--truth-every", "0"], "--truth-every=0 is out of range; accepted: a whole number >= 1"),
    (["--likelihood-worlds", "0"], "--likelihood-worlds=0 is out of range"),
    (["--eps", "2"], "--eps=2.0 is out of range; accepted: a number from 0 to 1"),
    (["--count", "0"], "count=0"),
    (["--chains", "-1"], "chains=-1"),
    (["--burn", "-1"], "burn=-1"),
])
def test_bad_arguments_are_refused_in_one_line_before_playing(
        probe: Any, extra: list[str], said: str, tmp_path: pathlib.Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each bad argument: one line naming it and what is accepted; no hand played, no --json written."""
    out = tmp_path / "probe.json"
    assert said in run(probe, [*TINY, "--json", str(out), *extra], capsys)
    assert not out.exists()


def test_a_json_of_another_run_or_damaged_is_refused_and_left_unchanged(
        probe: Any, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run writes and resumes its --json; a --json that is not JSON, not this probe's, or written with
    another game, players, field or sampling is refused in one line, the file unchanged."""
    out = tmp_path / "probe.json"
    probe.main([*TINY, "--hands", "1", "--json", str(out)])
    probe.main([*TINY, "--hands", "2", "--json", str(out)])  # resumed: only the second hand is played
    assert probe.played == [0, 1]
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["next_hand"] == 2 and [r["hand"] for r in saved["rows"]] == [0, 1]
    probe.played.clear()
    text = out.read_text(encoding="utf-8")
    for extra, said in ((["--players", "3"], "was written with --players '2', this run's is '3': resume with "
                                             "the same arguments"),
                        (["--field", "greedy"], "with --field 'None', this run's is \"['greedy']\""),
                        (["--count", "8"], "was written with --count '4'"),
                        (["--seed", "1"], "was written with --seed '0'")):
        assert said in run(probe, [*TINY, "--hands", "3", "--json", str(out), *extra], capsys)
        assert out.read_text(encoding="utf-8") == text
    for content, said in (("{not json", "not a JSON (JSONDecodeError"),
                          ("[1, 2]", "not a JSON this probe wrote"),
                          (json.dumps({"rows": {}}), "not a JSON this probe wrote"),
                          (json.dumps({**saved, "args": None}), "not a JSON this probe wrote")):
        out.write_text(content, encoding="utf-8")
        assert said in run(probe, [*TINY, "--hands", "3", "--json", str(out)], capsys)
        assert out.read_text(encoding="utf-8") == content
