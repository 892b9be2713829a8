"""A batched engine for any game, built on its rules engine: B engine states stepped in a Python loop.

`GameSpec.batched_engine()` gives it to a game that has no batched engine of
its own (`GameSpec.batched` None), so everything written against the batched
API (the lean trainer, self-play, benchmarks) runs every registered game; a
game's own numba engine is the fast path, this one the always-there one. Same
API as `cardlab.envs.batched_engine` documents, same games as the AEC env with
`reward="win"`: slot i plays what `spec.state(rules, generators[i])` plays.

Arrays: `info` (B, 2) int8 with the columns `OVER` (the hand, or the match,
is over) and `TRUNCATED` (C1), mirrored from the states after each step;
`states` the B engine states; `generators` their generators.
"""

from __future__ import annotations

import copy
import functools
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from cardlab.envs.batched_engine import BatchedEngine, MatchState, seat_indices
from cardlab.envs.match import win_rewards

if TYPE_CHECKING:
    from cardlab.envs.game_spec import GameSpec

OVER, TRUNCATED = range(2)


class GenericBatch(BatchedEngine):
    """B games of one registered game as B rules-engine states (a subclass per game sets `SPEC`)."""

    SPEC: ClassVar[GameSpec]

    def __init__(self, rules: Any, batch_size: int | np.integer, seed: int | None = None,
                 episode: str = "hand") -> None:
        super().__init__(rules, batch_size, seed, episode)
        self.info = np.zeros((self.batch_size, 2), dtype=np.int8)
        self.states: list[Any] = [None] * self.batch_size
        self.reset()

    def reset(self, slots: Any = None) -> None:
        """A new match in each slot (dealer n-1, totals 0), dealt from the slot's own generator."""
        for b in self._slots(slots):
            self.states[b] = self.SPEC.state(self.rules, self.generators[b])
            self.info[b] = 0

    def load(self, slot: int, state: Any) -> None:
        """Put a copy of an engine state (its generator copied) into `slot`."""
        b = self._check_slot(slot)
        if not issubclass(type(state), self.SPEC.state) or state.rules != self.rules:
            raise ValueError(f"load() takes a {self.SPEC.state.__name__} with the batch's rules")
        self.states[b] = copy.deepcopy(state)
        self.generators[b] = self.states[b].rng
        self._mirror(b)

    def to_state(self, slot: int) -> Any:
        """A copy of the slot's engine state, its generator copied."""
        return copy.deepcopy(self.states[self._check_slot(slot)])

    def state_dict(self, slot: int) -> dict[str, Any]:
        return dict(self.states[self._check_slot(slot)].state_dict())

    def current_player(self) -> np.ndarray:
        return np.array([s.current for s in self.states], dtype=np.int64)

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self.info[:, OVER], self.info[:, TRUNCATED]

    def score_changes(self) -> np.ndarray:
        return np.array([s.score_changes for s in self.states], dtype=np.int64)

    def match_state(self) -> MatchState:
        matches = [s.match for s in self.states]
        return (np.array([m.scores for m in matches], dtype=np.int64),
                np.array([m.dealer for m in matches], dtype=np.int64),
                np.array([m.streaks for m in matches], dtype=np.int64),
                np.array([m.hands_played for m in matches], dtype=np.int64))

    def legal_mask(self, rows: np.ndarray | None = None) -> np.ndarray:
        idx = self._rows(rows)
        out = np.zeros((idx.size, self.num_actions), dtype=np.bool_)
        for i, b in enumerate(idx):
            if not self.info[b, OVER]:
                out[i, self.states[b].legal_actions()] = True
        return out

    def observe(self, seats: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        idx = self._rows(rows)
        who = seat_indices(seats, idx.size, self.n)
        out = np.empty((idx.size, self.obs_size), dtype=np.float32)
        for i, b in enumerate(idx):
            out[i] = self.observer.observe(self.states[b], int(who[i]))
        return out

    def load_worlds(self, known: Any, worlds: Any, slots: Any) -> None:
        """Each world built as a state (`Determinization.world`) and loaded into its row's slots, which
        keep their generators: the slow way, as everything here."""
        for w, row in enumerate(self._world_grid(slots, worlds.count)):
            for slot in row:
                self.load(int(slot), known.world(worlds, w, self.generators[slot]))

    def _apply(self, actions: np.ndarray) -> np.ndarray:
        live = np.flatnonzero(self.info[:, OVER] == 0)
        for b in live:  # every action checked before any slot moves
            if int(actions[b]) not in self.states[b].legal_actions():
                self._refuse(int(b), int(actions[b]))
        rewards = np.zeros((self.batch_size, self.n), dtype=np.float32)
        for b in live:
            state = self.states[b]
            state.apply(int(actions[b]))
            if state.hand_over and not state.truncated:
                if self.episode == "hand":
                    rewards[b] = win_rewards(self.n, [state.winner])
                elif state.match_over:
                    rewards[b] = win_rewards(self.n, state.match.winners())
                else:  # the match goes on: the dealer moves on and deals the next hand
                    state.next_hand()
            self._mirror(int(b))
        return rewards

    def _mirror(self, b: int) -> None:
        state = self.states[b]
        self.info[b] = (state.hand_over, state.truncated)


@functools.cache
def generic_batch(spec: GameSpec) -> type[BatchedEngine]:
    """The generic batched engine class of a game (one class per spec, made on first use)."""
    actions = SimpleNamespace(NUM_ACTIONS=spec.num_actions, action_to_str=spec.action_to_str)
    return type(f"{spec.id.title()}GenericBatch", (GenericBatch,), {
        "SPEC": spec, "RULES": actions, "RULES_CLASS": spec.rules, "OBSERVER": spec.observer,
        "__doc__": f"B games of {spec.title} on its rules engine (see `cardlab.envs.generic_batch`).",
    })
