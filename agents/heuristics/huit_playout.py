"""A compiled heuristic playing every seat but one of a `HuitBatch` up to that seat's turn, in one call.

Why: a Gymnasium vector env's heuristic opponents (`cardlab.training.vector`)
otherwise cost a Python round per opponent move (observe every game, mask,
`act_batch`, step), about seven rounds per learner step at 2 players. Here the
rounds run inside numba, calling the heuristic's own kernel
(`huit_kernels.greedy_batch`, `huit_kernels.expert_batch`,
`batch_kernels.uniform_legal`) on the rows whose seat to move is not the
learner's, in slot order, with the agent's generator: so each round picks
what `act_batch` picks on those rows, and the games are the ones the
round-by-round play gives (`tests/training/test_vector_fused.py`).

```python
play = fused_play_out(engine, agent)       # None: no compiled play-out for that engine and agent
ended = play(seats, gained, counted)       # as `BatchedEngine.play_random`, with the agent's moves
```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from cardlab.agents.base import Agent, RandomAgent
from cardlab.agents.batch_kernels import uniform_legal
from cardlab.agents.heuristics.huit import AGAIN, HuitExpert, HuitGreedy
from cardlab.agents.heuristics.huit_arrays import TABLES_ARRAYS
from cardlab.agents.heuristics.huit_kernels import TableArrays, expert_batch, greedy_batch
from cardlab.envs.checked_json import excerpt
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.kernels import CUR, HAND_OVER, mask_rows_kernel, observe_rows, step_kernel

RANDOM, GREEDY, EXPERT = range(3)
"""The compiled players (`kind`), by the kernel they call."""
PlayOut = Callable[[np.ndarray, np.ndarray, np.ndarray], bool]
"""(seats (B,), gained (B,) float64, counted (B,) bool) -> whether some episode ended"""


@njit(cache=True)
def _rounds(kind: int, who: np.ndarray, earner: np.ndarray, active: np.ndarray, gained: np.ndarray,
            counted: np.ndarray, info: np.ndarray,
            seats: np.ndarray, hands: np.ndarray, bank: np.ndarray, table: np.ndarray, gens: Any,
            params: np.ndarray, reward_table: np.ndarray, obs_offsets: np.ndarray, obs_scales: np.ndarray,
            mask: np.ndarray, obs: np.ndarray, hand_at: int, offsets: np.ndarray, num_players: int,
            again: int, int_table: np.ndarray, float_table: np.ndarray, tables: TableArrays,
            rng: np.random.Generator) -> bool:
    """The rounds of `BatchedEngine.play_random`, the movers' actions from the `kind` kernel on their rows.

    Only the `active` slots move; `who[b]` -1 holds no seat (slot b plays to its episode's end), and
    `gained[b]` adds seat `earner[b]`'s rewards. `mask` (B, num_actions) and `obs` (B, obs_size) are
    scratch arrays: the movers' masks and observations are packed into their first rows.
    """
    batch = who.shape[0]
    waiting = np.zeros(batch, dtype=np.bool_)
    held = np.zeros(batch, dtype=np.bool_)
    rows = np.empty(batch, dtype=np.int64)
    choosers = np.empty(batch, dtype=np.int64)
    actions = np.zeros(batch, dtype=np.int64)
    rewards = np.zeros((batch, reward_table.shape[0] - 1), dtype=np.float32)
    ended = False
    while True:
        count = 0
        for b in range(batch):
            live = info[b, HAND_OVER] == 0
            waiting[b] = live and active[b] and info[b, CUR] != who[b]
            held[b] = live and not waiting[b]
            if waiting[b]:
                rows[count] = b
                count += 1
            if held[b]:
                info[b, HAND_OVER] = 1  # held while the others move
        if count == 0:
            for b in range(batch):
                if held[b]:
                    info[b, HAND_OVER] = 0
            return ended
        movers = rows[:count]
        masks = mask[:count]
        mask_rows_kernel(info, hands, table, movers, masks)
        actions[:] = 0
        if kind == RANDOM:
            picked = uniform_legal(masks, rng)
            for i in range(count):
                actions[movers[i]] = picked[i]
        else:  # only the movers with a choice are observed and asked (the kernels draw nothing for one move)
            chosen = 0
            for i in range(count):
                legal = -1
                for a in range(masks.shape[1]):
                    if masks[i, a]:
                        legal = a if legal == -1 else -2
                        if legal == -2:
                            break
                if legal >= 0:
                    actions[movers[i]] = legal
                else:
                    masks[chosen] = masks[i]
                    choosers[chosen] = movers[i]
                    chosen += 1
            if chosen:
                seen = obs[:chosen]
                asked = choosers[:chosen]
                observe_rows(info, seats, hands, bank, table, asked, obs_offsets, obs_scales, seen)
                if kind == GREEDY:
                    picked = greedy_batch(seen, mask[:chosen], hand_at, tables, rng)
                else:
                    picked = expert_batch(seen, mask[:chosen], offsets, num_players, again, int_table,
                                          float_table, tables, rng)
                for i in range(chosen):
                    actions[asked[i]] = picked[i]
        step_kernel(actions, info, seats, hands, bank, table, gens, params, reward_table, rewards)
        for b in range(batch):
            if held[b]:
                info[b, HAND_OVER] = 0
            elif waiting[b]:
                if counted[b]:
                    gained[b] += rewards[b, earner[b]]
                ended |= info[b, HAND_OVER] != 0


Rounds = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], bool]
"""(who, earner, active, gained, counted) -> whether some episode ended: `_rounds` on one engine's arrays"""
ToEnd = Callable[[np.ndarray, int, np.ndarray], None]
"""(active (B,) bool, seat, gained (B,) float64): the active slots played to their episode's end (the
slots after the last active one are not looked at)"""


def _compiled_rounds(engine: Any, agent: Agent) -> Rounds | None:
    """`_rounds` bound to `engine`'s arrays and `agent`'s kernel and generator, or None if not compiled.

    Compiled: a `HuitBatch` with `RandomAgent`, `HuitGreedy` or `HuitExpert` of the same rules.
    """
    if not isinstance(engine, HuitBatch) or agent.game.rules != engine.rules:
        return None
    kind = {RandomAgent: RANDOM, HuitGreedy: GREEDY, HuitExpert: EXPERT}.get(type(agent))
    if kind is None:
        return None
    none = np.zeros(0, dtype=np.int64)
    hand_at = engine.layout.slices["hand"].start
    offsets, num_players, tables = none, engine.n, (none, np.zeros(0, dtype=np.float64))
    if isinstance(agent, HuitExpert):
        offsets, tables = agent.offsets, agent.arrays
    mask = np.empty((engine.batch_size, engine.num_actions), dtype=np.bool_)
    obs = np.empty((engine.batch_size, engine.obs_size), dtype=np.float32)

    def rounds(who: np.ndarray, earner: np.ndarray, active: np.ndarray, gained: np.ndarray,
               counted: np.ndarray) -> bool:
        n = who.shape[0]  # the first n slots (views: a few slots of a large engine cost what they hold)
        return bool(_rounds(kind, who, earner, active, gained, counted, engine.info[:n], engine.seats[:n],
                            engine.hands[:n], engine.bank[:n], engine.table[:n], engine.generators,
                            engine.params, engine.reward_table, engine.obs_offsets, engine.obs_scales, mask,
                            obs, hand_at, offsets, num_players, AGAIN, tables[0], tables[1], TABLES_ARRAYS,
                            agent.rng))

    return rounds


def fused_play_out(engine: Any, agent: Agent) -> PlayOut | None:
    """`agent` playing every seat but `seats[b]` of `engine` in one compiled call, or None if not compiled.

    Compiled: a `HuitBatch` with `RandomAgent`, `HuitGreedy` or `HuitExpert`
    of the same rules. The call takes and checks what `play_random` takes
    (without its generator: the agent's draws its moves) and plays as it does.
    """
    rounds = _compiled_rounds(engine, agent)
    if rounds is None:
        return None
    every = np.ones(engine.batch_size, dtype=np.bool_)

    def play(seats: np.ndarray, gained: np.ndarray, counted: np.ndarray) -> bool:
        who, gained, flags = engine.checked_play_args(seats, gained, counted)
        return rounds(who, who, every, gained, flags)

    return play


def fused_to_end(engine: Any, agent: Agent) -> ToEnd | None:
    """`agent` playing every seat of the `active` slots of `engine` to their episode's end in one compiled
    call (a search's rollouts), `gained` adding `seat`'s rewards; None where not compiled (as
    `fused_play_out`). The moves are those `act_batch` round by round picks on the movers' rows."""
    rounds = _compiled_rounds(engine, agent)
    if rounds is None:
        return None
    nobody = np.full(engine.batch_size, -1, dtype=np.int64)
    counted = np.ones(engine.batch_size, dtype=np.bool_)
    earner = np.zeros(engine.batch_size, dtype=np.int64)

    def play(active: np.ndarray, seat: int, gained: np.ndarray) -> None:
        if active.shape != (engine.batch_size,) or active.dtype != np.bool_:
            raise ValueError(f"active must be a ({engine.batch_size},) bool array")
        if gained.shape != (engine.batch_size,) or gained.dtype != np.float64:
            raise ValueError(f"gained must be a ({engine.batch_size},) float64 array (added to in place)")
        if not 0 <= seat < engine.n:
            raise ValueError(f"seat must be a seat index 0..{engine.n - 1}, got {excerpt(seat)}")
        n = int(np.flatnonzero(active)[-1]) + 1 if active.any() else 0  # up to the last active slot
        earner[:n] = seat
        rounds(nobody[:n], earner[:n], active[:n], gained[:n], counted[:n])

    return play
