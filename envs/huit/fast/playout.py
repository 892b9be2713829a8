"""A compiled heuristic playing every seat but one of a `HuitBatch` up to that seat's turn, in one call.

Why: a Gymnasium vector env's heuristic opponents (`cardlab.training.arena.vector`)
otherwise cost a Python round per opponent move (observe every game, mask,
`act_batch`, step), about seven rounds per learner step at 2 players. Here the
rounds run inside numba, calling the heuristic's own kernel
(`heuristics.kernels.greedy_batch`, `heuristics.kernels.expert_rows`,
`policy_kernels.uniform_legal`) on the rows whose seat to move is not the
learner's, in slot order, with the agent's generator, between the rounds' own
hold and step (`cardlab.envs.huit.batch_rounds`): so each round picks
what `act_batch` picks on those rows, and the games are the ones the
round-by-round play gives (`tests/training/test_vector_fused.py`).

```python
play = fused_play_out(engine, agent.compiled())   # None: no compiled play-out for that engine and policy
ended = play(seats, gained, counted)               # as `BatchedEngine.play_random`, with the agent's moves
```

A search's rollouts (`cardlab.agents.rollouts`) play every seat to the hand's
end the same way (`fused_to_end`, `play_to_end`): the same picks on the same
rows, without holding any seat.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from cardlab.envs.fast import EXPERT, GREEDY, RANDOM, CompiledPolicy, Drawing, PlayOut, ToEnd
from cardlab.envs.fast_playout import (
    NONE,
    Scratch,
    checked_slots,
    compiled_kind,
    live_rows,
    scratch,
    split_forced,
)
from cardlab.envs.huit.batch_rounds import finish_round, start_round
from cardlab.envs.huit.batch_state import HAND_OVER, S_INFO, S_REWARDS, KernelArrays
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.heuristics.arrays import TABLES_ARRAYS
from cardlab.envs.huit.heuristics.kernels import AGAIN, TableArrays, expert_rows, greedy_batch
from cardlab.envs.huit.kernels import mask_rows_kernel, observe_rows, step_kernel
from cardlab.envs.policy_kernels import uniform_legal


class PlayerArrays(NamedTuple):
    """One compiled policy as the kernels take it: its kernel (`kind`) and that kernel's arguments (the
    expert's arrays as a working copy of the policy's own, `heuristics.kernels.expert_rows`)."""

    kind: int
    hand_at: int
    offsets: np.ndarray
    num_players: int
    again: int
    int_table: np.ndarray
    float_table: np.ndarray
    tables: TableArrays


class CompiledPlayer(NamedTuple):
    """What `play_rounds` needs of one policy: its `PlayerArrays` and the agent, whose generator draws
    (read at each call: `Agent.seed` replaces it), so the moves are those `act_batch` gives."""

    arrays: PlayerArrays
    agent: Drawing


@njit(cache=True)
def heuristic_picks(asked: np.ndarray, masks: np.ndarray, s: KernelArrays, player: PlayerArrays,
                    rng: np.random.Generator, obs: np.ndarray) -> np.ndarray:
    """The `GREEDY` or `EXPERT` kernel's picks for the seats to move in slots `asked`, their mask rows
    `masks`; `obs` is scratch (at least as many rows)."""
    seen = obs[:asked.shape[0]]
    observe_rows(asked, s, seen)
    if player.kind == GREEDY:
        return greedy_batch(seen, masks, player.hand_at, player.tables, rng)
    return expert_rows(seen, masks, player.offsets, player.num_players, player.again, player.int_table,
                       player.float_table, player.tables, rng)


@njit(cache=True)
def play_rounds(who: np.ndarray, gained: np.ndarray, counted: np.ndarray, s: KernelArrays, gens: Any,
                player: PlayerArrays, rng: np.random.Generator, work: Scratch) -> bool:
    """The rounds of `BatchedEngine.play_random` (`huit.rounds`), the movers' actions from the player's
    kernel on their rows."""
    actions, waiting, held = work.actions, work.flags[0], work.flags[1]
    ended = False
    while True:
        count = start_round(who, s[S_INFO], waiting, held, work.rows)
        if count == 0:
            return ended
        movers = work.rows[:count]
        masks = work.mask[:count]
        mask_rows_kernel(movers, s, masks)
        if player.kind == RANDOM:
            picked = uniform_legal(masks, rng)
        else:
            picked = heuristic_picks(movers, masks, s, player, rng, work.obs)
        for i in range(count):
            actions[movers[i]] = picked[i]
        ended |= finish_round(actions, who, gained, counted, waiting, held, s, gens)


def compiled_player(engine: Any, policy: CompiledPolicy) -> CompiledPlayer | None:
    """`policy` as `play_rounds` plays it on `engine`, or None if it has no compiled kernel there.

    Compiled: a `HuitBatch` with a policy of the same rules (`playout.compiled_kind`); the expert's
    `params()` are its (offsets, int table, float table), as `HuitExpert` holds them.
    """
    kind = compiled_kind(engine, policy, HuitBatch)
    if kind is None:
        return None
    offsets, tables = NONE, (NONE, np.zeros(0, dtype=np.float64))
    if kind == EXPERT:
        offsets, ints, floats = policy.params()
        tables = (ints.copy(), floats.copy())
    return CompiledPlayer(PlayerArrays(kind, engine.layout.slices["hand"].start, offsets, engine.n, AGAIN,
                                       tables[0], tables[1], TABLES_ARRAYS), policy.player)


def fused_play_out(engine: Any, policy: CompiledPolicy) -> PlayOut | None:
    """`policy` playing every seat but `seats[b]` of `engine` in one compiled call, or None if not compiled
    (`compiled_player`).

    The call takes and checks what `play_random` takes (without its
    generator: the agent's draws its moves) and plays as it does.
    """
    player = compiled_player(engine, policy)
    if player is None:
        return None
    work = scratch(engine)

    def play(seats: np.ndarray, gained: np.ndarray, counted: np.ndarray) -> bool:
        who, gained, flags = engine.checked_play_args(seats, gained, counted)
        return bool(play_rounds(who, gained, flags, engine.kernel_arrays, engine.generators, player.arrays,
                                player.agent.rng, work))

    return play


@njit(cache=True)
def play_to_end(seat: int, gained: np.ndarray, s: KernelArrays, gens: Any, player: PlayerArrays,
                rng: np.random.Generator, work: Scratch) -> None:
    """Every live slot of `s` moved round by round until its episode ends, the movers' picks from the
    player's kernel as in `play_rounds` (no seat held: every live slot moves each round); `gained[b]` adds
    seat `seat`'s rewards. Only the movers with a choice are observed and asked (`playout.split_forced`)."""
    mask, rows, choosers, actions, rewards = work.mask, work.rows, work.choosers, work.actions, s[S_REWARDS]
    while True:
        count = live_rows(s[S_INFO], np.int64(HAND_OVER), rows)
        if count == 0:
            return
        movers = rows[:count]
        mask_rows_kernel(movers, s, mask[:count])
        chosen = split_forced(movers, mask[:count], actions, choosers)
        if chosen:
            asked, masks = choosers[:chosen], mask[:chosen]
            if player.kind == RANDOM:
                picked = uniform_legal(masks, rng)
            else:
                picked = heuristic_picks(asked, masks, s, player, rng, work.obs)
            for i in range(chosen):
                actions[asked[i]] = picked[i]
        if step_kernel(actions, s, gens) >= 0:
            raise RuntimeError("a compiled player chose an illegal move")
        for i in range(count):
            gained[movers[i]] += rewards[movers[i], seat]


def fused_to_end(engine: Any, policy: CompiledPolicy) -> ToEnd | None:
    """`policy` playing every seat of the first n slots of `engine` to their episode's end in one compiled
    call (a search's rollouts), or None where not compiled (`compiled_player`)."""
    player = compiled_player(engine, policy)
    if player is None:
        return None
    work = scratch(engine)

    def play(slots: int, seat: int, gained: np.ndarray) -> None:
        n = checked_slots(engine, slots, seat, gained)  # views of the first n slots: they cost what they hold
        play_to_end(seat, gained[:n], engine.arrays.head(n), engine.generators, player.arrays,
                    player.agent.rng, work)

    return play
