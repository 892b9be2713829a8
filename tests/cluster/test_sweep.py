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
TINY: dict[str, Any] = {  # the quick config shrunk to a few seconds per trial
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
    ({"search": {"ppo.learning_rate": {"grid": [-1.0]}}}, r"-1.0 makes a bad config: ppo.learning_rate"),
    ({"search": {"ppo.colour": {"choice": [1]}}}, "unknown config key"),
    ({"base": "missing.yaml"}, r"missing\.yaml: file not found \(a config is a YAML file\)"),
])
def test_bad_sweep_files_are_refused(tmp_path: pathlib.Path, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_sweep(write_sweep(tmp_path, **changes))


@pytest.mark.parametrize(("changes", "refused"), [
    ({"name": "a/b"}, "name='a/b' is not a folder name; accepted: letters, digits, '-', '_' and '.' (it "
                      "names the sweep's folder)"),
    ({"base": ""}, "base='' is missing; accepted: the training config to sweep over, relative to the sweep "
                   "file, e.g. ../huit_ppo.yaml"),
    ({"seeds": []}, "seeds=[] is not a list of distinct seeds; accepted: one or more distinct whole numbers "
                    ">= 0"),
    ({"seeds": [1, 1]}, "seeds=[1, 1] is not a list of distinct seeds; accepted: one or more distinct whole "
                        "numbers >= 0"),
    ({"seeds": [1, -2]}, "seeds[1]=-2 is out of range; accepted: a value >= 0 and <= 2,147,483,647"),
    ({"num_samples": 0}, "num_samples=0 is out of range; accepted: a value >= 1 and <= 100,000"),
    ({"opponent": "expert"}, "opponent='expert' is not one of the choices; accepted: '' (the first) or one "
                             "of the base config's eval.opponents: 'random', 'greedy'"),
    ({"overrides": {**TINY, "eval": {**TINY["eval"], "final_hands": 0}}},
     "base eval.final_hands=0 is not accepted in a sweep; accepted: a value > 0 (the sweep ranks points by "
     "the final evaluation)"),
    ({"scheduler": {"type": "pbt"}},
     "scheduler.type='pbt' is not one of the choices; accepted: 'asha', 'fifo'"),
    ({"scheduler": {"reduction_factor": 1}},
     "scheduler.reduction_factor=1.0 is out of range; accepted: a value > 1 and <= 1,000"),
    ({"scheduler": {"grace_period": -1}},
     "scheduler.grace_period=-1 is out of range; accepted: a value >= 0 and <= 2,000,000,000"),
    ({"cpus_per_trial": -0.5}, "cpus_per_trial=-0.5 is out of range; accepted: a value >= 0 and <= 1,024"),
    ({"max_failures": 10**6}, "max_failures=1000000 is out of range; accepted: a value >= 0 and <= 1,000"),
    ({"population": {"enabled": True, "store": "disk"}},
     "population.store='disk' is not one of the choices; accepted: 'ray', 'folder'"),
    ({"population": {"share": 2.0}},
     "population.share=2.0 is out of range; accepted: a probability between 0 and 1"),
    ({"population": {"pool_size": 0}},
     "population.pool_size=0 is out of range; accepted: a value >= 1 and <= 1,000"),
    ({"population": {"enabled": True}, "overrides": {**TINY, "self_play": {"enabled": False}}},
     "population.enabled=True is not accepted without self-play; accepted: true only with self_play.enabled: "
     "true in the base config (a population shares self-play snapshots)"),
    ({"search": {"seed": {"grid": [1, 2]}}},
     "search.seed={'grid': [1, 2]} is not a key a sweep varies; accepted: config keys other than name and "
     "seed (the seeds are the sweep's seeds)"),
    ({"search": {"ppo.learning_rate": {"gird": [1]}}},
     "search.ppo.learning_rate={'gird': [1]} is not one kind of values; accepted: one of {grid: [...]}, "
     "{choice: [...]}, {uniform: [...]}, {loguniform: [...]}, {randint: [...]}"),
    ({"search": {"ppo.learning_rate": {"grid": []}}},
     "search.ppo.learning_rate={'grid': []} is not a list of values; accepted: {grid: [...]} with one value "
     "or more"),
    ({"search": {"ppo.n_steps": {"uniform": [64, 32]}}},
     "search.ppo.n_steps={'uniform': [64, 32]} is not a range; accepted: {uniform: [low, high]}, two numbers "
     "with low < high"),
    ({"search": {"ppo.learning_rate": {"loguniform": [0, 1]}}},
     "search.ppo.learning_rate={'loguniform': [0, 1]} is not a range; accepted: {loguniform: [low, high]} "
     "with 0 < low < high"),
    ({"search": {"ppo.n_epochs": {"randint": [1, 2.5]}}},
     "search.ppo.n_epochs={'randint': [1, 2.5]} is not a range; accepted: {randint: [low, high]}, two whole "
     "numbers with low < high"),
])
def test_a_sweep_files_values_are_refused_in_one_line_that_says_what_is_accepted(
        tmp_path: pathlib.Path, changes: dict[str, Any], refused: str) -> None:
    path = write_sweep(tmp_path, **changes)
    with pytest.raises(ValueError) as err:
        load_sweep(path)
    assert str(err.value) == f"sweep file {path}: {refused}"


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
    index = best_point(result.points)
    assert result.best_config is not None and index is not None
    best = load_config(result.best_config)  # a valid training config: the base with the best point
    assert best.seed == 1 and best.total_timesteps == 1024
    assert best.ppo.learning_rate == result.points[index].point["ppo"]["learning_rate"]
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
