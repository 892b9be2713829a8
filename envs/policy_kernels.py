"""Compiled pieces that every batched policy shares: legal ids of a mask row, the random agent itself, the
heuristics' seeded tie-break (`best_index`) and card odds (`p_lacks`).

Why compiled: a batch of thousands of rows (a search's rollouts, a vector
env's opponents) is played in one call, so that no Python runs per row. Rows
are taken in order and every draw comes from the agent's own generator
(numba's `np.random.Generator` draws as numpy's does), so a batch picks what
`Agent.act` picks row by row from the same generator.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def first_empty_row(masks: np.ndarray) -> int:
    """The first row of `masks` with no legal action, -1 if every row has one."""
    for b in range(masks.shape[0]):
        found = False
        for a in range(masks.shape[1]):
            if masks[b, a]:
                found = True
                break
        if not found:
            return b
    return -1


@njit(cache=True)
def legal_ids(masks: np.ndarray, b: int, out: np.ndarray) -> int:
    """Write the legal ids of row `b` into `out`, ascending (as `np.flatnonzero`); returns how many."""
    count = 0
    for a in range(masks.shape[1]):
        if masks[b, a]:
            out[count] = a
            count += 1
    return count


@njit(cache=True)
def uniform_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`RandomAgent.act` for every row in order: `legal[rng.integers(legal.size)]`."""
    out = np.empty(masks.shape[0], dtype=np.int64)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    for b in range(masks.shape[0]):
        count = legal_ids(masks, b, legal)
        out[b] = legal[rng.integers(0, count)]
    return out


@njit(cache=True)
def best_index(scores: np.ndarray, count: int, rng: np.random.Generator) -> int:
    """The row of `scores[:count]` (one row per legal action, ascending ids) that a heuristic plays.

    The compiled heuristics' tie-break: rows compare in order, entry by entry,
    after rounding to 9 decimals (so that the last bits of a sum do not decide),
    and with several best rows one is drawn by `rng.integers(ties)`, from the
    agent's own generator, so that a seed fixes its play.
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
