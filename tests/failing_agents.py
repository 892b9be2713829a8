"""Agents that fail at play time, each a different way, registered by name for one test.

`register_failing(monkeypatch)` adds the specs ``fails-raise`` (raises an
exception that names a card), ``fails-illegal`` (answers an action the mask
refuses), ``fails-nan`` (answers NaN probabilities, as an overflowing bot
would), ``fails-slow`` (sleeps past any play-time limit) and
``fails-later`` (plays randomly for `LATER` moves, then raises).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from cardlab.agents import base
from cardlab.agents.base import Agent, RandomAgent

LATER = 3
"""moves ``fails-later`` plays before it raises"""
SLOW_SECONDS = 5.0


class Raises(Agent):
    name = "fails-raise"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        raise KeyError("AS 10H KD")  # a message full of cards: none may reach the page


class Illegal(Agent):
    name = "fails-illegal"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(np.asarray(observation["action_mask"]) == 0)[0])


class NotFinite(Agent):
    name = "fails-nan"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.argmax(self.action_probabilities(observation)))

    def action_probabilities(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.full(len(observation["action_mask"]), np.nan)


class Slow(RandomAgent):
    name = "fails-slow"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        time.sleep(SLOW_SECONDS)
        return super().act(observation)


class Later(Agent):
    """Not a `RandomAgent`: that one may play a batch without calling `act`."""

    name = "fails-later"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.moves = 0

    def act(self, observation: dict[str, np.ndarray]) -> int:
        self.moves += 1
        if self.moves > LATER:
            raise RuntimeError("gave up")
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(legal.size)])


FAILING = (Raises, Illegal, NotFinite, Slow, Later)


def register_failing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Register every failing agent for this test; returns their specs."""
    for kind in FAILING:
        monkeypatch.setitem(base._REGISTRY, kind.name, kind)
    return [kind.name for kind in FAILING]


def raising(game: Any, seed: int | None = None) -> Agent:
    """``fails-raise`` as a MODULE:FACTORY spec (`tests.failing_agents:raising`), which a spawned process
    builds too: a name `register_failing` adds is known in this process only."""
    return Raises(game, seed)


def slow(game: Any, seed: int | None = None) -> Agent:
    """``fails-slow`` as a MODULE:FACTORY spec (`tests.failing_agents:slow`): minutes a hand."""
    return Slow(game, seed)

