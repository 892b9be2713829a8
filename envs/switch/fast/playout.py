"""A compiled heuristic playing every seat of a `SwitchBatch` to the hand's end, in one call.

Why: a search's rollouts (`cardlab.agents.rollouts`) otherwise cost a Python
round per engine step (mask, observe, `act_batch`, step), so a Switch search
finished a few dozen worlds in its 60 ms where Huit's compiled play-out
(`cardlab.envs.huit.fast.playout`) finishes hundreds. Here the rounds run inside numba: the
engine's kernels (`cardlab.envs.switch.kernels`: `legal_mask_kernel`,
`observe_kernel`, `step_kernel`) and the heuristic's own
(`heuristics.kernels.greedy_batch`, `heuristics.kernels.expert_batch`,
`policy_kernels.uniform_legal`) on the movers with a choice, in slot order,
with the agent's generator: so each round picks what the agent's `act_batch`
picks on those rows, and the games are those the stepped rollouts play
(`tests/agents/test_switch_playout.py`).

```python
play = fused_to_end(engine, agent.compiled())   # None: no compiled play-out for them
play(n, seat, gained)           # the first n slots to the hand's end, gained += seat's rewards
```
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from cardlab.envs.fast import EXPERT, GREEDY, RANDOM, CompiledPolicy, ToEnd
from cardlab.envs.playout import checked_slots, compiled_kind, live_rows, scratch, split_forced
from cardlab.envs.policy_kernels import uniform_legal
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.heuristics.kernels import expert_batch, greedy_batch, layout_offsets
from cardlab.envs.switch.kernels import (
    ACTION_TABLE,
    CARD_TABLE,
    CURRENT,
    OVER,
    PLAY_TABLE,
    legal_mask_kernel,
    observe_kernel,
    step_kernel,
)

NO_WEIGHTS = np.zeros(0, dtype=np.float64)
"""the weights of a player that reads none (typed as the expert's)"""


class CompiledPlayer(NamedTuple):
    """What `play_to_end` needs of one policy: its kernel (`kind`), that kernel's layout offsets and deck
    (`SwitchHeuristic`'s), the table's size and rank matching, and the policy, whose agent's generator and
    weights are read at each call (`Agent.seed` replaces the one, a caller may set the others), so the
    moves are those `act_batch` gives."""

    kind: int
    offsets: np.ndarray
    deck: np.ndarray
    num_players: int
    match_rank: bool
    policy: CompiledPolicy

    def weights(self) -> np.ndarray:
        """The expert's weights as its `act_batch` reads them now (none for the others)."""
        return self.policy.params()[2] if self.kind == EXPERT else NO_WEIGHTS


def compiled_player(engine: Any, policy: CompiledPolicy) -> CompiledPlayer | None:
    """`policy` as `play_to_end` plays it on `engine`, or None if it has no compiled kernel there.

    Compiled: a `SwitchBatch` with a policy of the same rules (`playout.compiled_kind`); a heuristic's
    `params()` are its (offsets, deck) and the expert's then its weights array, as
    `SwitchGreedy` and `SwitchExpert` hold them; `random` reads none.
    """
    kind = compiled_kind(engine, policy, SwitchBatch)
    if kind is None:
        return None
    if kind == RANDOM:
        offsets, deck = layout_offsets(engine.layout), np.asarray(engine.rules.deck(), dtype=np.int64)
    else:
        offsets, deck = policy.params()[:2]
    return CompiledPlayer(kind, offsets, deck, engine.n, bool(engine.rules.match_rank), policy)


@njit(cache=True)
def play_to_end(kind: int, seat: int, gained: np.ndarray, info: np.ndarray, seats: np.ndarray,
                hands: np.ndarray, piles: np.ndarray, played: np.ndarray, gens: Any, params: np.ndarray,
                reward_table: np.ndarray, pack: np.ndarray, rewards: np.ndarray, obs_offsets: np.ndarray,
                inv_copies: np.ndarray, floats: np.ndarray, at: np.ndarray, deck: np.ndarray,
                num_players: int, match_rank: bool, weights: np.ndarray, rng: np.random.Generator,
                cards: np.ndarray, actions_table: np.ndarray, play_table: np.ndarray, mask: np.ndarray,
                obs: np.ndarray, actions: np.ndarray, rows: np.ndarray, choosers: np.ndarray,
                known: np.ndarray, who: np.ndarray) -> None:
    """Every live slot of `info` moved round by round until its hand ends, each round's movers (every
    live slot, in slot order) with one legal move playing it and the others the `kind` kernel's pick,
    observed by their seat to move; `gained[b]` adds seat `seat`'s rewards.

    The arguments: the engine's state and kernel arrays (as `SwitchBatch` holds them), the fields of a
    `CompiledPlayer`, the kernels' tables, then scratch: `mask`, `obs`, `rows`, `choosers`, `who` packed
    by mover, `actions` and `known` (the movers' masks, which the step reads back) by slot.
    """
    while True:
        count = live_rows(info, OVER, rows)
        if count == 0:
            return
        movers = rows[:count]
        legal_mask_kernel(movers, info, seats, hands, piles, params, cards, play_table, mask[:count])
        for i in range(count):
            known[movers[i]] = mask[i]
        chosen = split_forced(movers, mask[:count], actions, choosers)
        if chosen:
            asked, masks = choosers[:chosen], mask[:chosen]
            if kind == RANDOM:
                picked = uniform_legal(masks, rng)
            else:
                seen = obs[:chosen]
                for i in range(chosen):
                    who[i] = info[asked[i], CURRENT]
                observe_kernel(asked, who[:chosen], info, seats, hands, piles, played, params, obs_offsets,
                               inv_copies, floats, seen)
                if kind == GREEDY:
                    picked = greedy_batch(seen, masks, at, deck, num_players, cards, actions_table, rng)
                else:
                    picked = expert_batch(seen, masks, at, deck, num_players, match_rank, weights, cards,
                                          actions_table, rng)
            for i in range(chosen):
                actions[asked[i]] = picked[i]
        if step_kernel(actions, known, True, info, seats, hands, piles, played, gens, params, reward_table,
                       cards, actions_table, play_table, pack, rewards) >= 0:
            raise RuntimeError("a compiled player chose an illegal move")
        for i in range(count):
            gained[movers[i]] += rewards[movers[i], seat]


def fused_to_end(engine: Any, policy: CompiledPolicy) -> ToEnd | None:
    """`policy` playing every seat of the first n slots of `engine` to the hand's end in one compiled call
    (a search's rollouts), or None where not compiled (`compiled_player`)."""
    player = compiled_player(engine, policy)
    if player is None:
        return None
    work = scratch(engine)
    B = engine.batch_size
    choosers, who = np.zeros(B, dtype=np.int64), np.zeros(B, dtype=np.int64)
    known = np.zeros((B, engine.num_actions), dtype=np.bool_)
    rewards = np.zeros((B, engine.n), dtype=np.float32)

    def play(slots: int, seat: int, gained: np.ndarray) -> None:
        n = checked_slots(engine, slots, seat, gained)  # views of the first n slots: they cost what they hold
        e = engine
        play_to_end(player.kind, seat, gained[:n], e.info[:n], e.seats[:n], e.hands[:n], e.piles[:n],
                    e.played[:n], e.generators, e.params, e.reward_table, e.pack, rewards[:n], e.obs_offsets,
                    e.obs_inv_copies, e.obs_floats, player.offsets, player.deck, player.num_players,
                    player.match_rank, player.weights(), player.policy.player.rng, CARD_TABLE, ACTION_TABLE,
                    PLAY_TABLE, work.mask, work.obs, work.actions[:n], work.rows, choosers, known[:n], who)
        e.moved()

    return play
