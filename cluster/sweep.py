"""`cardlab sweep`: a Ray Tune experiment over a training config, several seeds per point.

A sweep file (`configs/sweeps/`; its keys in docs/cluster.md) names a base
training config, fixed overrides, and what to vary: config keys, dotted, with
one kind of values each (grid, choice, uniform, loguniform, randint). A point
is one value of every searched key: a grid combination with one draw of the
random keys (the draw is shared by the point's seeds). Each trial (a point and
a seed) is an ordinary training run (`cardlab.training.trainers.train`) whose run
folder is ``<sweeps-dir>/<name>/runs/<trial id>/<run>/``. Every evaluation is
reported to Tune as ``eval/win_rate`` (against `opponent`) at ``steps``, so
ASHA can stop the trials that trail at its rungs. At the end the sweep prints
a table (point, seeds, mean final win rate and its 95% interval over the
seeds), writes it to ``table.txt``, every trial to ``results.csv``, and the
best point's config to ``best_config.yaml``. Running the same command again
resumes an interrupted sweep (`Tuner.restore`); with ``population: {enabled:
true}`` the trials train against each other too (`cardlab.cluster.pool`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import pathlib
import re
import shutil
from collections.abc import Sequence
from typing import Any

import yaml

from cardlab.cluster.runtime import import_ray, ray_session
from cardlab.cluster.sweep_file import (
    Sweep,
    flatten,
    load_sweep,
    merge,
    nested,
)
from cardlab.evaluation.results import text_table
from cardlab.evaluation.stats import mean_interval, wilson_interval
from cardlab.training.harness.config import (
    config_to_dict,
)

METRIC = "eval/win_rate"
TIME = "steps"

# ---------------------------------------------------------------- Tune
def _domain(tune: Any, kind: str, values: list[Any]) -> Any:
    if kind == "grid":
        return tune.grid_search(values)
    if kind == "choice":
        return tune.choice(values)
    if kind == "uniform":
        return tune.uniform(*values)
    if kind == "loguniform":
        return tune.loguniform(*values)
    return tune.randint(values[0], values[1] + 1)


def param_space(tune: Any, sweep: Sweep) -> dict[str, Any]:
    """{'point': nested config changes, as Tune domains; 'seed': a grid over the seeds}."""
    point: dict[str, Any] = {}
    for key, spec in sweep.config.search.items():
        ((kind, values),) = spec.items()
        point = merge(point, nested(key, None))
        holder = point
        *parents, last = key.split(".")
        for part in parents:
            holder = holder[part]
        holder[last] = _domain(tune, kind, values)
    return {"point": point, "seed": tune.grid_search(list(sweep.config.seeds))}


class _TuneReport:
    """Passes a run's evaluations to Tune (train's `reporter`)."""

    def __init__(self, opponent: str) -> None:
        self.opponent = opponent

    def __call__(self, steps: int, results: Sequence[Any], final: bool) -> None:
        from ray import tune

        mine = next(r for r in results if r.opponent == self.opponent)
        metrics = {TIME: steps, "final": final, METRIC: mine.win_rate, "eval/ci_low": mine.ci_low,
                   "eval/ci_high": mine.ci_high, "eval/hands": mine.hands}
        metrics.update({f"eval/win_rate_{re.sub(r'[^A-Za-z0-9_.-]+', '_', r.opponent)}": r.win_rate
                        for r in results})
        tune.report(metrics)


def _earlier_run(runs_dir: pathlib.Path) -> pathlib.Path | None:
    """The run folder an earlier attempt of this trial left with a checkpoint, to continue it.

    Folders that attempts left without a checkpoint hold nothing to continue from and are removed.
    """
    from cardlab.training.harness.checkpoints import list_checkpoints

    runs = sorted(p for p in runs_dir.glob("*__*") if (p / "config.yaml").is_file())
    kept = [p for p in runs if list_checkpoints(p)]
    for stale in set(runs) - set(kept):
        shutil.rmtree(stale)
    return kept[-1] if kept else None


def run_trial(config: dict[str, Any], *, sweep: Sweep, sweep_dir: str, pool: Any = None) -> None:
    """One trial (a Ray Tune function trainable): a normal training run in the sweep's folder."""
    from ray import tune

    from cardlab.cluster.pool import PoolMirror
    from cardlab.training.trainers.train import train

    trial = tune.get_context().get_trial_id()
    runs_dir = pathlib.Path(sweep_dir) / "runs" / trial
    name = f"{sweep.base['name']}-{trial}"
    point = config["point"]
    pop = sweep.config.population
    if pop.enabled:
        folder = runs_dir / "population" if pop.store == "ray" else pathlib.Path(sweep_dir) / "pool"
        population = {"dir": str(folder), "share": pop.share, "pool_size": pop.pool_size}
        point = merge(point, {"population": population})
    cfg = sweep.trial_config(point, config["seed"], name)
    report = _TuneReport(sweep.opponent)
    resume = _earlier_run(runs_dir)
    if pool is None:
        train(cfg, runs_dir=runs_dir, resume=resume, progress=False, reporter=report)
        return
    with PoolMirror(pool, cfg.population.dir, name):
        train(cfg, runs_dir=runs_dir, resume=resume, progress=False, reporter=report)


