"""What the batched engines of every game share: random legal actions, seat arguments, held slots.

The engines themselves (`cardlab.envs.huit.batched.HuitBatch`,
`cardlab.envs.switch.batched.SwitchBatch`) keep one API; these pieces of it
do not depend on the game, so they are written once here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from numba import njit


@njit(cache=True)
def _pick(mask: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    for b in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            count += mask[b, a]
        out[b] = 0
        if count == 0:
            continue
        k = min(int(uniforms[b] * count), count - 1)
        for a in range(mask.shape[1]):
            if mask[b, a]:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of a (B, A) bool mask (0 in a row without any)."""
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    out = np.zeros(mask.shape[0], dtype=np.int64)
    _pick(mask, np.asarray(rng.random(mask.shape[0])), out)
    return out


def seat_indices(seats: np.ndarray, batch_size: int, num_players: int) -> np.ndarray:
    """`seats` as (B,) int64 seat indices, or a `ValueError` saying what `observe` accepts."""
    who = np.asarray(seats)
    if who.shape != (batch_size,) or not np.issubdtype(who.dtype, np.integer):
        raise ValueError(f"seats must be {batch_size} seat indices (ints), got {who.dtype} {who.shape}")
    if who.size and (who.min() < 0 or who.max() >= num_players):
        raise ValueError(f"seats must be seat indices 0..{num_players - 1}")
    return who.astype(np.int64)


@contextlib.contextmanager
def holding(over: np.ndarray, active: np.ndarray | None) -> Iterator[None]:
    """While the block runs, mark the live slots outside `active` finished, so a step leaves them as they are.

    `over` is the engine's (B,) hand-over column (a view into its state);
    `active=None` holds nothing.
    """
    if active is None:
        yield
        return
    held = np.flatnonzero(~np.asarray(active, dtype=np.bool_) & (over == 0))
    over[held] = 1
    try:
        yield
    finally:
        over[held] = 0
