"""What the heuristic agents of both games share: legal ids, seeded tie-breaks, card odds.

The compiled tie-break and card odds (`best_index`, `p_lacks`) are `cardlab.envs.policy_kernels`', which
the games' compiled heuristics read too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardlab.agents.base import Agent
from cardlab.envs.spec import Game

Score = tuple[float, ...]


class HeuristicAgent(Agent):
    """An agent that scores each legal action and plays a best one.

    Ties are broken with the agent's own seeded generator, so a seed fixes its
    play and the global RNG is never touched.
    """

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.layout = self.game.layout
        self.rules: Any = self.game.rules

    @staticmethod
    def legal(observation: dict[str, np.ndarray]) -> list[int]:
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError("the observation's action_mask has no legal action: is this seat to move?")
        return legal

    def best(self, actions: Sequence[int], score: Callable[[int], Score]) -> int:
        """A highest-scoring action (scores compare as tuples); ties drawn with `self.rng`."""
        scored = [(tuple(round(x, 9) for x in score(a)), a) for a in actions]
        top = max(s for s, _ in scored)
        tied = [a for s, a in scored if s == top]
        return tied[int(self.rng.integers(len(tied)))] if len(tied) > 1 else tied[0]


def counts(part: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """Per-kind counts from an observation slice scaled by 1/copies."""
    return np.rint(part * copies).astype(np.int64)


def threat(cards_left: int) -> float:
    """How urgently an opponent with `cards_left` cards must be stopped (1 card: 1.0)."""
    return 1.0 / cards_left ** 2 if cards_left > 0 else 0.0