def _trial_dirname(trial: Any) -> str:
    return str(trial.trial_id)


def _tuner(tune: Any, sweep: Sweep, sweep_dir: pathlib.Path, pool: Any, progress: bool) -> Any:
    """A new Tuner, or the interrupted one restored (refused if the sweep file changed since)."""
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler
    from ray.tune.search.basic_variant import BasicVariantGenerator

    trainable = tune.with_resources(
        tune.with_parameters(run_trial, sweep=sweep, sweep_dir=str(sweep_dir), pool=pool),
        {"cpu": sweep.cpus_per_trial()},
    )
    saved = sweep_dir / "sweep.yaml"
    if saved.is_file() and saved.read_text(encoding="utf-8") != sweep.text:
        raise ValueError(f"{sweep_dir} holds a sweep started from another version of {sweep.path.name}: "
                         "give the sweep another name, or another --sweeps-dir, or delete that folder")
    if tune.Tuner.can_restore(str(sweep_dir)):
        return tune.Tuner.restore(str(sweep_dir), trainable=trainable, resume_unfinished=True,
                                  resume_errored=True)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    saved.write_text(sweep.text, encoding="utf-8")
    (sweep_dir / "base_config.yaml").write_text(yaml.safe_dump(sweep.base, sort_keys=False), encoding="utf-8")
    sch = sweep.config.scheduler
    if sch.type == "asha":
        max_t = sch.max_t or sweep.base["total_timesteps"]
        grace = min(sch.grace_period or sweep.base["eval"]["every_steps"], max_t)
        scheduler: Any = ASHAScheduler(time_attr=TIME, max_t=max_t, grace_period=grace,
                                       reduction_factor=sch.reduction_factor)
    else:
        scheduler = FIFOScheduler()
    return tune.Tuner(
        trainable,
        param_space=param_space(tune, sweep),
        tune_config=tune.TuneConfig(
            metric=METRIC, mode="max", scheduler=scheduler, num_samples=sweep.config.num_samples,
            # constant_grid_search: one draw of the random keys serves every seed (and grid value) of a sample
            search_alg=BasicVariantGenerator(constant_grid_search=True,
                                             random_state=sweep.config.search_seed),
            max_concurrent_trials=sweep.config.max_concurrent_trials or None,
            trial_dirname_creator=_trial_dirname,
        ),
        run_config=tune.RunConfig(
            name=sweep_dir.name, storage_path=str(sweep_dir.parent),
            failure_config=tune.FailureConfig(max_failures=sweep.config.max_failures),
            verbose=1 if progress else 0,
        ),
    )


