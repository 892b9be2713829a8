"""`cardlab sweep`: the sweep file is checked like a config, the search space becomes Tune's (one draw
per point, shared by its seeds), a quick sweep of 2 points x 2 seeds runs on Ray with ASHA and writes its
table, results and best config, and running it again resumes (here: finds it finished)."""

from __future__ import annotations

import csv
import math
import pathlib
from typing import Any

import pytest
import yaml

from cardlab.cli import main
from cardlab.cluster.sweep import (
    PointSummary,
    TrialOutcome,
    best_point,
    format_table,
    param_space,
    run_sweep,
)
from cardlab.cluster.sweep_file import load_sweep
from cardlab.evaluation.stats import wilson_interval
from cardlab.training.harness.config import load_config

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"
TINY = {  # the quick config shrunk to a few seconds per trial
    "total_timesteps": 1024, "checkpoint_every": 512,
    "ppo": {"n_steps": 256, "batch_size": 128, "n_epochs": 2},
    "policy": {"net_arch": [32, 32]},
    "imitation": {"hands": 40, "epochs": 1},
    "self_play": {"snapshot_every": 512},
    "eval": {"every_steps": 512, "hands": 10, "final_hands": 20, "opponents": ["random", "greedy"]},
}


def write_sweep(folder: pathlib.Path, **changes: Any) -> pathlib.Path:
    data = {"name": "tiny_sweep", "base": str(CONFIGS / "huit_quick.yaml"), "overrides": TINY,
            "search": {"ppo.learning_rate": {"grid": [3.0e-4, 1.0e-3]}}, "seeds": [1, 2],
            "opponent": "random",
            "scheduler": {"type": "asha", "grace_period": 512, "reduction_factor": 2}, **changes}
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_shipped_sweeps_load() -> None:
    quick = load_sweep(CONFIGS / "sweeps" / "huit_quick_sweep.yaml")
    assert quick.base["name"] == "huit_quick" and quick.opponent == "greedy" and quick.cpus_per_trial() == 1
    real = load_sweep(CONFIGS / "sweeps" / "huit_ppo_sweep.yaml")
    assert real.base["name"] == "huit_ppo" and real.base["self_play"]["enabled"] and real.opponent == "expert"
    population = load_sweep(CONFIGS / "sweeps" / "huit_population.yaml")
    assert population.config.population.enabled and population.config.search == {}


