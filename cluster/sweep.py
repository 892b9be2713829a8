"""`cardlab sweep`: a Ray Tune experiment over a training config, several seeds per point.

A sweep file names a base training config and what to vary (see
`configs/sweeps/`):

```yaml
name: huit_quick_sweep
base: ../huit_quick.yaml              # the training config, relative to this file
overrides: {total_timesteps: 4096}    # fixed changes to it (nested like the config)
search:                               # config keys, dotted: one kind of values each
  ppo.learning_rate: {grid: [1.0e-4, 3.0e-4]}
  ppo.ent_coef: {uniform: [0.0, 0.02]}          # also loguniform: [lo, hi], randint: [lo, hi]
  policy.net_arch: {choice: [[64, 64], [128, 128]]}
num_samples: 1                        # draws of the random keys, each crossed with the grid
seeds: [1, 2]                         # every point is trained once per seed
opponent: greedy                      # the metric: final win rate against this eval opponent
scheduler: {type: asha, grace_period: 2048, reduction_factor: 2}
```

A point is one value of every searched key: a grid combination with one
draw of the random keys (the draw is shared by the point's seeds). Each trial
(a point and a seed) is an ordinary training run (`cardlab.training.train`)
whose run folder, with its TensorBoard scalars, checkpoints and bot file, is
``<sweeps-dir>/<name>/runs/<trial id>/<run>/``. Every evaluation is reported
to Tune as ``eval/win_rate`` (against `opponent`) at ``steps``, so ASHA can
stop the trials that trail at its rungs. At the end the sweep prints a table
(point, seeds, mean final win rate and its 95% interval over the seeds),
writes it to ``table.txt``, every trial to ``results.csv``, and the best
point's config to ``best_config.yaml``.

Running the same command again resumes an interrupted sweep (`Tuner.restore`):
finished trials are kept, unfinished ones continue from their run folder's
last checkpoint. With ``population: {enabled: true}`` the trials train
against each other too (`cardlab.cluster.pool`).
"""

from __future__ import annotations

import copy
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
from cardlab.evaluation.results import text_table
from cardlab.evaluation.stats import mean_interval, wilson_interval
from cardlab.training.config import (
    TrainConfig,
    config_from_dict,
    config_to_dict,
    load_config,
    parse_dataclass,
    read_yaml,
)

METRIC = "eval/win_rate"
TIME = "steps"
KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
FIXED_KEYS = ("name", "seed")


# ---------------------------------------------------------------- the sweep file
@dataclasses.dataclass
class SchedulerConfig:
    """How trials are stopped early."""

    type: str = "asha"
    """'asha' (stop trials that trail at ASHA's rungs) or 'fifo' (run every trial to the end)"""
    grace_period: int = 0
    """env steps every trial runs before it may be stopped (0: the base config's eval.every_steps)"""
    reduction_factor: float = 2.0
    """ASHA keeps the best 1/reduction_factor of the trials at each rung"""
    max_t: int = 0
    """env steps of ASHA's last rung (0: the base config's total_timesteps)"""


@dataclasses.dataclass
class PopulationSweepConfig:
    """The trials as a population: each also plays the others' self-play snapshots."""

    enabled: bool = False
    """draw opponents from the other trials' snapshots (needs self_play.enabled in the base config)"""
    store: str = "ray"
    """'ray': the snapshots travel through Ray's object store (no shared file system needed);
    'folder': one folder in the sweep's folder (on a shared file system across machines)"""
    share: float = 0.2
    """probability that an opponent seat not taken by an own snapshot gets another trial's snapshot"""
    pool_size: int = 10
    """how many of the other trials' newest snapshots are in play"""


