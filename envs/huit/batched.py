"""Huit américain, batched: `HuitBatch`, many games stepped in one call (API: `cardlab.envs.batched_engine`).

The rules engine `cardlab.envs.huit.rules` stays the definition of the rules:
this module plays the same games (same legal sets, next states, observations,
rewards and ends of hands, checked step by step by
`tests/envs/test_huit_batched.py`) at a speed the one-game engine cannot reach
in Python. Why numba kernels over array state rather than vectorised numpy: a
step branches (B4-B8 filters, B5's order of a group, B10 refills, B8 skips,
the end of a hand) and numpy pays a full pass over the batch per branch
(docs/envs.md, "Batched engines", with the figures).

The arrays (`info` columns, `seats` rows, `hands`, `bank`, `table`, one
generator per slot, C2) are laid out in docs/envs.md, "Each engine's arrays".
The kernels are in `cardlab.envs.huit.kernels`; they take the arrays and the
batch's constants as one `HuitArrays` (`cardlab.envs.huit.batch_state`), the
generators beside it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from cardlab.envs.batched_engine import BatchedEngine, MatchState, seat_indices
from cardlab.envs.batched_kernels import load_generator, slot_generators
from cardlab.envs.hand import HandState
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.batch_rounds import random_rounds
from cardlab.envs.huit.batch_state import (
    ACE_PENALTY,
    ANNOUNCED,
    BANK_LEN,
    CUR,
    DEALER,
    DREW_ON,
    HAND_OVER,
    HAND_POINTS,
    HANDS_PLAYED,
    MATCH_OVER,
    PARAM_SLOTS,
    PHASE,
    SCORE_CHANGES,
    SCORES,
    SIZES,
    STREAKS,
    SUIT,
    TABLE_LEN,
    TRUNCATED,
    TURN,
    WINNER,
    new_arrays,
)
from cardlab.envs.huit.kernels import (
    NUM_ACTIONS,
    mask_kernel,
    mask_rows_kernel,
    observe_kernel,
    reset_kernel,
    step_kernel,
)
from cardlab.envs.huit.observer import DECK_IDS, LOCAL_INDEX, HuitObserver
from cardlab.envs.huit.rules import HuitRules, HuitState
from cardlab.envs.match import Match
from cardlab.envs.rng import rng_from_state, rng_state


# ---------------------------------------------------------------- the batch
class HuitBatch(BatchedEngine):
    """B games of Huit américain in arrays (see the module doc for the layout and the API)."""

    STATE_ARRAYS: ClassVar[tuple[str, ...]] = ("info", "seats", "hands", "bank", "table")
    RULES: ClassVar[ModuleType] = R
    RULES_CLASS: ClassVar[type] = HuitRules
    OBSERVER: ClassVar[type] = HuitObserver
    PARAM_SLOTS: ClassVar[dict[str, int]] = PARAM_SLOTS
    """the kernels' parameters by name (`cardlab.envs.huit.batch_state`)"""
    OPTIONS_ELSEWHERE: ClassVar[dict[str, str]] = {"memory": "obs_size"}
    """Rule options the kernels do not read (they are not in `PARAM_SLOTS`), each with the batch
    attribute it determines: `memory` adds the observation field drew_on."""

    def __init__(self, rules: HuitRules, batch_size: int | np.integer, seed: int | None = None,
                 episode: str = "hand") -> None:
        super().__init__(rules, batch_size, seed, episode)
        B = self.batch_size
        self.arrays = new_arrays(rules, B, episode, self.layout)
        """the state and constants every kernel takes (compiled play-outs too), by name; the names below
        are its arrays"""
        self.kernel_arrays = tuple(self.arrays)
        """`arrays` as the kernels take it (`batch_state.KernelArrays`)"""
        a = self.arrays
        self.info, self.seats, self.hands, self.bank, self.table = a.info, a.seats, a.hands, a.bank, a.table
        self.params = a.params
        self.generators = slot_generators(self.generators)  # the kernels draw from them
        self._play_legal = np.empty(NUM_ACTIONS, dtype=np.int64)  # play_random's scratch arrays
        self._play_actions = np.zeros(B, dtype=np.int64)
        self._play_rows = np.zeros(B, dtype=np.int64)
        self._play_flags = np.zeros((2, B), dtype=np.bool_)
        self.reset()

    # ------------------------------------------------------------ episodes
    def reset(self, slots: Any = None) -> None:
        """A new episode in `slots` (all by default), each dealt from the slot's own generator."""
        reset_kernel(self._slots(slots), self.kernel_arrays, self.generators)

    def load(self, slot: int, state: HuitState) -> None:
        """Put an engine state (stacked deal, restored saved state) into `slot`, its generator copied."""
        b = self._check_slot(slot)
        if not isinstance(state, HuitState) or state.rules != self.rules:
            raise ValueError("load() takes a HuitState with the batch's rules")
        row, seat = self.info[b], self.seats[b]
        row[CUR] = state.current
        row[SUIT] = -1 if state.current_suit is None else state.current_suit
        row[ANNOUNCED], row[ACE_PENALTY], row[PHASE] = state.announced, state.ace_penalty, state.phase
        row[TURN], row[BANK_LEN], row[TABLE_LEN] = state.turn, len(state.bank), len(state.table)
        row[HAND_OVER], row[TRUNCATED], row[MATCH_OVER] = state.hand_over, state.truncated, state.match_over
        row[WINNER] = -1 if state.winner is None else state.winner
        row[DEALER], row[HANDS_PLAYED] = state.match.dealer, state.match.hands_played
        seat[SIZES], seat[SCORES], seat[STREAKS] = state.sizes, state.match.scores, state.match.streaks
        seat[HAND_POINTS], seat[SCORE_CHANGES] = state.hand_points, state.score_changes
        seat[DREW_ON] = state.drew_on
        self.hands[b] = np.stack([h[DECK_IDS] for h in state.hands])
        self.bank[b, : len(state.bank)] = LOCAL_INDEX[state.bank]
        self.table[b, : len(state.table)] = LOCAL_INDEX[state.table]
        load_generator(self.generators, b, state.rng)

    def _deal_worlds(self, known: Any, worlds: Any, flat: np.ndarray, world: np.ndarray) -> None:
        if worlds.picks:
            raise ValueError(f"Huit worlds pick no unobserved attributes, got {sorted(worlds.picks)}")
        hidden = LOCAL_INDEX[worlds.hidden[world]]
        spans, pile = known.spans
        for s, start, stop in spans:
            self.hands[flat, s] = 0
            self.hands[flat[:, None], s, hidden[:, start:stop]] = 1
        self.bank[flat, : pile.stop - pile.start] = hidden[:, pile][:, ::-1]  # the next card last
        self.table[flat, : worlds.under.shape[1]] = LOCAL_INDEX[worlds.under[world]]

    def to_state(self, slot: int) -> HuitState:
        """The engine state of a slot (its generator copied): what `load` takes."""
        b = self._check_slot(slot)
        row, seat = self.info[b], self.seats[b]
        state = HuitState.__new__(HuitState)
        state.rules, state.n, state.deck = self.rules, self.n, self.rules.deck()
        state._start_record(False)  # the batched engine keeps no record (`cardlab.envs.record`)
        state.rng = rng_from_state(rng_state(self.generators[b]))
        hands = [DECK_IDS[np.flatnonzero(h)].tolist() for h in self.hands[b]]
        bank = DECK_IDS[self.bank[b, : row[BANK_LEN]]].tolist()
        HandState._set_cards(state, hands, bank[::-1], DECK_IDS[self.table[b, : row[TABLE_LEN]]].tolist())
        state.current = int(row[CUR])
        state.current_suit = None if row[SUIT] < 0 else int(row[SUIT])
        state.announced, state.ace_penalty = bool(row[ANNOUNCED]), bool(row[ACE_PENALTY])
        state.phase = int(row[PHASE])
        state.drew_on = seat[DREW_ON].tolist()
        state.match = Match(self.n, seat[SCORES].tolist(), int(row[DEALER]), seat[STREAKS].tolist(),
                            int(row[HANDS_PLAYED]))
        state.turn, state.hand_over = int(row[TURN]), bool(row[HAND_OVER])
        state.truncated = bool(row[TRUNCATED])
        state.winner = None if row[WINNER] < 0 else int(row[WINNER])
        state.hand_points, state.score_changes = seat[HAND_POINTS].tolist(), seat[SCORE_CHANGES].tolist()
        state.match_over = bool(row[MATCH_OVER])
        return state

    # ------------------------------------------------------------ queries
    def current_player(self) -> np.ndarray:
        """(B,) int64: the seat to move in each slot."""
        return self.info[:, CUR].copy()

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self.info[:, HAND_OVER], self.info[:, TRUNCATED]

    def score_changes(self) -> np.ndarray:
        """(B, n) int64: each seat's score change in the slot's last finished hand (as the engine's)."""
        return self.seats[:, SCORE_CHANGES].copy()

    def match_state(self) -> MatchState:
        """`BatchedEngine.match_state`: the `SCORES`, `STREAKS` rows, `DEALER`, `HANDS_PLAYED` columns."""
        return (self.seats[:, SCORES].copy(), self.info[:, DEALER].copy(), self.seats[:, STREAKS].copy(),
                self.info[:, HANDS_PLAYED].copy())

    def legal_mask(self, rows: np.ndarray | None = None) -> np.ndarray:
        """(B, NUM_ACTIONS) bool: the legal actions of the seat to move (none in finished slots); of the
        slots `rows` only, one row each, when given."""
        if rows is None:
            out = np.empty((self.batch_size, NUM_ACTIONS), dtype=np.bool_)
            mask_kernel(self.kernel_arrays, out)
            return out
        idx = self._rows(rows)
        out = np.empty((idx.size, NUM_ACTIONS), dtype=np.bool_)
        mask_rows_kernel(idx, self.kernel_arrays, out)
        return out

    def observe(self, seats: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """(B, obs_size) float32: `HuitObserver.observe` of seats[b] in each slot b; of seats[i] in slot
        rows[i] when `rows` is given."""
        idx = self._rows(rows)
        who = seat_indices(seats, idx.size, self.n)
        out = np.empty((idx.size, self.obs_size), dtype=np.float32)
        observe_kernel(idx, who, self.kernel_arrays, out)
        return out

    # ------------------------------------------------------------ moves
    def play_random(self, seats: np.ndarray, rng: np.random.Generator, gained: np.ndarray,
                    counted: np.ndarray) -> bool:
        """`BatchedEngine.play_random` in one compiled call: the same moves, from the same draws."""
        who, gained, flags = self.checked_play_args(seats, gained, counted)
        return bool(random_rounds(who, rng, gained, flags, self.kernel_arrays, self.generators,
                                  self._play_legal, self._play_actions, self._play_flags[0],
                                  self._play_flags[1], self._play_rows))

    def _apply(self, actions: np.ndarray) -> np.ndarray:
        bad = step_kernel(actions, self.kernel_arrays, self.generators)
        if bad >= 0:
            self._refuse(int(bad), int(actions[bad]))
        return self.arrays.rewards.copy()
