"""Huit américain observations: one flat float32 vector from the acting seat's point of view.

Layout (n = number of players; the 32 cards in the order of `DECK_CARDS`:
7S 7H 7D 7C 8S ... AC):

| field         | size | meaning                                                     |
|---------------|------|-------------------------------------------------------------|
| `hand`        | 32   | 1 for each card I hold                                      |
| `top`         | 32   | one-hot top card of the table (all zero on an empty table, B4) |
| `suit`        | 4    | one-hot current suit: the top card's, or the announced one   |
| `announced`   | 1    | 1 when the suit was announced by 8s (B6)                    |
| `ace_penalty` | 1    | 1 when I face a fresh Ace: lay A/8 or draw 2 (B7)           |
| `after_draw`  | 1    | 1 when I have drawn this turn: lay or pass (B9)             |
| `opponents`   | n-1  | hand sizes / 8 of seats me+1, me+2, ... (seat order)        |
| `scores`      | n    | match totals / target_score (clipped to -10..10), me first, then seat order |
| `streaks`     | n    | current win streaks / streak_length (B12), same order        |
| `played`      | 32   | 1 for each card on the table                                |
| `bank`        | 1    | cards in the bank / 32                                      |
"""

from __future__ import annotations

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.huit.rules import AFTER_DRAW, DECK_CARDS, HuitRules, HuitState
from cardlab.envs.layout import Field, Layout

OBSERVATION_VERSION = 1
NUM_CARDS = len(DECK_CARDS)
# Position of each global card id in the 32-card order (-1 outside the deck).
LOCAL_INDEX = np.full(C.NUM_KINDS, -1, dtype=np.int64)
LOCAL_INDEX[list(DECK_CARDS)] = np.arange(NUM_CARDS)
DECK_IDS = np.array(DECK_CARDS, dtype=np.int64)


def make_layout(rules: HuitRules) -> Layout:
    n = rules.num_players
    return Layout([
        Field("hand", NUM_CARDS, 0, 1, "1 for each card I hold"),
        Field("top", NUM_CARDS, 0, 1, "one-hot top card of the table (all zero on an empty table, B4)"),
        Field("suit", C.NUM_SUITS, 0, 1, "one-hot current suit: the top card's or the announced one"),
        Field("announced", 1, 0, 1, "1 when the suit was announced by 8s (B6)"),
        Field("ace_penalty", 1, 0, 1, "1 when I face a fresh Ace: lay A/8 or draw 2 (B7)"),
        Field("after_draw", 1, 0, 1, "1 when I have drawn this turn: lay or pass (B9)"),
        Field("opponents", n - 1, 0, NUM_CARDS / 8, "hand sizes / 8 of seats me+1, me+2, ..."),
        Field("scores", n, -10, 10, "totals / target_score (clipped to -10..10), me first, then seat order"),
        Field("streaks", n, 0, 1, "current win streaks / streak_length (B12), same order"),
        Field("played", NUM_CARDS, 0, 1, "1 for each card on the table"),
        Field("bank", 1, 0, 1, "cards in the bank / 32"),
    ])


class HuitObserver:
    """Builds observation vectors for one set of rules."""

    def __init__(self, rules: HuitRules) -> None:
        self.rules = rules
        self.layout = make_layout(rules)
        s = self.layout.slices
        self._hand, self._played = s["hand"], s["played"]
        self._top0, self._suit0 = s["top"].start, s["suit"].start
        self._announced, self._ace, self._drawn = s["announced"].start, s["ace_penalty"].start, s["after_draw"].start
        self._opp, self._scores, self._streaks = s["opponents"], s["scores"], s["streaks"]
        self._bank = s["bank"].start
        self._scores_low = float(self.layout.low[self._scores.start])
        self._scores_high = float(self.layout.high[self._scores.start])

    def observe(self, state: HuitState, seat: int) -> np.ndarray:
        obs = np.zeros(self.layout.size, dtype=np.float32)
        n = state.n
        obs[self._hand] = state.hands[seat][DECK_IDS]
        if state.table:
            obs[self._top0 + LOCAL_INDEX[state.table[-1]]] = 1.0
            obs[self._played.start + LOCAL_INDEX[state.table]] = 1.0
        if state.current_suit is not None:
            obs[self._suit0 + state.current_suit] = 1.0
        obs[self._announced] = state.announced
        obs[self._ace] = state.ace_penalty
        obs[self._drawn] = state.phase == AFTER_DRAW
        order = [(seat + k) % n for k in range(n)]
        obs[self._opp] = [state.sizes[s] / 8 for s in order[1:]]
        scores = [state.match.scores[s] / self.rules.target_score for s in order]
        obs[self._scores] = np.clip(scores, self._scores_low, self._scores_high)
        obs[self._streaks] = [state.match.streaks[s] / self.rules.streak_length for s in order]
        obs[self._bank] = len(state.bank) / NUM_CARDS
        return obs
