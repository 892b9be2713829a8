"""What the compiled play-outs of every game share (`cardlab.envs.huit.fast`, `cardlab.envs.switch.fast`):
their scratch arrays and argument checks, the live slots and the one-legal-move split.

Why apart: each game's play-out runs its own engine's and heuristics' kernels
inside numba, but what the calls take and check, and which movers are asked
at all, are the same in every game, so they are written once. The players'
kinds and the calls' shapes are `cardlab.envs.fast`'s.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from cardlab.envs.checked_json import excerpt
from cardlab.envs.fast import CompiledPolicy

NONE = np.zeros(0, dtype=np.int64)
"""The int64 arguments a kernel does not read (typed as those it reads, so that no kernel compiles twice)."""


class Scratch(NamedTuple):
    """A play-out's working arrays for a batch of B slots, allocated once per engine and passed to its
    kernel as one argument."""

    mask: np.ndarray  # (B, num_actions) bool: the movers' masks, packed
    obs: np.ndarray  # (B, obs_size) float32: their observations, packed
    actions: np.ndarray  # (B,) int64: by slot
    flags: np.ndarray  # (2, B) bool: waiting, held
    rows: np.ndarray  # (B,) int64: the movers' slots
    choosers: np.ndarray  # (B,) int64: the slots of the movers with a choice (`split_forced`)
    per_chooser: np.ndarray  # (B,) int64: a number per chooser (its legal count, its seat to move)


def scratch(engine: Any) -> Scratch:
    """A play-out's working arrays for `engine`'s batch."""
    B = engine.batch_size
    return Scratch(np.empty((B, engine.num_actions), dtype=np.bool_),
                   np.empty((B, engine.obs_size), dtype=np.float32), np.zeros(B, dtype=np.int64),
                   np.zeros((2, B), dtype=np.bool_), np.zeros(B, dtype=np.int64), np.zeros(B, dtype=np.int64),
                   np.zeros(B, dtype=np.int64))


def checked_slots(engine: Any, slots: Any, seat: Any, gained: Any) -> int:
    """A `ToEnd` call's arguments checked against `engine`: the slot count n (an int)."""
    whole = isinstance(slots, (int, np.integer)) and not isinstance(slots, bool)
    if not whole or not 0 <= slots <= engine.batch_size:
        raise ValueError(f"slots must be a count 0..{engine.batch_size}, got {excerpt(slots)}")
    shaped = isinstance(gained, np.ndarray) and gained.shape == (engine.batch_size,)
    if not shaped or gained.dtype != np.float64:
        raise ValueError(f"gained must be a ({engine.batch_size},) float64 array (added to in place)")
    seated = isinstance(seat, (int, np.integer)) and not isinstance(seat, bool)
    if not seated or not 0 <= seat < engine.n:
        raise ValueError(f"seat must be a seat index 0..{engine.n - 1}, got {excerpt(seat)}")
    return int(slots)


@njit(cache=True)
def live_rows(info: np.ndarray, over: int, rows: np.ndarray) -> int:
    """The slots whose hand is still in play (`info[b, over]` 0), in slot order, into `rows`; their count."""
    count = 0
    for b in range(info.shape[0]):
        if info[b, over] == 0:
            rows[count] = b
            count += 1
    return count


@njit(cache=True)
def split_forced(movers: np.ndarray, masks: np.ndarray, actions: np.ndarray, choosers: np.ndarray) -> int:
    """The movers with one legal move get it in `actions` (by slot); the others' mask rows are packed to
    the front of `masks` and their slots into `choosers`; returns how many choose.

    Why: the stepped rollouts ask a model only where there is a choice
    (`Rollouts.act`), and the kernels draw nothing for one legal move, so
    asking only the choosers picks the same moves at less cost.
    """
    chosen = 0
    for i in range(movers.shape[0]):
        legal = -1
        for a in range(masks.shape[1]):
            if masks[i, a]:
                if legal != -1:
                    legal = -2
                    break
                legal = a
        if legal >= 0:
            actions[movers[i]] = legal
        else:
            masks[chosen] = masks[i]
            choosers[chosen] = movers[i]
            chosen += 1
    return chosen


def compiled_kind(engine: Any, policy: CompiledPolicy, engine_class: type[Any]) -> int | None:
    """`policy`'s kernel (`RANDOM`, `GREEDY`, `EXPERT`) on `engine`, or None where a game's path does not
    compile it: an engine of `engine_class` (the game's batched engine) and the policy's own rules."""
    if not isinstance(engine, engine_class) or policy.rules != engine.rules:
        return None
    return policy.kind
