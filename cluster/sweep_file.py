"""The sweep file of `cardlab sweep`: a base training config, what to vary, and the seeds.

Read and checked here, before Ray starts, so that a wrong key or value is
refused with a message that names it (the format: `cardlab.cluster.sweep`).
"""

from __future__ import annotations

import copy
import dataclasses
import pathlib
import re
from typing import Any

from cardlab.agents.agent_spec import is_shipped_name
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import CHOICE, check_that, quoted
from cardlab.training.harness.config import (
    TrainConfig,
    config_from_dict,
    config_to_dict,
    load_config,
    parse_dataclass,
)
from cardlab.training.harness.config_bounds import (
    SEED_HIGH,
    STEPS,
    bounded,
    check_declared,
    probability,
    word,
)
from cardlab.training.harness.yaml_files import read_yaml

KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
FIXED_KEYS = ("name", "seed")
SCHEDULERS = ("asha", "fifo")
STORES = ("ray", "folder")
MOST_TRIALS = 100_000
"""the most draws of the random keys, and of trials run at once"""
MOST_CPUS = 1024
"""the most CPUs a trial may reserve"""
MOST_FAILURES = 1000
"""the most restarts of a failed trial"""
MOST_REDUCTION = 1000
"""the largest ASHA reduction factor"""
MOST_POOL = 1000
"""the most snapshots of the other trials in play (a training config's population.pool_size bound)"""


# ---------------------------------------------------------------- the sweep file
@dataclasses.dataclass
class SchedulerConfig:
    """How trials are stopped early."""

    type: str = word("asha", SCHEDULERS)
    """'asha' (stop trials that trail at ASHA's rungs) or 'fifo' (run every trial to the end)"""
    grace_period: int = bounded(0, 0, STEPS)
    """env steps every trial runs before it may be stopped (0: the base config's eval.every_steps)"""
    reduction_factor: float = bounded(2.0, 1, MOST_REDUCTION, above=True)
    """ASHA keeps the best 1/reduction_factor of the trials at each rung"""
    max_t: int = bounded(0, 0, STEPS)
    """env steps of ASHA's last rung (0: the base config's total_timesteps)"""


@dataclasses.dataclass
class PopulationSweepConfig:
    """The trials as a population: each also plays the others' self-play snapshots."""

    enabled: bool = False
    """draw opponents from the other trials' snapshots (needs self_play.enabled in the base config)"""
    store: str = word("ray", STORES)
    """'ray': the snapshots travel through Ray's object store (no shared file system needed);
    'folder': one folder in the sweep's folder (on a shared file system across machines)"""
    share: float = probability(0.2)
    """probability that an opponent seat not taken by an own snapshot gets another trial's snapshot"""
    pool_size: int = bounded(10, 1, MOST_POOL)
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
    num_samples: int = bounded(1, 1, MOST_TRIALS)
    """draws of the random keys (uniform, loguniform, choice, randint), each crossed with the grid"""
    seeds: list[int] = bounded([1, 2], 0, SEED_HIGH)
    """training seeds: every point is trained once per seed"""
    opponent: str = ""
    """the eval opponent whose win rate is the metric ('' : the first of the base config's eval.opponents)"""
    scheduler: SchedulerConfig = dataclasses.field(default_factory=SchedulerConfig)
    """early stopping"""
    cpus_per_trial: float = bounded(0.0, 0, MOST_CPUS)
    """CPUs Ray reserves for each trial (0: num_envs with vec_env 'subproc', else 1)"""
    max_concurrent_trials: int = bounded(0, 0, MOST_TRIALS)
    """trials run at once at most (0: as many as the CPUs allow)"""
    max_failures: int = bounded(1, 0, MOST_FAILURES)
    """times a failed trial is started again (it continues from its run folder's last checkpoint)"""
    search_seed: int = bounded(0, 0, SEED_HIGH)
    """seed of the random draws of the search space"""
    population: PopulationSweepConfig = dataclasses.field(default_factory=PopulationSweepConfig)
    """the trials as a population training against each other"""


