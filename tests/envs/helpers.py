"""Helpers shared by the env scenario tests: actions written in their text form.

Both games (Switch, Huit américain) expose `str_to_action`, `action_to_str` and
`legal_actions` on the unwrapped env, so these work for either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Protocol

import numpy as np
from pettingzoo import AECEnv

from cardlab.envs.options import RuleOptions


def position(saved: Mapping[str, Any]) -> dict[str, Any]:
    """A saved state without its public record: what a batched engine, which keeps none, must match."""
    return {key: value for key, value in saved.items() if key != "record"}


def play(env: AECEnv, text: str) -> None:
    """Step the agent to move with the action written as text, e.g. ``play 9S 9H`` or ``draw``."""
    env.step(env.unwrapped.str_to_action(text))


def play_all(env: AECEnv, texts: Iterable[str]) -> None:
    """Play several actions in a row, each by the agent to move at that point."""
    for text in texts:
        play(env, text)


def legal_strs(env: AECEnv) -> set[str]:
    """The legal actions of the agent to move, as text."""
    unwrapped = env.unwrapped
    return {unwrapped.action_to_str(a) for a in unwrapped.legal_actions()}


def mask_strs(env: AECEnv) -> set[str]:
    """The actions set in the action mask the agent to move observes, as text."""
    unwrapped = env.unwrapped
    mask = env.observe(env.agent_selection)["action_mask"]
    return {unwrapped.action_to_str(int(a)) for a in np.flatnonzero(mask)}


def assert_legal(env: AECEnv, expected: set[str]) -> None:
    """Both `legal_actions()` and the observed action mask are exactly `expected`."""
    assert legal_strs(env) == expected
    assert mask_strs(env) == expected


def dealt(make_env: Callable[..., AECEnv], deal: dict[str, Any], seed: int = 0, **options: Any) -> AECEnv:
    """A new env `make_env(**options)` reset to the stacked `deal` (see the game module's doc)."""
    env = make_env(**options)
    env.reset(seed=seed, options={"deal": deal})
    return env


def obs_parts(env: AECEnv, agent: str | None = None) -> dict[str, np.ndarray]:
    """The named parts of `agent`'s observation vector (default: the agent to move)."""
    agent = env.agent_selection if agent is None else agent
    return env.unwrapped.layout.split(env.observe(agent)["observation"])


def play_random(env: AECEnv, rng: np.random.Generator, max_steps: int) -> list[int]:
    """Play uniformly random legal actions until the episode ends or `max_steps`; returns them."""
    actions: list[int] = []
    agent = env.agent_selection
    while len(actions) < max_steps and not (env.terminations[agent] or env.truncations[agent]):
        action = int(rng.choice(env.unwrapped.legal_actions()))
        env.step(action)
        actions.append(action)
        agent = env.agent_selection
    return actions


def snapshot(env: AECEnv) -> dict[str, Any]:
    """What a refused action, deal or saved state must not change."""
    return {
        "state": env.unwrapped.state_dict(),
        "agent": env.agent_selection,
        "rewards": dict(env.rewards),
        "terminations": dict(env.terminations),
        "legal": env.unwrapped.legal_actions(),
    }


class KernelBatch(Protocol):
    """What `check_options_reach_the_batch` reads of a game's batched engine (`HuitBatch`, `SwitchBatch`):
    its rule options' kernel slots, the options read elsewhere, and the kernel parameters of a batch."""

    PARAM_SLOTS: ClassVar[dict[str, int]]
    OPTIONS_ELSEWHERE: ClassVar[dict[str, str]]
    params: np.ndarray

    def __init__(self, rules: Any, batch_size: int, seed: int | None = None) -> None: ...


def check_options_reach_the_batch(batch_class: type[KernelBatch], rules_class: type[RuleOptions],
                                  drawn: list[dict[str, Any]]) -> None:
    """Each rule option reaches the batched engine, and the differential cases (`drawn`) try it.

    An option must be a kernel parameter (in the batch's `PARAM_SLOTS`) or in its `OPTIONS_ELSEWHERE`
    with the attribute it determines; a case must give it a non-default value, and that value must change the
    option's kernel slot or its attribute against the same rules with the option at its default.
    """
    slots: Mapping[str, int] = batch_class.PARAM_SLOTS
    elsewhere: Mapping[str, str] = batch_class.OPTIONS_ELSEWHERE
    names = rules_class.names()
    unbound = [name for name in names if name not in slots and name not in elsewhere]
    assert not unbound, f"{rules_class.GAME} option(s) {unbound} reach no kernel slot and are not declared " \
                        f"in {batch_class.__name__}.OPTIONS_ELSEWHERE"
    both = sorted(set(slots) & set(elsewhere))
    assert not both, f"option(s) {both} are both a kernel slot and declared elsewhere"
    defaults = rules_class()
    for name in names:
        default = getattr(defaults, name)
        case = next((options for options in drawn if options.get(name, default) != default), None)
        assert case is not None, f"no differential case draws a non-default value of {name}"
        rules = rules_class(**case)
        at_default = dataclasses.replace(rules, **{name: default})
        batch, base = batch_class(rules, 1, seed=0), batch_class(at_default, 1, seed=0)
        if name in slots:
            slot = slots[name]
            assert batch.params[slot] != base.params[slot], f"{name}={case[name]} leaves its kernel slot"
        else:
            attribute = elsewhere[name]
            assert not np.array_equal(getattr(batch, attribute), getattr(base, attribute)), \
                f"{name}={case[name]} leaves {batch_class.__name__}.{attribute} as at the default"