@dataclasses.dataclass
class SweepConfig:
    """One sweep: a base training config, a search space, seeds, a metric and a scheduler."""

    name: str = "sweep"
    """the sweep's name: its folder under --sweeps-dir (letters, digits, '-', '_', '.')"""
    base: str = ""
    """the training config swept over, relative to the sweep file"""
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict)
    """fixed changes to the base config, nested like it (e.g. {total_timesteps: 4096})"""
    search: dict[str, Any] = dataclasses.field(default_factory=dict)
    """dotted config key -> {grid: [...]}, {choice: [...]}, {uniform: [lo, hi]}, {loguniform: [lo, hi]}
    or {randint: [lo, hi]} (both ends included)"""
    num_samples: int = 1
    """draws of the random keys (uniform, loguniform, choice, randint), each crossed with the grid"""
    seeds: list[int] = dataclasses.field(default_factory=lambda: [1, 2])
    """training seeds: every point is trained once per seed"""
    opponent: str = ""
    """the eval opponent whose win rate is the metric ('' : the first of the base config's eval.opponents)"""
    scheduler: SchedulerConfig = dataclasses.field(default_factory=SchedulerConfig)
    """early stopping"""
    cpus_per_trial: float = 0.0
    """CPUs Ray reserves for each trial (0: num_envs with vec_env 'subproc', else 1)"""
    max_concurrent_trials: int = 0
    """trials run at once at most (0: as many as the CPUs allow)"""
    max_failures: int = 1
    """times a failed trial is started again (it continues from its run folder's last checkpoint)"""
    search_seed: int = 0
    """seed of the random draws of the search space"""
    population: PopulationSweepConfig = dataclasses.field(default_factory=PopulationSweepConfig)
    """the trials as a population training against each other"""