def nested(key: str, value: Any) -> dict[str, Any]:
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
        head, sep, path = text.strip().partition("bot:")  # a bot, or a search over one (search:...:bot:PATH)
        if not sep or (head and not head.startswith("search:")) or is_shipped_name(f"bot:{path}"):
            return text
        return f"{head}bot:{pathlib.Path(path.strip()).expanduser().resolve()}"

    out = copy.deepcopy(base)
    for opponent in out["opponents"]:
        opponent["spec"] = spec(opponent["spec"])
    out["eval"]["opponents"] = [spec(s) for s in out["eval"]["opponents"]]
    out["imitation"]["teacher"] = spec(out["imitation"]["teacher"])
    if out["population"]["dir"]:
        out["population"]["dir"] = str(pathlib.Path(out["population"]["dir"]).resolve())
    return out


def load_sweep(path: str | pathlib.Path) -> Sweep:
    """Read and check a sweep file; every searched value is checked by building its config. A refusal names
    the file, then the key (`refusal`): each number and word as its field declares it, the rest here."""
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    data = read_yaml(path, "sweep file") or {}
    try:
        sweep = parse_dataclass(SweepConfig, data)
        check_declared(sweep)
        check_that(bool(re.fullmatch(r"[A-Za-z0-9_.-]+", sweep.name)), "name", sweep.name,
                   "not a folder name", "letters, digits, '-', '_' and '.' (it names the sweep's folder)")
        check_that(bool(sweep.base), "base", sweep.base, "missing",
                   "the training config to sweep over, relative to the sweep file, e.g. ../huit_ppo.yaml")
        check_that(len(sweep.seeds) > 0 and len(set(sweep.seeds)) == len(sweep.seeds), "seeds", sweep.seeds,
                   "not a list of distinct seeds", "one or more distinct whole numbers >= 0")
        base_path = (path.parent / sweep.base).resolve()
        try:
            base = config_to_dict(load_config(base_path))
            base = _absolute_paths(config_to_dict(config_from_dict(merge(base, sweep.overrides))))
        except ValueError as err:
            raise ValueError(f"base config {base_path} with the sweep's overrides: {err}") from None
        opponents = base["eval"]["opponents"]
        check_that(not sweep.opponent or sweep.opponent in opponents, "opponent", sweep.opponent, CHOICE,
                   f"'' (the first) or one of the base config's eval.opponents: {quoted(opponents)}")
        final = base["eval"]["final_hands"]
        check_that(final > 0, "base eval.final_hands", final, "not accepted in a sweep",
                   "a value > 0 (the sweep ranks points by the final evaluation)")
        check_that(not sweep.population.enabled or base["self_play"]["enabled"], "population.enabled",
                   sweep.population.enabled, "not accepted without self-play",
                   "true only with self_play.enabled: true in the base config (a population shares self-play "
                   "snapshots)")
        checked = Sweep(sweep, base, path, text)
        for key, spec in sweep.search.items():
            _check_search(checked, key, spec)
    except ValueError as err:
        raise ValueError(f"sweep file {path}: {err}") from None
    return checked


def _check_search(sweep: Sweep, key: str, spec: Any) -> None:
    """One search entry: a known kind with sound values, each of which makes a valid config."""
    where = f"search.{key}"
    check_that(isinstance(key, str) and key.split(".")[0] not in FIXED_KEYS, where, spec,
               "not a key a sweep varies",
               "config keys other than name and seed (the seeds are the sweep's seeds)")
    check_that(isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in KINDS, where, spec,
               "not one kind of values", f"one of {', '.join('{' + k + ': [...]}' for k in KINDS)}")
    ((kind, values),) = spec.items()
    check_that(isinstance(values, list) and len(values) > 0, where, spec, "not a list of values",
               f"{{{kind}: [...]}} with one value or more")
    if kind in ("uniform", "loguniform", "randint"):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        check_that(len(values) == 2 and numbers and values[0] < values[1], where, spec, "not a range",
                   f"{{{kind}: [low, high]}}, two numbers with low < high")
        check_that(kind != "loguniform" or values[0] > 0, where, spec, "not a range",
                   "{loguniform: [low, high]} with 0 < low < high")
        check_that(kind != "randint" or all(isinstance(v, int) for v in values), where, spec, "not a range",
                   "{randint: [low, high]}, two whole numbers with low < high")
    for value in values:
        try:
            sweep.trial_config(nested(key, value), sweep.config.seeds[0])
        except ValueError as err:
            raise ValueError(f"{where}: the value {excerpt(value)} makes a bad config: {err}") from None
