"""Compiled pieces that every batched agent shares: legal ids of a mask row, and the random agent itself.

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
