"""`benchmarks/dmc_vs_ppo.py` refuses, before any run, what it would fail on after one (each row is a run of
minutes): a results file that is not its own, a folder, a final evaluation of no hands, a row it does not
have."""

from __future__ import annotations

import json
import pathlib

import pytest

from tests.benchmarks import load_benchmark


def test_a_bad_results_file_or_hands_is_refused_before_any_run(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: pathlib.Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Before, a damaged or foreign results file failed with a traceback and a folder after the first run
    (its row lost), `--hands 0` reported the run's last periodic evaluation (200 hands) as its row, and
    `--steps 0` was refused as the config key total_timesteps, not the flag typed."""
    bench = load_benchmark("dmc_vs_ppo", monkeypatch)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    cut = tmp_path / "cut.json"
    cut.write_text('[{"label": "ppo", "ste', encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"label": "ppo"}), encoding="utf-8")
    accepted = ("accepted: a JSON list of this benchmark's rows, each with label, algorithm, net_arch, "
                "steps, hands, win_rate, paired_ci, wilson_ci, minutes, run, or a new file name")
    cases = [
        (["--out", str(cut)], f"--out {cut}: not a JSON (JSONDecodeError: "),
        (["--out", str(other)],
         f"--out {other}: not a results file of this benchmark (a damaged file, or another's); "
         f"{accepted}"),
        (["--out", str(tmp_path)], f"--out {tmp_path} is a folder: give the name of a file to write"),
        (["--out", str(tmp_path / "x.json"), "--hands", "0"],
         "--hands=0 is out of range; accepted: a whole number of hands >= 1 (a row is its run's final "
         "evaluation)"),
        (["--out", str(tmp_path / "x.json"), "--steps", "0"],  # named by its flag, not total_timesteps
         "--steps=0 is out of range; accepted: a value >= 1 and <= 2,000,000,000"),
        (["--out", str(tmp_path / "x.json"), "--only", "ppo", "nope", "dmc-9"],  # `unknown`'s line
         "unknown row(s) dmc-9, nope for --only; accepted: ppo, dmc, dmc-512x512"),
    ]
    for argv, said in cases:
        with pytest.raises(SystemExit):
            bench.main(["--steps", "1000", "--only", "ppo", *argv])
        error = capsys.readouterr().err.strip().splitlines()[-1].split(": error: ", 1)[1]
        assert error.startswith(said), (argv, error)
    assert cut.read_text(encoding="utf-8") == '[{"label": "ppo", "ste'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.json", "other.json"]


def test_the_committed_results_files_read_as_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("dmc_vs_ppo", monkeypatch)
    for path in sorted((bench.REPO / "benchmarks" / "results").glob("dmc-vs-ppo-*.json")):
        rows = bench.read_results(path)
        assert rows and {r["label"] for r in rows} <= {"ppo", "dmc", "dmc-512x512"}, path
