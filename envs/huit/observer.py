"""Huit américain observations: one flat float32 vector from the acting seat's point of view.

The layout (fields, sizes, meanings) is written once, in `make_layout`
below; `cardlab rules huit --markdown` and the docs print it from there. It
depends on the rule options (the seat fields on `num_players`, the last field
`drew_on` on `memory`) under one `OBSERVATION_VERSION`: with `memory` false
the vector is the one it always was.
"""

from __future__ import annotations

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.huit.rules import AFTER_DRAW, DECK_CARDS, HuitRules, HuitState
from cardlab.envs.layout import (
    Field,
    Layout,
    clipped,
    fill_hidden,
    fill_memory,
    fill_state,
    hidden_layout,
    memory_fields,
    rotated,
    state_layout,
)

OBSERVATION_VERSION = 1
NUM_CARDS = len(DECK_CARDS)
# Position of each global card id in the 32-card order (-1 outside the deck).
LOCAL_INDEX = np.full(C.NUM_KINDS, -1, dtype=np.int64)
LOCAL_INDEX[list(DECK_CARDS)] = np.arange(NUM_CARDS)
DECK_IDS = np.array(DECK_CARDS, dtype=np.int64)
_ONES = np.ones(C.NUM_KINDS, dtype=np.float32)


def make_layout(rules: HuitRules) -> Layout:
    n = rules.num_players
    return Layout([
        Field("hand", NUM_CARDS, 0, 1, "1 for each card I hold"),
        Field("top", NUM_CARDS, 0, 1, "one-hot top card of the table (all zero on an empty table, B4)"),
        Field("suit", C.NUM_SUITS, 0, 1, "one-hot current suit: the top card's or the announced one"),
        Field("announced", 1, 0, 1, "1 when the suit was announced by 8s (B6)"),
        Field("ace_penalty", 1, 0, 1, "1 when the player to move faces a fresh Ace: lay A/8 or draw 2 (B7)"),
        Field("after_draw", 1, 0, 1, "1 when the player to move has drawn this turn: lay or pass (B9)"),
        Field("opponents", n - 1, 0, NUM_CARDS / 8, "hand sizes / 8 of seats me+1, me+2, ..."),
        Field("scores", n, -10, 10, "totals / target_score (clipped to -10..10), me first, then seat order"),
        Field("streaks", n, 0, 1, "current win streaks / streak_length (B12), same order"),
        Field("played", NUM_CARDS, 0, 1, "1 for each card on the table"),
        Field("bank", 1, 0, 1, "cards in the bank / 32"),
        *memory_fields(rules.memory, n, "B9, not B7's penalty"),
    ])


class HuitObserver:
    """Builds observation vectors for one set of rules."""

    def __init__(self, rules: HuitRules) -> None:
        self.rules = rules
        self.layout = make_layout(rules)
        self.hidden_layout = hidden_layout(rules.num_players, NUM_CARDS)
        self.state_layout = state_layout(self.layout, self.hidden_layout, rules.num_players, NUM_CARDS)
        s = self.layout.slices
        self._hand, self._played = s["hand"], s["played"]
        self._top0, self._suit0, self._bank = s["top"].start, s["suit"].start, s["bank"].start
        self._flags = self.layout.span("announced", "after_draw")
        self._seats = self.layout.span("opponents", "streaks")
        self._drew_on = s.get("drew_on")
        self._inv_target = 1.0 / rules.target_score
        self._inv_streak = 1.0 / rules.streak_length
        self._scores_low = float(self.layout.low[s["scores"].start])
        self._scores_high = float(self.layout.high[s["scores"].start])

    def observe(self, state: HuitState, seat: int) -> np.ndarray:
        obs = np.zeros(self.layout.size, dtype=np.float32)
        obs[self._hand] = state.hands[seat][DECK_IDS]
        obs[self._played] = state.played_counts[DECK_IDS]
        if state.table:
            obs[self._top0 + LOCAL_INDEX[state.table[-1]]] = 1.0
        if state.current_suit is not None:
            obs[self._suit0 + state.current_suit] = 1.0
        obs[self._flags] = (state.announced, state.ace_penalty, state.phase == AFTER_DRAW)
        match = state.match
        sizes = rotated(state.sizes, seat)
        # Scores are clipped to the field's bounds: a small target_score or stacked totals could exceed them.
        obs[self._seats] = (
            [v / 8 for v in sizes[1:]]
            + clipped(rotated(match.scores, seat), self._inv_target, self._scores_low, self._scores_high)
            + [v * self._inv_streak for v in rotated(match.streaks, seat)]
        )
        obs[self._bank] = len(state.bank) / NUM_CARDS
        fill_memory(obs, self._drew_on, state.drew_on, seat)
        return obs

    def observe_hidden(self, state: HuitState, seat: int) -> np.ndarray:
        """What `seat` cannot see (`hidden_layout`): for a training critic only, never for an agent."""
        return fill_hidden(self.hidden_layout, state.hands, seat, state.bank, LOCAL_INDEX, _ONES)

    def observe_state(self, state: HuitState) -> np.ndarray:
        """The whole table from seat 0 (`state_layout`): for critics and analysis, never for an agent."""
        mover = None if state.hand_over else state.current
        return fill_state(self.state_layout, self.observe(state, 0), self.observe_hidden(state, 0), mover,
                          state.bank, LOCAL_INDEX, _ONES)
