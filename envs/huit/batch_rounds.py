"""Rounds of moves of a `HuitBatch`, compiled: every seat but `who[b]` moves in each slot b until `who[b]`
is to move in every live slot (`BatchedEngine.play_random`'s rounds).

One round is: hold the live slots where `who[b]` is to move (marked over while
the step runs, as `BatchedEngine.hold` does), pick a move for each of the others
(the movers, in slot order), step, release the held slots and add `who[b]`'s
rewards of the movers where `counted[b]`. `start_round` and `finish_round` are
that round without its picks: `random_rounds` here (the engine's `play_random`)
and the compiled heuristics' play-outs (`cardlab.envs.huit.fast.playout`)
put their own picks between the two, so all of them hold, step, release and
tally the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from cardlab.envs.huit.batch_state import CUR, HAND_OVER, S_HANDS, S_INFO, S_REWARDS, S_TABLE, KernelArrays
from cardlab.envs.huit.kernels import sorted_legal_ids, step_kernel


@njit(cache=True)
def start_round(who: np.ndarray, info: np.ndarray, waiting: np.ndarray, held: np.ndarray,
                rows: np.ndarray) -> int:
    """Mark the movers of a round (`waiting`, their slots packed into `rows`) and hold the other live slots
    (`held`); returns how many move (0: the rounds are over, and nothing is left held)."""
    count = 0
    for b in range(who.shape[0]):
        live = info[b, HAND_OVER] == 0
        waiting[b] = live and info[b, CUR] != who[b]
        held[b] = live and not waiting[b]
        if waiting[b]:
            rows[count] = b
            count += 1
        if held[b]:
            info[b, HAND_OVER] = 1  # held while the others move
    if count == 0:
        for b in range(who.shape[0]):
            if held[b]:
                info[b, HAND_OVER] = 0
    return count


@njit(cache=True)
def finish_round(actions: np.ndarray, who: np.ndarray, gained: np.ndarray, counted: np.ndarray,
                 waiting: np.ndarray, held: np.ndarray, s: KernelArrays, gens: Any) -> bool:
    """Step the movers by `actions`, release the held slots, add the gains; whether some mover's episode
    ended. A compiled player's illegal pick raises (the kernels pick from the legal ids only)."""
    if step_kernel(actions, s, gens) >= 0:
        raise RuntimeError("a compiled player chose an illegal move")
    info, rewards = s[S_INFO], s[S_REWARDS]
    ended = False
    for b in range(who.shape[0]):
        if held[b]:
            info[b, HAND_OVER] = 0
        elif waiting[b]:
            if counted[b]:
                gained[b] += rewards[b, who[b]]
            ended |= info[b, HAND_OVER] != 0
    return ended


@njit(cache=True)
def random_rounds(who: np.ndarray, rng: np.random.Generator, gained: np.ndarray, counted: np.ndarray,
                  s: KernelArrays, gens: Any, legal: np.ndarray, actions: np.ndarray, waiting: np.ndarray,
                  held: np.ndarray, rows: np.ndarray) -> bool:
    """`BatchedEngine.play_random` compiled: the same rounds, holds and draws, without Python per round.

    A mover's pick is `pick_legal`'s (the k-th legal id, ascending, k = floor(u * count)) read from its
    sorted legal ids, so no mask row is built or scanned. `legal` (NUM_ACTIONS,), `actions`, `waiting`,
    `held` and `rows` (B,) are scratch arrays.
    """
    info, hands, table = s[S_INFO], s[S_HANDS], s[S_TABLE]
    ended = False
    while True:
        count = start_round(who, info, waiting, held, rows)
        if count == 0:
            return ended
        for i in range(count):
            b = rows[i]
            legal_count = sorted_legal_ids(info, hands, table, b, legal)
            actions[b] = legal[min(int(rng.random() * legal_count), legal_count - 1)]
        ended |= finish_round(actions, who, gained, counted, waiting, held, s, gens)
