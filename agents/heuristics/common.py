"""What the heuristic agents of both games share: legal ids, seeded tie-breaks, card odds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

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


@njit(cache=True)
def best_index(scores: np.ndarray, count: int, rng: np.random.Generator) -> int:
    """The row of `scores[:count]` (one row per legal action, ascending ids) that `HeuristicAgent.best` picks.

    The compiled heuristics' tie-break: rows compare as tuples after rounding
    to 9 decimals, and with several best rows one is drawn by
    `rng.integers(ties)` (numba's generator draws as numpy's does), so a batch
    played row by row from one generator picks what `best` picks move by move.
    """
    width = scores.shape[1]
    top = np.empty(width)
    tied = np.empty(count, dtype=np.int64)
    ties = 0
    for i in range(count):
        cmp = 0 if ties else 1
        for j in range(width):
            x = round(scores[i, j], 9)
            if cmp == 0:
                if x > top[j]:
                    cmp = 1
                elif x < top[j]:
                    cmp = -1
                    break
        if cmp == 1:
            for j in range(width):
                top[j] = round(scores[i, j], 9)
            ties = 0
        if cmp >= 0:
            tied[ties] = i
            ties += 1
    if ties > 1:
        return int(tied[rng.integers(0, ties)])
    return int(tied[0])


def counts(part: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """Per-kind counts from an observation slice scaled by 1/copies."""
    return np.rint(part * copies).astype(np.int64)


def p_lacks(pool: int, wanted: int, k: int) -> float:
    """Chance that `k` cards drawn at random from `pool` unknown cards miss all `wanted` ones.

    This is how an attentive player judges whether an opponent holding `k`
    cards can answer: the unknown cards are those neither in my hand nor seen
    played, spread at random over the other hands and the face-down pile.
    """
    if k <= 0 or wanted <= 0:
        return 1.0
    if k > pool - wanted:
        return 0.0
    p = 1.0
    for i in range(k):
        p *= (pool - wanted - i) / (pool - i)
    return p


compiled_p_lacks = njit(cache=True, inline="always")(p_lacks)
"""`p_lacks` for the compiled heuristics (inlined into their kernels): the same products in the same order."""


def threat(cards_left: int) -> float:
    """How urgently an opponent with `cards_left` cards must be stopped (1 card: 1.0)."""
    return 1.0 / cards_left ** 2 if cards_left > 0 else 0.0

