"""Switch, batched: `SwitchBatch`, many games stepped in one call by numba kernels over array state.

The rules engine (`cardlab.envs.switch.rules`) stays the definition of the
rules; this module replays them for a batch of B games at once, and the
differential tests (`tests/envs/test_switch_batched.py`) check it against the
engine step by step: legal sets, `state_dict`, observations, rewards, ends.
Everything runs in the kernels (`cardlab.envs.switch.kernels`), the deals
(A3) and refills (A10) too, from each slot's own generator (C2); `step` reads
legality from the last `legal_mask()` when nothing moved since.

API: `cardlab.envs.batched_engine`; the arrays (`info` columns, `seats` rows,
`hands`, `piles`, `played`) and the speed: docs/envs.md, "Each engine's
arrays". The kernels take them as one `SwitchArrays`
(`cardlab.envs.switch.batch_state`), the generators beside it.
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.batched_engine import BatchedEngine, MatchState, seat_indices
from cardlab.envs.batched_kernels import load_generator, slot_generators
from cardlab.envs.match import Match
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.batch_state import (
    CURRENT,
    DEALER,
    DIRECTION,
    DISCARD,
    DISCARD_LEN,
    DRAWN,
    DREW_ON,
    FIRST_OUT,
    HAND_POINTS,
    HANDS_PLAYED,
    MATCH_OVER,
    OVER,
    PARAM_SLOTS,
    PENDING,
    PHASE,
    SCORE_CHANGES,
    SCORES,
    SIZES,
    STOCK,
    STOCK_LEN,
    SUIT,
    TRUNCATED,
    TURN,
    WINNER,
    new_arrays,
)
from cardlab.envs.switch.kernels import legal_mask_kernel, observe_kernel, reset_kernel, step_kernel
from cardlab.envs.switch.observer import SwitchObserver
from cardlab.envs.switch.rules import SwitchRules, SwitchState


# ---------------------------------------------------------------- the batch
class SwitchBatch(BatchedEngine):
    """B games of Switch with the state in arrays (layout in the module doc)."""

    STATE_ARRAYS: ClassVar[tuple[str, ...]] = ("info", "seats", "hands", "piles", "played")
    PICKED: ClassVar[dict[str, int]] = {"first_out": FIRST_OUT}
    """the `info` column of each attribute a determinization picks (`Determinization.picks`)"""
    RULES: ClassVar[ModuleType] = R

    RULES_CLASS: ClassVar[type] = SwitchRules
    OBSERVER: ClassVar[type] = SwitchObserver
    PARAM_SLOTS: ClassVar[dict[str, int]] = PARAM_SLOTS
    """the kernels' parameters by name (`cardlab.envs.switch.batch_state`)"""
    OPTIONS_ELSEWHERE: ClassVar[dict[str, str]] = {
        "num_decks": "deck", "extra_jokers": "deck", "extra_twos": "deck", "memory": "obs_size"}
    """Rule options the kernels do not read (they are not in `PARAM_SLOTS`), each with the batch
    attribute it determines: the deck options make the pack the deals shuffle, `memory` adds the
    observation field drew_on."""

    def __init__(self, rules: SwitchRules, batch_size: int | np.integer, seed: int | None = None,
                 episode: str = "hand") -> None:
        super().__init__(rules, batch_size, seed, episode)
        self.deck = rules.deck()
        self.deck_size = rules.deck_size()
        B = self.batch_size
        self.arrays = new_arrays(rules, B, episode, self.observer)
        """the state, constants and tables every kernel takes (the compiled play-out too), by name; the names
        below are its arrays"""
        self.kernel_arrays = tuple(self.arrays)
        """`arrays` as the kernels take it (`batch_state.KernelArrays`)"""
        a = self.arrays
        self.info, self.seats, self.hands, self.piles = a.info, a.seats, a.hands, a.piles
        self.played, self.params = a.played, a.params
        self.generators = slot_generators(self.generators)  # the kernels draw from them
        # The last legal mask (`arrays.known`), and whether it is still the mask of the state (nothing moved
        # since).
        self._known_rows = np.ones(B, dtype=np.bool_)
        """the slots the last `legal_mask` worked out"""
        self._known_fresh = False
        self.reset()

    # ------------------------------------------------------------ dealing and loading
    def reset(self, slots: Any = None) -> None:
        """Start a new match in `slots` (all when None): totals 0, dealer n-1, a shuffled deal."""
        reset_kernel(self._slots(slots), self.kernel_arrays, self.generators)
        self._known_fresh = False

    def load(self, slot: int, state: SwitchState) -> None:
        """Copy an engine state (a stacked deal, a restored saved state) and its generator into `slot`."""
        b = self._check_slot(slot)
        if not isinstance(state, SwitchState):
            raise ValueError(f"load takes a SwitchState, got {type(state).__name__}")
        if state.rules != self.rules:
            raise ValueError(f"the state's rules {state.rules} differ from the batch's {self.rules}")
        self.hands[b] = np.asarray(state.hands)
        self.played[b] = state.played_counts
        self.piles[b] = 0
        self.piles[b, STOCK, : len(state.stock)] = state.stock
        self.piles[b, DISCARD, : len(state.discard)] = state.discard
        self.seats[b, SIZES] = state.sizes
        self.seats[b, SCORES] = state.match.scores
        self.seats[b, HAND_POINTS] = state.hand_points
        self.seats[b, SCORE_CHANGES] = state.score_changes
        self.seats[b, DREW_ON] = state.drew_on
        none = -1
        values = {
            CURRENT: state.current, DIRECTION: state.direction,
            SUIT: none if state.current_suit is None else state.current_suit, PENDING: state.pending,
            PHASE: state.phase, DRAWN: state.drawn,
            FIRST_OUT: none if state.first_out is None else state.first_out,
            TURN: state.turn, OVER: state.hand_over, TRUNCATED: state.truncated,
            WINNER: none if state.winner is None else state.winner, MATCH_OVER: state.match_over,
            DEALER: state.match.dealer, HANDS_PLAYED: state.match.hands_played,
            STOCK_LEN: len(state.stock), DISCARD_LEN: len(state.discard),
        }
        for column, value in values.items():
            self.info[b, column] = int(value)
        load_generator(self.generators, b, state.rng)
        self._known_fresh = False

    def _deal_worlds(self, known: Any, worlds: Any, flat: np.ndarray, world: np.ndarray) -> None:
        hidden = worlds.hidden[world]
        spans, pile = known.spans
        for s, start, stop in spans:
            self.hands[flat, s] = 0
            np.add.at(self.hands, (flat[:, None], s, hidden[:, start:stop]), 1)  # a kind can come twice
        self.piles[flat, STOCK, : pile.stop - pile.start] = hidden[:, pile][:, ::-1]  # the next card last
        self.piles[flat, DISCARD, : worlds.under.shape[1]] = worlds.under[world]
        for name, chosen in worlds.picks.items():
            if name not in self.PICKED:
                raise ValueError(f"Switch worlds pick only {sorted(self.PICKED)}, got {name!r}")
            self.info[flat, self.PICKED[name]] = np.asarray(known.picks[name])[chosen[world]]
        self._known_fresh = False

    def to_state(self, slot: int) -> SwitchState:
        """Slot `slot` as an engine state (with a copy of its generator): for the AEC env, advice, saving."""
        b = self._check_slot(slot)
        return self._engine_view(b, copy.deepcopy(self.generators[b]))

    def state_dict(self, slot: int) -> dict[str, Any]:
        """Slot `slot` in the engine's `state_dict()` format (written by the engine itself)."""
        b = self._check_slot(slot)
        return self._engine_view(b, self.generators[b]).state_dict()

    def _engine_view(self, b: int, rng: np.random.Generator) -> SwitchState:
        n, info = self.n, self.info[b]
        state = SwitchState.__new__(SwitchState)
        state.rules, state.n, state.deck, state.rng = self.rules, n, self.deck, rng
        state._reset_hand()
        hands = [C.counts_to_cards(self.hands[b, s].tolist()) for s in range(n)]
        stock = self.piles[b, STOCK, : info[STOCK_LEN]].tolist()
        state._set_cards(hands, stock[::-1], self.piles[b, DISCARD, : info[DISCARD_LEN]].tolist())
        state.current, state.direction = int(info[CURRENT]), int(info[DIRECTION])
        state.pending = int(info[PENDING])
        state.current_suit = None if info[SUIT] < 0 else int(info[SUIT])
        state.phase, state.drawn = int(info[PHASE]), int(info[DRAWN])
        state.first_out = None if info[FIRST_OUT] < 0 else int(info[FIRST_OUT])
        state.drew_on = self.seats[b, DREW_ON].tolist()
        state.turn, state.hand_over = int(info[TURN]), bool(info[OVER])
        state.truncated = bool(info[TRUNCATED])
        state.winner = None if info[WINNER] < 0 else int(info[WINNER])
        state.hand_points = self.seats[b, HAND_POINTS].tolist()
        state.score_changes = self.seats[b, SCORE_CHANGES].tolist()
        state.match_over = bool(info[MATCH_OVER])
        # Switch keeps no win streaks (B12 is Huit's): they stay 0.
        state.match = Match(n, self.seats[b, SCORES].tolist(), int(info[DEALER]), [0] * n,
                            int(info[HANDS_PLAYED]))
        return state

    # ------------------------------------------------------------ queries
    def current_player(self) -> np.ndarray:
        return self.info[:, CURRENT].copy()

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self.info[:, OVER], self.info[:, TRUNCATED]

    def score_changes(self) -> np.ndarray:
        """(B, n) int64: each seat's score change in the slot's last finished hand (as the engine's)."""
        return self.seats[:, SCORE_CHANGES].astype(np.int64)

    def match_state(self) -> MatchState:
        """`BatchedEngine.match_state`: the `SCORES` row, `DEALER`, `HANDS_PLAYED` columns; no streaks."""
        totals = self.seats[:, SCORES].astype(np.int64)
        return totals, self.info[:, DEALER].copy(), np.zeros_like(totals), self.info[:, HANDS_PLAYED].copy()

    def legal_mask(self, rows: np.ndarray | None = None) -> np.ndarray:
        """(B, NUM_ACTIONS) bool, the legal actions of the seat to move; of the slots `rows` only when
        given. `step` reads them back (`arrays.known`) while nothing moved, for the slots they cover."""
        idx = self._rows(rows)
        known = self.arrays.known
        if rows is None:
            legal_mask_kernel(idx, self.kernel_arrays, known)
            self._known_rows[:] = True
            self._known_fresh = True
            return known.copy()  # a copy: step() checks actions against `known`
        out = np.empty((idx.size, R.NUM_ACTIONS), dtype=np.bool_)
        legal_mask_kernel(idx, self.kernel_arrays, out)
        known[idx] = out
        self._known_rows[:] = False
        self._known_rows[idx] = True
        self._known_fresh = True
        return out

    def observe(self, seats: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        idx = self._rows(rows)
        who = seat_indices(seats, idx.size, self.n)
        out = np.empty((idx.size, self.obs_size), dtype=np.float32)
        observe_kernel(idx, who, self.kernel_arrays, out)
        return out

    # ------------------------------------------------------------ moves
    def _apply(self, acts: np.ndarray) -> np.ndarray:
        # The last mask holds for this step if it covers every slot that moves (the held ones are over).
        known = self._known_fresh and bool((self._known_rows | (self.info[:, OVER] != 0)).all())
        status = step_kernel(acts, self.kernel_arrays, self.generators, known)
        self._known_fresh = status >= 0  # refused: nothing moved, the mask still holds
        if status >= 0:
            self._refuse(int(status), int(acts[status]))
        return self.arrays.rewards.copy()

    def moved(self) -> None:
        """Slots moved outside `step` (a compiled play-out over these arrays,
        `cardlab.envs.switch.fast.playout`): the last `legal_mask` no longer holds."""
        self._known_fresh = False
