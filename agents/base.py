"""The one agent interface, and agent spec strings.

An agent is made for one `Game` (a game with its rule options, from
`cardlab.envs.make_game`), never from a live env: it decodes observations
through `game.layout` and names actions through `game.action_to_str`, and each
turn it gets only the observation dict of its seat (with the `action_mask`).
So it can see what a player sees and nothing more. It owns a seeded
`np.random.Generator` and never touches the global RNG.

Spec strings name agents everywhere (configs, CLI): ``random``, the game's
heuristics (``greedy``, ``expert``: `GameSpec.heuristics`) and ``bot:PATH``
(a trained bot file). `make_agent(spec, game, seed)` builds one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from cardlab.envs.spec import Game

THREADS_ENV = "CARDLAB_TORCH_THREADS"
"""environment variable: torch threads of a bot's network (default 1; see `cardlab.agents.bot`)"""
AgentFactory = Callable[[Game, "int | None"], "Agent"]
# Agents for every game, beyond each game's own heuristics: name -> factory(game, seed).
_REGISTRY: dict[str, AgentFactory] = {}


def as_game(game: Any) -> Game:
    """The `Game` of a Game or of an env (its game and rules only: the agent keeps no env)."""
    if isinstance(game, Game):
        return game
    found = getattr(getattr(game, "unwrapped", game), "game", None)
    if isinstance(found, Game):
        return found
    raise ValueError(
        f"agents are built from a Game (cardlab.envs.make_game(id, **rules), or env.unwrapped.game), "
        f"got {type(game).__name__}"
    )


class Agent(ABC):
    """Chooses a legal action from an observation dict."""

    name: str = "agent"

    def __init__(self, game: Game, seed: int | None = None) -> None:
        self.game = as_game(game)
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action id for the seat whose observation this is."""

    def reset(self) -> None:  # noqa: B027 - a hook: stateless agents have nothing to reset
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


def register(name: str, factory: AgentFactory) -> None:
    """Add an agent spec for every game (a game's own heuristics are in its `GameSpec`)."""
    if not isinstance(name, str) or not name or name.startswith("bot:") or ":" in name:
        raise ValueError(f"agent spec names are plain words (no ':'), got {name!r}")
    _REGISTRY[name] = factory


register("random", RandomAgent)


def spec_names(game: Game) -> list[str]:
    """The agent specs accepted for `game`, as help text lists them."""
    return [*_REGISTRY, *game.spec.heuristics, "bot:PATH"]


def make_agent(spec: str, game: Any, seed: int | None = None) -> Agent:
    """Build the agent a spec string names, for `game` (a `Game`; an env gives its `Game`)."""
    game = as_game(game)
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string: use {', '.join(spec_names(game))}")
    spec = spec.strip()
    if spec.startswith("bot:"):
        from cardlab.agents.bot import load_bot  # torch only when a bot is asked for

        path = spec[4:].strip()
        if not path:
            raise ValueError(
                "agent spec 'bot:' is missing the path of the bot: give its file or a run folder, e.g. "
                "bot:runs/RUN/bot.json or bot:runs/RUN"
            )
        return load_bot(path, game, seed=seed)
    if spec in game.spec.heuristics:
        return game.spec.heuristic(spec)(game, seed)
    if spec in _REGISTRY:
        return _REGISTRY[spec](game, seed)
    raise ValueError(f"unknown agent spec {spec!r} for {game.id}: use {', '.join(spec_names(game))}")
