"""A user's agent module for the MODULE:FACTORY tests: `make` builds an agent, `seeing` one that sees the
hand's record (no rollout model), the others are wrong.

Importing it leaves a mark (`IMPORTED`), so a test can tell whether anything imported it.
"""

from __future__ import annotations

from typing import Any

from cardlab.agents.base import Agent, RandomAgent
from cardlab.envs.game_spec import Game

IMPORTED = True
NOT_CALLABLE = 3


def make(game: Game, seed: int | None = None) -> Agent:
    return RandomAgent(game, seed)


def not_an_agent(game: Game, seed: int | None = None) -> Any:
    return "random"


class Seeing(RandomAgent):
    """Random moves, but it asks to be shown the hand's public record before each one."""

    sees = frozenset({"record"})


def seeing(game: Game, seed: int | None = None) -> Agent:
    return Seeing(game, seed)
