"""The one agent interface, and agent spec strings.

An agent is made for one game and one set of rules (it sees the env, so it can
decode observations through `env.layout` and name actions through the action
table). Each turn it gets the observation dict of the seat to move, with its
`action_mask`, and returns a legal action id. It owns a seeded
`np.random.Generator` and never touches the global RNG.

Spec strings name agents everywhere (configs, CLI): ``random``, ``greedy``,
``expert`` and ``bot:PATH`` (a trained bot file). `make_agent(spec, env, seed)`
builds one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

# name -> factory(env, seed) -> Agent; heuristics register themselves on import.
_REGISTRY: dict[str, Callable[[Any, int | None], "Agent"]] = {}
SPEC_HELP = "'random', 'greedy', 'expert' or 'bot:PATH'"


class Agent(ABC):
    """Chooses a legal action from an observation dict."""

    name: str = "agent"

    def __init__(self, env: Any, seed: int | None = None) -> None:
        self.env = env.unwrapped if hasattr(env, "unwrapped") else env
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action id for the seat whose observation this is."""

    def reset(self) -> None:
        """Called at the start of every hand; stateless agents ignore it."""

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("the observation's action_mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])


def register(name: str, factory: Callable[[Any, int | None], Agent]) -> None:
    _REGISTRY[name] = factory


register("random", RandomAgent)


def make_agent(spec: str, env: Any, seed: int | None = None) -> Agent:
    """Build the agent a spec string names, for `env` (its game and rules)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string: {SPEC_HELP}")
    spec = spec.strip()
    if spec.startswith("bot:"):
        from cardlab.agents.bot import load_bot  # torch only when a bot is asked for

        return load_bot(spec[4:], env=env, seed=seed)
    _load_builtin()
    if spec not in _REGISTRY:
        raise ValueError(f"unknown agent spec {spec!r}: use {SPEC_HELP}")
    return _REGISTRY[spec](env, seed)


def _load_builtin() -> None:
    """Import the heuristic modules, which register their agents."""
    import cardlab.agents.heuristics  # noqa: F401