# ---------------------------------------------------------------- results
@dataclasses.dataclass(frozen=True)
class TrialOutcome:
    """One trial's end: its point and seed, and its last reported evaluation."""

    trial: str
    point: dict[str, Any]
    seed: int
    status: str
    """'done' (final evaluation reported), 'stopped' (by the scheduler), 'error' or 'unfinished'"""
    steps: int
    win_rate: float
    hands: int


@dataclasses.dataclass(frozen=True)
class PointSummary:
    """A point's trials: the final win rates of those that finished, their mean and 95% interval."""

    point: dict[str, Any]
    trials: list[TrialOutcome]

    @property
    def finished(self) -> list[TrialOutcome]:
        return [t for t in self.trials if t.status == "done"]

    def interval(self) -> tuple[float, float, float]:
        """Mean over the seeds, t interval over them (Wilson interval of the hands with one seed)."""
        rates = [t.win_rate for t in self.finished]
        if not rates:
            return math.nan, math.nan, math.nan
        if len(rates) == 1:
            t = self.finished[0]
            low, high = wilson_interval(round(t.win_rate * t.hands), t.hands)
            return t.win_rate, low, high
        mean, low, high = mean_interval(rates)
        return mean, max(0.0, low), min(1.0, high)

    def label(self) -> str:
        return " ".join(f"{k}={_show(v)}" for k, v in flatten(self.point).items()) or "(base config)"


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value) if isinstance(value, list) else str(value)


def outcomes(tune: Any, sweep_dir: pathlib.Path) -> list[TrialOutcome]:
    """Every trial of the sweep's Tune experiment, as its saved state says."""
    out = []
    for trial in tune.ExperimentAnalysis(str(sweep_dir)).trials:
        metrics = trial.last_result or {}
        status = {"ERROR": "error", "TERMINATED": "done" if metrics.get("final") else "stopped"}
        out.append(TrialOutcome(str(trial.trial_id), trial.config["point"], int(trial.config["seed"]),
                                status.get(trial.status, "unfinished"), int(metrics.get(TIME) or 0),
                                float(metrics.get(METRIC, math.nan)), int(metrics.get("eval/hands") or 0)))
    return sorted(out, key=lambda t: t.trial)


def summarize(trials: Sequence[TrialOutcome]) -> list[PointSummary]:
    """Trials grouped by point, in the order points first appear."""
    groups: dict[str, list[TrialOutcome]] = {}
    for t in trials:
        groups.setdefault(json.dumps(t.point, sort_keys=True), []).append(t)
    return [PointSummary(ts[0].point, sorted(ts, key=lambda t: t.seed)) for ts in groups.values()]


def best_point(points: Sequence[PointSummary]) -> int | None:
    """Index of the point with the best mean final win rate (more finished seeds break ties)."""
    ranked = [(p.interval()[0], len(p.finished), -i) for i, p in enumerate(points) if p.finished]
    return -max(ranked)[2] if ranked else None


def format_table(sweep: Sweep, points: Sequence[PointSummary]) -> str:
    seeds = len(sweep.config.seeds)
    trials = sum(len(p.trials) for p in points)
    head = (f"sweep {sweep.config.name}: {trials} trials ({len(points)} points x {seeds} seeds), final win "
            f"rate against {sweep.opponent} ({sweep.base['eval']['final_hands']} hands per trial)\n"
            "95% CI: Student t over the seeds (Wilson over the hands with one seed); "
            "stopped: by the scheduler")
    rows = []
    best = best_point(points)
    for i, p in enumerate(points):
        mean, low, high = p.interval()
        stopped, failed = (sum(t.status == s for t in p.trials) for s in ("stopped", "error"))
        rows.append([f"{i}{' *' if i == best else ''}", p.label(), f"{len(p.finished)}/{len(p.trials)}",
                     stopped, failed, "-" if math.isnan(mean) else f"{mean:.3f}",
                     "-" if math.isnan(low) else f"[{low:.3f}, {high:.3f}]",
                     " ".join(f"{t.win_rate:.3f}" for t in p.finished) or "-"])
    table = text_table(["#", "point", "seeds", "stopped", "failed", "win rate", "95% CI", "per seed"], rows)
    unfinished = sum(t.status == "unfinished" for p in points for t in p.trials)
    if unfinished:
        table += (f"\ninterrupted: {unfinished} of {trials} trials unfinished; run the same command again to "
                  "resume (finished trials are kept)")
    return f"{head}\n{table}"


