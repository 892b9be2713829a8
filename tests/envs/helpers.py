"""Helpers shared by the env scenario tests: actions written in their text form.

Both games (Switch, Huit américain) expose `str_to_action`, `action_to_str` and
`legal_actions` on the unwrapped env, so these work for either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from pettingzoo import AECEnv


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
