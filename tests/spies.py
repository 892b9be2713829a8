"""`BatchSpy`: an agent spec (``test_batch_spy``) that refuses `act` and counts its `act_batch` calls.

Why: a batch user (league, imitation, exploit, the vector env) must ask each
of its players once per step for all the games that player holds; a spy
whose `act` raises fails any user that still asks slot by slot, and its log
of calls shows how many rows each call held.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from cardlab.agents.base import Agent, register
from cardlab.envs.batched_engine import sample_legal

SPY = "test_batch_spy"


class BatchSpy(Agent):
    """A uniformly random legal move per row, from its own generator; `act` raises."""

    name = SPY
    calls: ClassVar[list[tuple[int, int]]] = []
    """(id of the agent, rows) of every `act_batch` call since the last `clear`, in order"""

    def act(self, observation: dict[str, np.ndarray]) -> int:
        raise AssertionError("act called for one slot: a batch user must call act_batch for all its slots")

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        assert len(observations) == len(masks) > 0
        assert np.asarray(masks).any(axis=1).all(), "a row without a legal move: not a seat to move"
        BatchSpy.calls.append((id(self), len(observations)))
        return sample_legal(np.asarray(masks, dtype=np.bool_), self.rng)

    @classmethod
    def clear(cls) -> None:
        cls.calls.clear()


register(SPY, BatchSpy)
