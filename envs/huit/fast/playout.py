"""A compiled heuristic playing every seat but one of a `HuitBatch` up to that seat's turn, in one call.

Why: a Gymnasium vector env's heuristic opponents (`cardlab.training.vector`)
otherwise cost a Python round per opponent move (observe every game, mask,
`act_batch`, step), about seven rounds per learner step at 2 players. Here the
rounds run inside numba, calling the heuristic's own kernel
(`heuristics.kernels.greedy_batch`, `heuristics.kernels.expert_rows`,
`policy_kernels.uniform_legal`) on the rows whose seat to move is not the
learner's, in slot order, with the agent's generator, between the rounds' own
hold and step (`cardlab.envs.huit.rounds`): so each round picks
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
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.heuristics.arrays import TABLES_ARRAYS
from cardlab.envs.huit.heuristics.kernels import AGAIN, TableArrays, expert_rows, greedy_batch
from cardlab.envs.huit.kernels import HAND_OVER, mask_rows_kernel, observe_rows, step_kernel
from cardlab.envs.huit.rounds import finish_round, start_round
from cardlab.envs.playout import NONE, checked_slots, compiled_kind, live_rows, scratch, split_forced
from cardlab.envs.policy_kernels import uniform_legal


class CompiledPlayer(NamedTuple):
    """What `play_rounds` needs of one policy: its kernel (`kind`), the arguments of that kernel (the
    expert's arrays as a working copy of the policy's own, `heuristics.kernels.expert_rows`) and the agent,
    whose generator draws (read at each call: `Agent.seed` replaces it), so the moves are those `act_batch`
    gives."""

    kind: int
    hand_at: int
    offsets: np.ndarray
    num_players: int
    int_table: np.ndarray
    float_table: np.ndarray
    agent: Drawing


@njit(cache=True)
def play_rounds(kind: int, who: np.ndarray, gained: np.ndarray, counted: np.ndarray, info: np.ndarray,
                seats: np.ndarray, hands: np.ndarray, bank: np.ndarray, table: np.ndarray, gens: Any,
                params: np.ndarray, reward_table: np.ndarray, rewards: np.ndarray, obs_offsets: np.ndarray,
                obs_scales: np.ndarray, hand_at: int, offsets: np.ndarray, num_players: int, again: int,
                int_table: np.ndarray, float_table: np.ndarray, tables: TableArrays, rng: np.random.Generator,
                mask: np.ndarray, obs: np.ndarray, actions: np.ndarray, flags: np.ndarray,
                rows: np.ndarray) -> bool:
    """The rounds of `BatchedEngine.play_random` (`huit.rounds`), the movers' actions from the `kind` kernel
    on their rows (the fields of a `CompiledPlayer`, then of a `playout.Scratch`)."""
    ended = False
    while True:
        count = start_round(who, info, flags[0], flags[1], rows)
        if count == 0:
            return ended
        movers = rows[:count]
        masks = mask[:count]
        mask_rows_kernel(movers, info, hands, table, masks)
        if kind == RANDOM:
            picked = uniform_legal(masks, rng)
        else:
            seen = obs[:count]
            observe_rows(movers, info, seats, hands, bank, table, obs_offsets, obs_scales, seen)
            if kind == GREEDY:
                picked = greedy_batch(seen, masks, hand_at, tables, rng)
            else:
                picked = expert_rows(seen, masks, offsets, num_players, again, int_table, float_table,
                                     tables, rng)
        for i in range(count):
            actions[movers[i]] = picked[i]
        ended |= finish_round(actions, who, gained, counted, flags[0], flags[1], info, seats, hands, bank,
                              table, gens, params, reward_table, rewards)


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
    return CompiledPlayer(kind, engine.layout.slices["hand"].start, offsets, engine.n, tables[0], tables[1],
                          policy.player)


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
    rewards = np.zeros((engine.batch_size, engine.n), dtype=np.float32)

    def play(seats: np.ndarray, gained: np.ndarray, counted: np.ndarray) -> bool:
        who, gained, flags = engine.checked_play_args(seats, gained, counted)
        return bool(play_rounds(player.kind, who, gained, flags, engine.info, engine.seats, engine.hands,
                                engine.bank, engine.table, engine.generators, engine.params,
                                engine.reward_table, rewards, engine.obs_offsets, engine.obs_scales,
                                player.hand_at, player.offsets, player.num_players, AGAIN, player.int_table,
                                player.float_table, TABLES_ARRAYS, player.agent.rng, *work))

    return play


@njit(cache=True)
def play_to_end(kind: int, seat: int, gained: np.ndarray, info: np.ndarray, seats: np.ndarray,
                hands: np.ndarray, bank: np.ndarray, table: np.ndarray, gens: Any, params: np.ndarray,
                reward_table: np.ndarray, rewards: np.ndarray, obs_offsets: np.ndarray,
                obs_scales: np.ndarray, hand_at: int, offsets: np.ndarray, num_players: int, again: int,
                int_table: np.ndarray, float_table: np.ndarray, tables: TableArrays,
                rng: np.random.Generator, mask: np.ndarray, obs: np.ndarray, actions: np.ndarray,
                rows: np.ndarray, choosers: np.ndarray) -> None:
    """Every live slot of `info` moved round by round until its episode ends, the movers' picks from the
    `kind` kernel as in `play_rounds` (no seat held: every live slot moves each round); `gained[b]` adds
    seat `seat`'s rewards. Only the movers with a choice are observed and asked (`playout.split_forced`)."""
    while True:
        count = live_rows(info, HAND_OVER, rows)
        if count == 0:
            return
        movers = rows[:count]
        mask_rows_kernel(movers, info, hands, table, mask[:count])
        chosen = split_forced(movers, mask[:count], actions, choosers)
        if chosen:
            asked, masks = choosers[:chosen], mask[:chosen]
            if kind == RANDOM:
                picked = uniform_legal(masks, rng)
            else:
                seen = obs[:chosen]
                observe_rows(asked, info, seats, hands, bank, table, obs_offsets, obs_scales, seen)
                if kind == GREEDY:
                    picked = greedy_batch(seen, masks, hand_at, tables, rng)
                else:
                    picked = expert_rows(seen, masks, offsets, num_players, again, int_table, float_table,
                                         tables, rng)
            for i in range(chosen):
                actions[asked[i]] = picked[i]
        if step_kernel(actions, info, seats, hands, bank, table, gens, params, reward_table, rewards) >= 0:
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
    choosers = np.zeros(engine.batch_size, dtype=np.int64)
    rewards = np.zeros((engine.batch_size, engine.n), dtype=np.float32)

    def play(slots: int, seat: int, gained: np.ndarray) -> None:
        n = checked_slots(engine, slots, seat, gained)  # views of the first n slots: they cost what they hold
        play_to_end(player.kind, seat, gained[:n], engine.info[:n], engine.seats[:n], engine.hands[:n],
                    engine.bank[:n], engine.table[:n], engine.generators, engine.params, engine.reward_table,
                    rewards[:n], engine.obs_offsets, engine.obs_scales, player.hand_at, player.offsets,
                    player.num_players, AGAIN, player.int_table, player.float_table, TABLES_ARRAYS,
                    player.agent.rng, work.mask, work.obs, work.actions[:n], work.rows, choosers)

    return play
