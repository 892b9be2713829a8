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
from cardlab.envs.fast_playout import Scratch, checked_slots, compiled_kind, live_rows, scratch, split_forced
from cardlab.envs.policy_kernels import uniform_legal
from cardlab.envs.switch.batch_state import (
    CURRENT,
    OVER,
    S_ACTIONS_TABLE,
    S_CARDS,
    S_INFO,
    S_KNOWN,
    S_REWARDS,
    KernelArrays,
)
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.heuristics.kernels import expert_batch, greedy_batch, layout_offsets
from cardlab.envs.switch.kernels import legal_mask_kernel, observe_kernel, step_kernel

NO_WEIGHTS = np.zeros(0, dtype=np.float64)
"""the weights of a player that reads none (typed as the expert's)"""


class PlayerArrays(NamedTuple):
    """One compiled policy as `play_to_end` takes it: its kernel (`kind`) and that kernel's arguments."""

    kind: int
    offsets: np.ndarray
    deck: np.ndarray
    num_players: int
    match_rank: bool
    weights: np.ndarray


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

    def arrays(self) -> PlayerArrays:
        """The player as `play_to_end` takes it now: the expert's weights as its `act_batch` reads them
        (none for the others)."""
        weights = self.policy.params()[2] if self.kind == EXPERT else NO_WEIGHTS
        return PlayerArrays(self.kind, self.offsets, self.deck, self.num_players, self.match_rank, weights)


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
def play_to_end(seat: int, gained: np.ndarray, s: KernelArrays, gens: Any, player: PlayerArrays,
                rng: np.random.Generator, work: Scratch) -> None:
    """Every live slot of `s` moved round by round until its hand ends, each round's movers (every live
    slot, in slot order) with one legal move playing it and the others the player's kernel's pick,
    observed by their seat to move; `gained[b]` adds seat `seat`'s rewards.

    The movers' masks are also written into `s[S_KNOWN]` by slot, which the step reads back.
    """
    info, mask, rows, choosers, who = s[S_INFO], work.mask, work.rows, work.choosers, work.per_chooser
    known, rewards, cards, actions_table = s[S_KNOWN], s[S_REWARDS], s[S_CARDS], s[S_ACTIONS_TABLE]
    actions = work.actions
    while True:
        count = live_rows(info, np.int64(OVER), rows)
        if count == 0:
            return
        movers = rows[:count]
        legal_mask_kernel(movers, s, mask[:count])
        for i in range(count):
            known[movers[i]] = mask[i]
        chosen = split_forced(movers, mask[:count], actions, choosers)
        if chosen:
            asked, masks = choosers[:chosen], mask[:chosen]
            if player.kind == RANDOM:
                picked = uniform_legal(masks, rng)
            else:
                seen = work.obs[:chosen]
                for i in range(chosen):
                    who[i] = info[asked[i], CURRENT]
                observe_kernel(asked, who[:chosen], s, seen)
                if player.kind == GREEDY:
                    picked = greedy_batch(seen, masks, player.offsets, player.deck, player.num_players,
                                          cards, actions_table, rng)
                else:
                    picked = expert_batch(seen, masks, player.offsets, player.deck, player.num_players,
                                          player.match_rank, player.weights, cards, actions_table, rng)
            for i in range(chosen):
                actions[asked[i]] = picked[i]
        if step_kernel(actions, s, gens, np.bool_(True)) >= 0:
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

    def play(slots: int, seat: int, gained: np.ndarray) -> None:
        n = checked_slots(engine, slots, seat, gained)  # views of the first n slots: they cost what they hold
        play_to_end(seat, gained[:n], engine.arrays.head(n), engine.generators, player.arrays(),
                    player.policy.player.rng, work)
        engine.moved()

    return play
