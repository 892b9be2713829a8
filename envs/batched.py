"""What the batched engines of every game share: random legal actions, seat arguments, held slots.

The engines themselves (`cardlab.envs.huit.batched.HuitBatch`,
`cardlab.envs.switch.batched.SwitchBatch`) keep one API; these pieces of it
do not depend on the game, so they are written once here, `BatchedEngine`
among them (the ends of episodes and `step` around each game's own move).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import ClassVar

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


class BatchedEngine:
    """Base of the batched engines: `done`, `truncated` and `step`; a game supplies its columns and move.

    `done` and `truncated` are Gymnasium's terminated and truncated (never
    both): the episode ended by a win, or C1 cut it; a slot with either waits
    for `reset`. `step` checks the action ids, holds the slots outside
    `active`, and lets `_apply` move the rest; an illegal action in a live
    slot is refused by `_refuse` before any slot moves.
    """

    RULES: ClassVar[ModuleType]
    """the game's rules module (its `NUM_ACTIONS` and `action_to_str` name actions in errors)"""
    batch_size: int

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Views of the (B,) hand-over and truncated columns of the state (nonzero: set)."""
        raise NotImplementedError

    def _apply(self, actions: np.ndarray) -> np.ndarray:
        """Move every live slot by its action (checked (B,) int64 ids); the (B, n) float32 rewards."""
        raise NotImplementedError

    def current_player(self) -> np.ndarray:
        raise NotImplementedError

    def legal_mask(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def done(self) -> np.ndarray:
        """(B,) bool: the episode ended by a win (terminated)."""
        over, truncated = self._end_columns()
        return (over != 0) & (truncated == 0)

    @property
    def truncated(self) -> np.ndarray:
        """(B,) bool: the hand was truncated at max_turns (C1), which ends the episode."""
        return self._end_columns()[1] != 0

    def step(self, actions: np.ndarray,
             active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per live slot; returns (rewards (B, n), done (B,), truncated (B,)).

        `active`: (B,) bool, the slots that move (default: every live one); the
        others keep their state and get no reward, as finished slots do (so a
        caller can hold some games while others catch up).
        """
        acts = np.asarray(actions)
        if acts.shape != (self.batch_size,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be a ({self.batch_size},) integer array of action ids, "
                             f"got {acts.dtype} {acts.shape}")
        with holding(self._end_columns()[0], active):
            rewards = self._apply(acts.astype(np.int64))
        return rewards, self.done, self.truncated

    def _refuse(self, b: int, action: int) -> None:
        """Raise the `ValueError` of an illegal `action` in slot `b`: what it is, and what is legal there."""
        rules = self.RULES
        legal = np.flatnonzero(self.legal_mask()[b])
        listed = ", ".join(f"{a} ({rules.action_to_str(int(a))})" for a in legal)
        if 0 <= action < rules.NUM_ACTIONS:
            what = f"{action} ({rules.action_to_str(action)})"
        else:
            what = f"{action} (not an action id 0..{rules.NUM_ACTIONS - 1})"
        raise ValueError(f"slot {b}: illegal action {what} for seat {self.current_player()[b]}; "
                         f"legal actions: {listed}; no slot was stepped")
