"""A hand's record played forward in a `HuitBatch`, a compiled heuristic's likelihood of each move at once.

Why: a belief (`cardlab.agents.hand_reading.belief`) weighs each sampled world by how
likely the other seats were to make their recorded moves from its hands. The
stepped replay pays a Python round per recorded move (mask, observe, the
model's `act_batch`, step), and between those rounds numpy passes over the
(W, 354) masks: at a few hundred worlds that is most of its time, too much
for a search's quick level. Here the whole record is played inside numba,
calling the model's own kernel (`heuristics.kernels.expert_rows`,
`heuristics.kernels.greedy_batch`, or the uniform count for `random`) on the rows
where another seat had a choice, in slot order, with the model agent's
generator (`playout.compiled_player`): so each move's picks are those
`act_batch` gives on those rows, and the log-likelihoods are the stepped
replay's (`tests/agents/test_belief_fast.py` holds the two to that).

```python
replay = fused_replay(engine, agent.compiled(), eps)   # None: none compiled for them
replay(count, seats, actions, ok, loglik)    # the first `count` slots, loaded at the deal, played forward
```
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from cardlab.envs.checked_json import excerpt
from cardlab.envs.fast import RANDOM, CompiledPolicy, Replay
from cardlab.envs.fast_playout import Scratch, scratch
from cardlab.envs.huit.batch_state import CUR, HAND_OVER, S_INFO, KernelArrays
from cardlab.envs.huit.fast.playout import PlayerArrays, compiled_player, heuristic_picks
from cardlab.envs.huit.kernels import mask_rows_kernel, step_kernel


@njit(cache=True)
def replay_moves(eps: float, move_seats: np.ndarray, move_actions: np.ndarray, ok: np.ndarray,
                 loglik: np.ndarray, s: KernelArrays, gens: Any, player: PlayerArrays,
                 rng: np.random.Generator, work: Scratch) -> None:
    """`belief.play_back`'s loop over the recorded moves for every slot of `s`, as it steps it.

    A slot not `ok` is held (marked over: it is not played on); at each move
    a slot where the seat to move is not the recorded one, or the move is not
    legal, is cleared from `ok`; where a seat but 0 had more than one legal
    move, that seat's row of `loglik` adds the log-probability of the recorded move: the
    model's pick with probability 1 - eps + eps / legal moves, any other
    eps / legal moves (`random`: 1 / legal moves). After the last move a slot
    stays `ok` only where seat 0 is to move in a hand in play.
    """
    info, mask, actions, rows = s[S_INFO], work.mask, work.actions, work.rows
    choosers, counts = work.choosers, work.per_chooser
    for b in range(info.shape[0]):
        if not ok[b]:
            info[b, HAND_OVER] = 1
    for m in range(move_seats.shape[0]):
        seat, action = move_seats[m], move_actions[m]
        live = 0
        for b in range(info.shape[0]):
            if ok[b]:
                rows[live] = b
                live += 1
        if live == 0:
            break
        mask_rows_kernel(rows[:live], s, mask[:live])
        fit = 0
        chosen = 0
        for i in range(live):
            b = rows[i]
            if info[b, CUR] != seat or not mask[i, action]:
                ok[b] = False
                info[b, HAND_OVER] = 1
                continue
            rows[fit] = b
            fit += 1
            if seat == 0:
                continue
            legal = 0
            for a in range(mask.shape[1]):
                legal += mask[i, a]
            if legal > 1:
                mask[chosen] = mask[i]  # (chosen <= i: row i is read before it can be overwritten)
                choosers[chosen] = b
                counts[chosen] = legal
                chosen += 1
        if chosen:
            if player.kind == RANDOM:
                for i in range(chosen):
                    loglik[seat, choosers[i]] -= np.log(float(counts[i]))
            else:
                asked = choosers[:chosen]
                picked = heuristic_picks(asked, mask[:chosen], s, player, rng, work.obs)
                for i in range(chosen):
                    spread = eps / counts[i]
                    loglik[seat, asked[i]] += np.log(1.0 - eps + spread if picked[i] == action else spread)
        for i in range(fit):
            actions[rows[i]] = action
        if step_kernel(actions, s, gens) >= 0:
            raise RuntimeError("a recorded move was applied where it is illegal")
    for b in range(info.shape[0]):
        if ok[b] and (info[b, CUR] != 0 or info[b, HAND_OVER] != 0):
            ok[b] = False


def fused_replay(engine: Any, policy: CompiledPolicy, eps: float) -> Replay | None:
    """The record played forward in the first n slots of `engine` with `policy` (softened by `eps`) as the
    model of the other seats, in one compiled call, or None where not compiled
    (`playout.compiled_player`: a `HuitBatch` with `random`, `greedy` or `expert` of its rules).

    The slots must hold the worlds at the deal (`BatchedEngine.load_worlds`);
    the engine's generators draw nothing (a replayable record turns no pile
    over, `cardlab.envs.world_replay.unreplayable`).
    """
    player = compiled_player(engine, policy)
    if player is None:
        return None
    work = scratch(engine)

    def replay(slots: int, seats: np.ndarray, actions: np.ndarray, ok: np.ndarray,
               loglik: np.ndarray) -> None:
        whole = isinstance(slots, (int, np.integer)) and not isinstance(slots, bool)
        if not whole or not 0 <= slots <= engine.batch_size:
            raise ValueError(f"slots must be a count 0..{engine.batch_size}, got {excerpt(slots)}")
        n = int(slots)
        if ok.shape != (n,) or ok.dtype != np.bool_:
            raise ValueError(f"ok must be a ({n},) bool array (cleared in place)")
        if loglik.shape != (engine.n, n) or loglik.dtype != np.float64:
            raise ValueError(f"loglik must be a ({engine.n}, {n}) float64 array (added to in place)")
        moves = np.asarray(seats, dtype=np.int64), np.asarray(actions, dtype=np.int64)
        if moves[0].shape != moves[1].shape or moves[0].ndim != 1:
            raise ValueError("seats and actions must be 1-d arrays of one entry per recorded move")
        replay_moves(float(eps), *moves, ok, loglik, engine.arrays.head(n), engine.generators, player.arrays,
                     player.agent.rng, work)

    return replay
