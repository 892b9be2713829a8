"""The range of every number of a training config, and the network's size, checked at validation.

Why: a number out of all reason (``learning_rate: 1e400``, an opponent
``weight: .inf``, ``net_arch: [100000, 100000]``, a seed of 40 digits) was
accepted and failed later, minutes into a run, with a tensor dump, "Probabilities
contain NaN" or a 40 GB allocation. Each is refused with one line naming the
key and the range. The ranges are wide (far past any run of this lab) but
within what the code downstream carries: seeds plus step counts stay below
2**32 (stable-baselines3 seeds numpy's global generator, which takes no
more), and the network is one a bot file may hold (`cardlab.agents.bot`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from cardlab.agents.bot import MAX_HIDDEN_LAYERS, MAX_LAYER_UNITS, MAX_PARAMETERS, tensor_shapes
from cardlab.envs.checked_json import excerpt


@dataclasses.dataclass(frozen=True)
class Range:
    """Accepted values low..high; `above` makes low itself refused (a learning rate of 0)."""

    low: float
    high: float
    above: bool = False
    words: str = ""
    """what the range is, when plainer than the numbers ('a probability between 0 and 1')"""

    def holds(self, value: float) -> bool:
        # NaN fails every comparison, so it is refused too
        return (self.low < value if self.above else self.low <= value) and value <= self.high

    def accepted(self) -> str:
        if self.words:
            return f"use {self.words}"
        return f"use a value {'>' if self.above else '>='} {self.low:,} and <= {self.high:,}"


STEPS = 2_000_000_000
"""most env steps of a run (and of any step count): seed + steps + the eval/imitation offsets < 2**32"""
SEED_HIGH = 2**31 - 1
MINUTES = 1_000_000.0
"""about two years"""
ROLLOUT_HIGH = 1 << 21
"""most transitions of one rollout, ppo.n_steps * num_envs (each holds an observation in memory)"""
_PROBABILITY = Range(0, 1, words="a probability between 0 and 1")
_STEP_COUNT = Range(1, STEPS)
_POOL = Range(1, 1_000)
_RATE = Range(0, 1, above=True)

BOUNDS: dict[str, Range | None] = {
    "seed": Range(0, SEED_HIGH),
    "num_players": None,  # the game's own range, checked by building the env
    "num_envs": Range(1, 4_096),
    "total_timesteps": _STEP_COUNT,
    "max_minutes": Range(0, MINUTES),
    "checkpoint_every": _STEP_COUNT,
    "checkpoint_minutes": Range(0, MINUTES),
    "torch_threads": Range(1, 1_024),
    "actors": None,  # its range depends on the machine: `cardlab.training.harness.placement`
    "max_policy_lag": Range(0, 1_000_000),
    "rllib.num_env_runners": Range(0, 1_024),
    "opponents[].weight": Range(0, 1_000_000, above=True),
    "self_play.share": _PROBABILITY,
    "self_play.snapshot_every": _STEP_COUNT,
    "self_play.pool_size": _POOL,
    "self_play.learner_share": _PROBABILITY,
    "population.share": _PROBABILITY,
    "population.pool_size": _POOL,
    "imitation.hands": Range(1, 1_000_000),
    "imitation.epochs": Range(1, 10_000),
    "imitation.batch_size": Range(1, ROLLOUT_HIGH),
    "imitation.learning_rate": _RATE,
    "ppo.learning_rate": _RATE,
    "ppo.n_steps": Range(1, ROLLOUT_HIGH),
    "ppo.batch_size": Range(2, ROLLOUT_HIGH),
    "ppo.n_epochs": Range(1, 10_000),
    "ppo.gamma": Range(0, 1, above=True, words="a discount in (0, 1]"),
    "ppo.gae_lambda": Range(0, 1, words="a value in [0, 1]"),
    "ppo.clip_range": Range(0, 10, above=True),
    "ppo.ent_coef": Range(0, 1_000),
    "ppo.vf_coef": Range(0, 1_000),
    "ppo.max_grad_norm": Range(0, 1_000_000, above=True),
    "dmc.epsilon": _PROBABILITY,
    "dmc.learning_rate": _RATE,
    "dmc.batch_size": Range(1, ROLLOUT_HIGH),
    "dmc.n_epochs": Range(1, 10_000),
    "dmc.max_grad_norm": Range(0, 1_000_000, above=True),
    "policy.net_arch[]": Range(1, MAX_LAYER_UNITS, words=f"layer sizes >= 1 and <= {MAX_LAYER_UNITS:,}"),
    "policy.read_hands": Range(0, 1_000),
    "eval.every_steps": _STEP_COUNT,
    "eval.hands": Range(1, 10_000_000),
    "eval.final_hands": Range(0, 10_000_000),
    "eval.matches": Range(0, 1_000_000),
    "eval.final_matches": Range(0, 1_000_000),
}
"""every number of a config by its key path (a list's items as ``[]``); None: checked by another part"""

TEACH_BOUNDS: dict[str, Range | None] = {
    "seed": Range(0, SEED_HIGH),
    "num_players": None,  # the game's own range, checked by building the game
    "labels": Range(1, 10_000_000),
    "label_share": Range(0, 1, above=True, words="a probability in (0, 1]"),
    "keep_share": _PROBABILITY,
    "max_minutes": Range(0, MINUTES),
    "num_envs": Range(1, 4_096),
    "holdout_share": Range(0, 0.9, words="a share from 0 to 0.9"),
    "epochs": Range(1, 10_000),
    "batch_size": Range(1, ROLLOUT_HIGH),
    "learning_rate": _RATE,
    "value_coef": Range(0, 1_000),
    "kl_coef": Range(0, 1_000),
    "max_grad_norm": Range(0, 1_000_000, above=True),
    "check_hands": Range(0, 10_000_000),
    "check_seed": Range(0, SEED_HIGH),
    "torch_threads": Range(1, 1_024),
}
"""every number of a teach config (`cardlab.training.trainers.expert_iteration.TeachConfig`) by its key"""


READER_BOUNDS: dict[str, Range | None] = {
    "seed": Range(0, SEED_HIGH),
    "num_players": None,  # the game's own range, checked by building the game
    "field[].weight": Range(0, 1_000_000),
    "positions": Range(1, 100_000_000),
    "chunk": Range(1, 1_000_000),
    "keep_share": Range(0, 1, above=True, words="a probability in (0, 1]"),
    "workers": Range(1, 256),
    "hidden[]": Range(1, MAX_LAYER_UNITS),
    "epochs": Range(1, 10_000),
    "batch_size": Range(1, ROLLOUT_HIGH),
    "learning_rate": _RATE,
    "holdout_share": Range(0, 0.9, words="a share from 0 to 0.9"),
    "torch_threads": Range(1, 1_024),
}
"""every number of a reader config (`cardlab.training.data.reader.ReaderConfig`) by its key"""
EQUITY_BOUNDS: dict[str, Range | None] = {
    "seed": Range(0, SEED_HIGH),
    "num_players": None,  # the game's own range, checked by building the game
    "hands": Range(1, 10_000_000),
    "holdout_hands": Range(1, 10_000_000),
    "matches": Range(1, 10_000_000),
    "holdout_matches": Range(1, 10_000_000),
    "hidden[]": Range(1, 256),
    "epochs": Range(1, 10_000),
    "batch_size": Range(1, ROLLOUT_HIGH),
    "learning_rate": _RATE,
}
"""every number of a match-equity config (`cardlab.training.data.match_equity.EquityConfig`) by its key"""


def numbers(section: Any, path: str = "", pattern: str = "") -> list[tuple[str, str, float]]:
    """(key path, its BOUNDS pattern, value) of every number in a config's dataclasses, in field order."""
    found: list[tuple[str, str, float]] = []
    for field in dataclasses.fields(section):
        found += _numbers(getattr(section, field.name), f"{path}{field.name}", f"{pattern}{field.name}")
    return found


def _numbers(value: Any, path: str, pattern: str) -> list[tuple[str, str, float]]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return numbers(value, f"{path}.", f"{pattern}.")
    if isinstance(value, list):
        return [n for i, v in enumerate(value) for n in _numbers(v, f"{path}[{i}]", f"{pattern}[]")]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(path, pattern, value)]
    return []  # strings, flags and the rules mapping (the game checks its options)