@pytest.mark.parametrize(("changes", "message"), [
    ({"colour": 1}, "unknown config key"),
    ({"seeds": []}, "sweep key seeds"),
    ({"opponent": "expert"}, "use one of the base config's eval.opponents: random, greedy"),
    ({"search": {"ppo.learning_rate": {"gird": [1]}}}, "give one of grid"),
    ({"search": {"ppo.learning_rate": {"grid": [-1.0]}}}, r"-1.0 makes a bad config: ppo.learning_rate"),
    ({"search": {"ppo.n_steps": {"uniform": [64, 32]}}}, "low < high"),
    ({"search": {"ppo.learning_rate": {"loguniform": [0, 1]}}}, "bounds > 0"),
    ({"search": {"ppo.colour": {"choice": [1]}}}, "unknown config key"),
    ({"search": {"seed": {"grid": [1, 2]}}}, "other than name and seed"),
    ({"overrides": {"eval": {"final_hands": 0}}}, "use eval.final_hands > 0"),
    ({"population": {"enabled": True, "store": "disk"}}, "use 'ray' or 'folder'"),
    ({"scheduler": {"type": "pbt"}}, "use 'asha' or 'fifo'"),
    ({"base": "missing.yaml"}, "does not exist"),
])
def test_bad_sweep_files_are_refused(tmp_path: pathlib.Path, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_sweep(write_sweep(tmp_path, **changes))


def test_relative_paths_of_the_base_config_are_made_absolute(tmp_path: pathlib.Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cluster.conftest import make_bot

    monkeypatch.chdir(tmp_path)  # trials run in Ray Tune's folders: relative paths would name other files
    make_bot(tmp_path, "opponent")
    opponents = ["random", "bot:opponent.json", "bot:huit-2p", "bot:huit",
                 "search:worlds=2:bot:opponent.json", "search:bot:huit"]
    overrides = {**TINY, "eval": {**TINY["eval"], "opponents": opponents}}
    sweep = load_sweep(write_sweep(tmp_path, overrides=overrides))
    shipped = ["bot:huit-2p", "bot:huit"]  # names, not paths: they stay as they are
    assert sweep.base["eval"]["opponents"] == ["random", f"bot:{tmp_path / 'opponent.json'}", *shipped,
                                               f"search:worlds=2:bot:{tmp_path / 'opponent.json'}",
                                               "search:bot:huit"]


def test_search_space_becomes_tune_domains(tmp_path: pathlib.Path) -> None:
    tune = pytest.importorskip("ray.tune")
    sweep = load_sweep(write_sweep(tmp_path, search={
        "ppo.learning_rate": {"loguniform": [1.0e-4, 1.0e-3]}, "ppo.ent_coef": {"grid": [0.0, 0.01]},
        "policy.net_arch": {"choice": [[16], [32, 32]]}, "ppo.n_epochs": {"randint": [1, 3]}}))
    space = param_space(tune, sweep)
    assert space["seed"] == {"grid_search": [1, 2]}
    assert space["point"]["ppo"]["ent_coef"] == {"grid_search": [0.0, 0.01]}
    assert type(space["point"]["ppo"]["learning_rate"]).__name__ == "Float"
    assert space["point"]["ppo"]["n_epochs"].upper == 4  # both ends included
    cfg = sweep.trial_config({"ppo": {"learning_rate": 5e-4}, "policy": {"net_arch": [16]}}, 2, "x")
    got = (cfg.ppo.learning_rate, cfg.policy.net_arch, cfg.seed, cfg.name, cfg.ppo.n_steps)
    assert got == (5e-4, [16], 2, "x", 256)


def test_table_and_best_point() -> None:
    sweep = load_sweep(CONFIGS / "sweeps" / "huit_quick_sweep.yaml")
    a = {"ppo": {"learning_rate": 3e-4}}
    b = {"ppo": {"learning_rate": 1e-3}}
    points = [PointSummary(a, [TrialOutcome("t0", a, 1, "done", 4096, 0.5, 100),
                               TrialOutcome("t2", a, 2, "done", 4096, 0.6, 100)]),
              PointSummary(b, [TrialOutcome("t1", b, 1, "done", 4096, 0.7, 100),
                               TrialOutcome("t3", b, 2, "stopped", 2048, 0.2, 40)])]
    mean, low, high = points[0].interval()
    assert mean == pytest.approx(0.55) and low == 0.0 and high == pytest.approx(1.0)  # t(1) = 12.7: clipped
    assert points[1].interval()[1:] == wilson_interval(70, 100)  # one seed: the Wilson interval of its hands
    assert best_point(points) == 1
    table = format_table(sweep, points)
    assert "4 trials (2 points x 2 seeds)" in table and "1 *  ppo.learning_rate=0.001" in table
    assert "0.500 0.600" in table and "interrupted" not in table
    unfinished = PointSummary(b, [TrialOutcome("t4", b, 1, "unfinished", 0, math.nan, 0)])
    assert "run the same command again to resume" in format_table(sweep, [*points, unfinished])


@pytest.mark.ray
def test_quick_sweep_runs_writes_its_table_and_resumes(ray_local: Any, tmp_path: pathlib.Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = write_sweep(tmp_path, population={"enabled": True, "store": "folder", "share": 0.3})
    result = run_sweep(path, sweeps_dir=tmp_path / "sweeps", progress=False)
    folder = tmp_path / "sweeps" / "tiny_sweep"
    assert result.folder == folder and len(result.points) == 2
    trials = [t for p in result.points for t in p.trials]
    assert sorted((t.point["ppo"]["learning_rate"], t.seed) for t in trials) == [
        (3e-4, 1), (3e-4, 2), (1e-3, 1), (1e-3, 2)]
    assert {t.status for t in trials} <= {"done", "stopped"} and any(t.status == "done" for t in trials)
    assert (folder / "table.txt").read_text() == result.table + "\n"
    assert "tiny_sweep: 4 trials (2 points x 2 seeds), final win rate against random" in result.table
    with (folder / "results.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4
    best = load_config(result.best_config)  # a valid training config: the base with the best point
    assert best.seed == 1 and best.total_timesteps == 1024
    assert best.ppo.learning_rate == result.points[best_point(result.points)].point["ppo"]["learning_rate"]
    for t in trials:  # every trial is a normal run folder
        (run,) = (folder / "runs" / t.trial).glob("huit_quick-*")
        assert (run / "config.yaml").is_file() and list(run.glob("events.out.tfevents.*"))
        assert (run / "bot.json").is_file() == (t.status == "done")
    learners = {p.name.split("__")[0] for p in (folder / "pool").glob("*.json")}
    assert len(learners) == 4  # every trial published its snapshots to the population
    out = capsys.readouterr().out
    assert result.table in out and "best config:" in out

    assert main(["sweep", str(path), "--sweeps-dir", str(tmp_path / "sweeps")]) == 0  # again: restored
    assert result.table in capsys.readouterr().out
    path.write_text(path.read_text().replace("1.0e-3", "2.0e-3").replace("0.001", "0.002"))
    assert main(["sweep", str(path), "--sweeps-dir", str(tmp_path / "sweeps")]) == 2
    assert "holds a sweep started from another version" in capsys.readouterr().err