def _results_csv(points: Sequence[PointSummary]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["point", "trial", "seed", "status", "steps", "win_rate", "hands"])
    for i, p in enumerate(points):
        for t in p.trials:
            writer.writerow([i, t.trial, t.seed, t.status, t.steps, t.win_rate, t.hands])
    return buf.getvalue()


def write_best_config(sweep: Sweep, point: PointSummary, path: pathlib.Path) -> pathlib.Path:
    """The base config with the best point's values (the base's own seed and name), as YAML."""
    cfg = sweep.trial_config(point.point, sweep.base["seed"])
    mean, low, high = point.interval()
    note = (f"# Best point of sweep {sweep.config.name} ({sweep.path.name}): {point.label()}\n"
            f"# final win rate against {sweep.opponent}: {mean:.3f} [{low:.3f}, {high:.3f}] over "
            f"{len(point.finished)} seed(s)\n")
    path.write_text(note + yaml.safe_dump(config_to_dict(cfg), sort_keys=False), encoding="utf-8")
    return path


@dataclasses.dataclass(frozen=True)
class SweepResult:
    folder: pathlib.Path
    points: list[PointSummary]
    table: str
    best_config: pathlib.Path | None
    """None until every trial has ended (an interrupted sweep), or when none finished"""


def run_sweep(path: str | pathlib.Path, sweeps_dir: str | pathlib.Path = "sweeps", workers: int | None = None,
              address: str | None = None, progress: bool = True) -> SweepResult:
    """Run (or resume) the sweep of a sweep file; prints and writes its table and best config."""
    sweep = load_sweep(path)
    sweep_dir = pathlib.Path(sweeps_dir).resolve() / sweep.config.name
    with ray_session(workers, address):
        ray = import_ray()
        from ray import tune

        cpus = ray.cluster_resources().get("CPU", 0)
        if sweep.cpus_per_trial() > cpus:
            raise ValueError(f"each trial needs {sweep.cpus_per_trial():g} CPUs but the Ray has {cpus:g}: "
                             "lower cpus_per_trial, or give more workers")
        pop = sweep.config.population
        pool = None
        if pop.enabled and pop.store == "ray":
            from cardlab.cluster.pool import start_pool

            pool = start_pool(keep=pop.pool_size)
        _tuner(tune, sweep, sweep_dir, pool, progress).fit()
        trials = outcomes(tune, sweep_dir)
    points = summarize(trials)
    table = format_table(sweep, points)
    (sweep_dir / "table.txt").write_text(table + "\n", encoding="utf-8")
    (sweep_dir / "results.csv").write_text(_results_csv(points), encoding="utf-8")
    best = None if any(t.status == "unfinished" for t in trials) else best_point(points)
    best_path = None
    if best is not None:
        best_path = write_best_config(sweep, points[best], sweep_dir / "best_config.yaml")
    print(table)
    print(f"sweep folder: {sweep_dir}")
    runs = sweep_dir / "runs"
    print(f"runs: {runs}/<trial>/<run>/ (TensorBoard: tensorboard --logdir {runs})")
    print(f"best config: {best_path or 'none yet (no trial finished, or the sweep is unfinished)'}")
    return SweepResult(sweep_dir, points, table, best_path)