def check_bounds(cfg: Any, bounds: dict[str, Range | None]) -> None:
    """Refuse the first number of a config outside its range in `bounds`, naming its key path and range."""
    for path, pattern, value in numbers(cfg):
        if pattern not in bounds:  # pragma: no cover - a field added without a range: a bug here
            raise TypeError(f"config field {pattern} has no range")
        bound = bounds[pattern]
        if bound is not None and not bound.holds(value):
            raise ValueError(f"{path}={excerpt(value)} is not accepted: {bound.accepted()}")


def check_numbers(cfg: Any) -> None:
    """Refuse the first number of a training config outside its range (`BOUNDS`), or too large a rollout."""
    check_bounds(cfg, BOUNDS)
    rollout = cfg.ppo.n_steps * cfg.num_envs
    if rollout > ROLLOUT_HIGH:
        raise ValueError(f"ppo.n_steps * num_envs = {rollout:,} transitions per rollout are not accepted: "
                         f"use at most {ROLLOUT_HIGH:,}")


def check_network(net_arch: list[int], observation_size: int, num_actions: int, *,
                  key: str = "policy.net_arch", what: str = "an actor") -> None:
    """Refuse a network a bot file could not hold: too many hidden layers, or too many parameters.

    The count is the actor's (observation -> hidden layers -> actions), what
    the bot file keeps; the critic (training only) is about as large. A hand
    reader's network (`key` ``hidden``) is held to the same caps: its file is
    read by the same checks.
    """
    if len(net_arch) > MAX_HIDDEN_LAYERS:
        raise ValueError(f"{key} has {len(net_arch):,} hidden layers: use at most {MAX_HIDDEN_LAYERS}")
    sizes = [observation_size, *net_arch, num_actions]
    count = sum(math.prod(shape) for shape in tensor_shapes(sizes).values())
    if count > MAX_PARAMETERS:
        raise ValueError(f"{key}={excerpt(net_arch)} makes {what} of {count:,} parameters: use at most "
                         f"{MAX_PARAMETERS:,} (a bot file holds no more)")
