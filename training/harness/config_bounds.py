"""The range of every number and the choices of every fixed word of a training config, declared on its
field, and the network's size, checked at validation.

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
from cardlab.envs.declared import Declared, check_that, check_value, declared, option

STEPS = 2_000_000_000
"""most env steps of a run (and of any step count): seed + steps + the eval/imitation offsets < 2**32"""
SEED_HIGH = 2**31 - 1
MINUTES = 1_000_000.0
"""about two years"""
ROLLOUT_HIGH = 1 << 21
"""most transitions of one rollout, ppo.n_steps * num_envs (each holds an observation in memory)"""


def bounded(default: Any, low: float, high: float, *, above: bool = False, words: str = "") -> Any:
    """A config field holding a number (or a list of them) from `low` (excluded when `above`) to `high`,
    declared with `cardlab.envs.declared.option`; the field's docstring says what it does, `words` what is
    accepted where plainer than the numbers."""
    return option(default, "", low, high, whole=not isinstance(default, float), above=above, words=words)


def layer_sizes(default: list[int]) -> Any:
    """A policy's hidden layer sizes, each one a bot file may hold."""
    return bounded(default, 1, MAX_LAYER_UNITS, words=f"layer sizes >= 1 and <= {MAX_LAYER_UNITS:,}")


def probability(default: float) -> Any:
    return bounded(default, 0, 1, words="a probability between 0 and 1")


def rate(default: float) -> Any:
    """A learning rate: above 0, at most 1."""
    return bounded(default, 0, 1, above=True)


def step_count(default: int) -> Any:
    return bounded(default, 1, STEPS)


def elsewhere(default: Any, words: str) -> Any:
    """A field whose accepted values another check holds (`words` says which): a number so declared is not
    a miss."""
    return option(default, "", words=words)


def word(default: str, choices: tuple[str, ...]) -> Any:
    """A config field holding one of the fixed words `choices` (checked by `check_choices`)."""
    return option(default, "", choices=choices)


def check_choices(cfg: Any, path: str = "") -> None:
    """Refuse the first word of a config outside its field's declared choices, naming the key and them."""
    for field in dataclasses.fields(cfg):
        value, key, bound = getattr(cfg, field.name), f"{path}{field.name}", declared(field)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            check_choices(value, f"{key}.")
        elif bound is not None and bound.choices:
            check_value(key, bound, value)


def numbers(section: Any, path: str = "", pattern: str = "") -> list[tuple[str, Declared, float]]:
    """(key path, declaration named by its pattern (a list's items as ``[]``), value) of every number in a
    config's dataclasses, in field order; a number field not declared with `option` is a `TypeError`."""
    found: list[tuple[str, Declared, float]] = []
    for field in dataclasses.fields(section):
        found += _numbers(getattr(section, field.name), f"{path}{field.name}", f"{pattern}{field.name}",
                          declared(field))
    return found


Number = tuple[str, Declared, float]
"""(key path, declaration named by its pattern, value) of one number of a config"""


def _numbers(value: Any, path: str, pattern: str, field: Declared | None) -> list[Number]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return numbers(value, f"{path}.", f"{pattern}.")
    if isinstance(value, list):
        return [n for i, v in enumerate(value) for n in _numbers(v, f"{path}[{i}]", f"{pattern}[]", field)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if field is None:  # a field added without a range: a bug here
            raise TypeError(f"config field {pattern} has no range: declare it with option()")
        return [(path, dataclasses.replace(field, name=pattern), value)]
    return []  # strings, flags and the rules mapping (the game checks its options)


def check_bounds(cfg: Any) -> None:
    """Refuse the first number of a config outside its declared range, naming its key path and range."""
    for path, bound, value in numbers(cfg):
        check_value(path, bound, value)


def check_declared(cfg: Any) -> None:
    """Refuse the first value of a config (any run config) outside what its field declares: a number out of
    its range, a word not among its choices."""
    check_bounds(cfg)
    check_choices(cfg)


def check_numbers(cfg: Any) -> None:
    """Refuse the first number of a training config outside its range, or too large a rollout."""
    check_bounds(cfg)
    check_rollout(cfg)


def check_rollout(cfg: Any) -> None:
    """Refuse a training config's rollout too large to hold in memory, naming ``ppo.n_steps`` (each key is in
    range alone: their product is not) in the one wording of a refused value."""
    rollout = cfg.ppo.n_steps * cfg.num_envs
    check_that(rollout <= ROLLOUT_HIGH, "ppo.n_steps", cfg.ppo.n_steps, f"not accepted with num_envs: "
               f"{cfg.num_envs} ({rollout:,} transitions per rollout)", f"ppo.n_steps * num_envs <= "
               f"{ROLLOUT_HIGH:,} (each transition holds an observation in memory)")


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