def _nested(key: str, value: Any) -> dict[str, Any]:
    """``a.b.c`` -> {a: {b: {c: value}}}."""
    out: Any = value
    for part in reversed(key.split(".")):
        out = {part: out}
    return out


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`base` with `changes` laid over it: mappings merge key by key, anything else is replaced."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{a: {b: 1}} -> {'a.b': 1}: a point as the dotted keys the sweep file gives."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A checked sweep file with its base config (as plain data, overrides applied)."""

    config: SweepConfig
    base: dict[str, Any]
    path: pathlib.Path
    text: str

    @property
    def opponent(self) -> str:
        return self.config.opponent or self.base["eval"]["opponents"][0]

    def cpus_per_trial(self) -> float:
        if self.config.cpus_per_trial:
            return self.config.cpus_per_trial
        return float(self.base["num_envs"]) if self.base["vec_env"] == "subproc" else 1.0

    def trial_config(self, point: dict[str, Any], seed: int, name: str | None = None) -> TrainConfig:
        data = merge(self.base, point)
        data["seed"] = seed
        if name is not None:
            data["name"] = name
        return config_from_dict(data)


def _absolute_paths(base: dict[str, Any]) -> dict[str, Any]:
    """The base config with its bot paths and population folder made absolute.

    Trials run in Ray Tune's own folders: a path the config gives relative to
    where `cardlab sweep` was started must still name the same file there.
    """
    def spec(text: str) -> str:
        if not text.strip().startswith("bot:"):
            return text
        return f"bot:{pathlib.Path(text.strip()[4:].strip()).expanduser().resolve()}"

    out = copy.deepcopy(base)
    for opponent in out["opponents"]:
        opponent["spec"] = spec(opponent["spec"])
    out["eval"]["opponents"] = [spec(s) for s in out["eval"]["opponents"]]
    out["imitation"]["teacher"] = spec(out["imitation"]["teacher"])
    if out["population"]["dir"]:
        out["population"]["dir"] = str(pathlib.Path(out["population"]["dir"]).resolve())
    return out


def _check(ok: bool, key: str, value: Any, accepted: str) -> None:
    if not ok:
        raise ValueError(f"sweep key {key}={value!r} is not accepted: {accepted}")


def load_sweep(path: str | pathlib.Path) -> Sweep:
    """Read and check a sweep file; every searched value is checked by building its config."""
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    sweep = parse_dataclass(SweepConfig, read_yaml(path, "sweep file") or {})
    _check(bool(re.fullmatch(r"[A-Za-z0-9_.-]+", sweep.name)), "name", sweep.name,
           "use letters, digits, '-', '_' and '.' (it names the sweep's folder)")
    _check(bool(sweep.base), "base", sweep.base,
           "name the training config to sweep over, e.g. ../huit_ppo.yaml")
    base_path = (path.parent / sweep.base).resolve()
    try:
        base = config_to_dict(load_config(base_path))
        base = _absolute_paths(config_to_dict(config_from_dict(merge(base, sweep.overrides))))
    except ValueError as err:
        raise ValueError(f"base config {base_path} with the sweep's overrides: {err}") from None
    seeds = sweep.seeds
    _check(len(seeds) > 0 and all(s >= 0 for s in seeds) and len(set(seeds)) == len(seeds), "seeds", seeds,
           "list distinct whole numbers >= 0")
    _check(sweep.num_samples >= 1, "num_samples", sweep.num_samples, "use 1 or more")
    opponents = base["eval"]["opponents"]
    _check(not sweep.opponent or sweep.opponent in opponents, "opponent", sweep.opponent,
           f"use one of the base config's eval.opponents: {', '.join(opponents)}")
    _check(base["eval"]["final_hands"] > 0, "base eval.final_hands", base["eval"]["final_hands"],
           "the sweep ranks points by the final evaluation: use eval.final_hands > 0")
    sch = sweep.scheduler
    _check(sch.type in ("asha", "fifo"), "scheduler.type", sch.type, "use 'asha' or 'fifo'")
    _check(sch.reduction_factor > 1, "scheduler.reduction_factor", sch.reduction_factor, "use a value > 1")
    for key in ("grace_period", "max_t"):
        _check(getattr(sch, key) >= 0, f"scheduler.{key}", getattr(sch, key),
               "use env steps >= 0 (0: the default)")
    _check(sweep.cpus_per_trial >= 0, "cpus_per_trial", sweep.cpus_per_trial, "use a number > 0 (0: default)")
    for key in ("max_concurrent_trials", "search_seed"):
        _check(getattr(sweep, key) >= 0, key, getattr(sweep, key), "use a whole number >= 0")
    _check(sweep.max_failures >= 0, "max_failures", sweep.max_failures, "use a whole number >= 0")
    pop = sweep.population
    _check(pop.store in ("ray", "folder"), "population.store", pop.store, "use 'ray' or 'folder'")
    _check(0 <= pop.share <= 1, "population.share", pop.share, "use a probability between 0 and 1")
    _check(pop.pool_size >= 1, "population.pool_size", pop.pool_size, "use 1 or more")
    _check(not pop.enabled or base["self_play"]["enabled"], "population.enabled", pop.enabled,
           "a population shares self-play snapshots: set self_play.enabled: true in the base config")
    checked = Sweep(sweep, base, path, text)
    for key, spec in sweep.search.items():
        _check_search(checked, key, spec)
    return checked


def _check_search(sweep: Sweep, key: str, spec: Any) -> None:
    """One search entry: a known kind with sound values, each of which makes a valid config."""
    where = f"search.{key}"
    _check(isinstance(key, str) and key.split(".")[0] not in FIXED_KEYS, where, spec,
           "search config keys other than name and seed (the seeds are the sweep's seeds list)")
    _check(isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in KINDS, where, spec,
           f"give one of {', '.join(k + ': [...]' for k in KINDS)}")
    ((kind, values),) = spec.items()
    _check(isinstance(values, list) and len(values) > 0, where, spec, f"{kind} takes a non-empty list")
    if kind in ("uniform", "loguniform", "randint"):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        _check(len(values) == 2 and numbers and values[0] < values[1], where, spec,
               f"{kind} takes [low, high] with low < high")
        _check(kind != "loguniform" or values[0] > 0, where, spec, "loguniform takes bounds > 0")
        _check(kind != "randint" or all(isinstance(v, int) for v in values), where, spec,
               "randint takes whole-number bounds")
    for value in values:
        try:
            sweep.trial_config(_nested(key, value), sweep.config.seeds[0])
        except ValueError as err:
            raise ValueError(f"sweep key {where}: the value {value!r} makes a bad config: {err}") from None


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
        point = merge(point, _nested(key, None))
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
    from cardlab.training.checkpoints import list_checkpoints

    runs = sorted(p for p in runs_dir.glob("*__*") if (p / "config.yaml").is_file())
    kept = [p for p in runs if list_checkpoints(p)]
    for stale in set(runs) - set(kept):
        shutil.rmtree(stale)
    return kept[-1] if kept else None


def run_trial(config: dict[str, Any], *, sweep: Sweep, sweep_dir: str, pool: Any = None) -> None:
    """One trial (a Ray Tune function trainable): a normal training run in the sweep's folder."""
    from ray import tune

    from cardlab.cluster.pool import PoolMirror
    from cardlab.training.train import train

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
