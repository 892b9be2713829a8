"""Switch observations: one flat float32 vector from the acting seat's point of view.

The layout (fields, sizes, meanings) is written once, in `make_layout`
below; `cardlab rules switch --markdown` and the docs print it from there.
It depends on the rule options (`num_players`, and `memory`, which adds the
field `drew_on` at the end), not only on `OBSERVATION_VERSION`.
Card kinds are the 52 suited cards then the Joker (`cardlab.envs.cards`).
"""

from __future__ import annotations

import numpy as np

from cardlab.envs import cards as C
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
from cardlab.envs.switch.rules import AFTER_DRAW, DECLARE_START, SwitchRules, SwitchState

OBSERVATION_VERSION = 1
_KINDS = np.arange(C.NUM_KINDS)


def make_layout(rules: SwitchRules) -> Layout:
    n, size = rules.num_players, rules.deck_size()
    deck = rules.deck()
    most_pending = 2 * sum(deck[C.make_card(C.TWO, s)] for s in range(C.NUM_SUITS)) + 5 * deck[C.JOKER]
    return Layout([
        Field("hand", C.NUM_KINDS, 0, 1, "my cards: copies held / copies in the deck, per kind"),
        Field("top", C.NUM_KINDS, 0, 1, "one-hot top card of the discard pile"),
        Field("suit", C.NUM_SUITS, 0, 1, "one-hot current suit (all zero while the suit is free, A4)"),
        Field("pending", 1, 0, most_pending / 10, "pending draw of the run (A6) / 10"),
        Field("direction", 1, 0, 1, "1 when play goes to seat + 1, 0 when reversed (A7)"),
        Field("phase", 2, 0, 1,
              "the player to move: [0] has drawn a playable card (A8), [1] declares a suit (A4)"),
        Field("opponents", n - 1, 0, size / 10, "hand sizes / 10 of seats me+1, me+2, ..."),
        Field("scores", n, -10, 10, "totals / target_score (clipped to -10..10), me first, then seat order"),
        Field("played", C.NUM_KINDS, 0, 1, "cards in the discard pile: copies / copies in the deck"),
        Field("stock", 1, 0, 1, "cards in the stock / deck size"),
        *memory_fields(rules.memory, n, "A8, not the draw of a 2/Joker run"),
    ])


class SwitchObserver:
    """Builds observation vectors for one set of rules."""

    def __init__(self, rules: SwitchRules) -> None:
        self.rules = rules
        self.layout = make_layout(rules)
        self.hidden_layout = hidden_layout(rules.num_players, C.NUM_KINDS)
        self.state_layout = state_layout(self.layout, self.hidden_layout, rules.num_players, C.NUM_KINDS)
        deck = np.array(rules.deck(), dtype=np.float32)
        self._inv_copies = np.divide(1.0, deck, out=np.zeros_like(deck), where=deck > 0)
        self._inv_deck = 1.0 / rules.deck_size()
        s = self.layout.slices
        self._hand, self._played = s["hand"], s["played"]
        self._top0, self._suit0 = s["top"].start, s["suit"].start
        self._flags = self.layout.span("pending", "phase")
        self._seats = self.layout.span("opponents", "scores")
        self._stock = s["stock"].start
        self._drew_on = s.get("drew_on")
        self._inv_target = 1.0 / rules.target_score
        self._scores_low = float(self.layout.low[s["scores"].start])
        self._scores_high = float(self.layout.high[s["scores"].start])

    def observe(self, state: SwitchState, seat: int) -> np.ndarray:
        obs = np.zeros(self.layout.size, dtype=np.float32)
        obs[self._hand] = state.hands[seat] * self._inv_copies
        obs[self._top0 + state.discard[-1]] = 1.0
        if state.current_suit is not None:
            obs[self._suit0 + state.current_suit] = 1.0
        phase = state.phase
        obs[self._flags] = (
            state.pending / 10, state.direction > 0, phase == AFTER_DRAW, phase == DECLARE_START
        )
        sizes = rotated(state.sizes, seat)
        # Scores are clipped to the field's bounds: a small target_score or stacked totals could exceed them.
        obs[self._seats] = [v / 10 for v in sizes[1:]] + clipped(
            rotated(state.match.scores, seat), self._inv_target, self._scores_low, self._scores_high
        )
        obs[self._played] = state.played_counts * self._inv_copies
        obs[self._stock] = len(state.stock) * self._inv_deck
        fill_memory(obs, self._drew_on, state.drew_on, seat)
        return obs

    def observe_hidden(self, state: SwitchState, seat: int) -> np.ndarray:
        """What `seat` cannot see (`hidden_layout`): for a training critic only, never for an agent."""
        return fill_hidden(self.hidden_layout, state.hands, seat, state.stock, _KINDS, self._inv_copies)

    def observe_state(self, state: SwitchState) -> np.ndarray:
        """The whole table from seat 0 (`state_layout`): for critics and analysis, never for an agent."""
        mover = None if state.hand_over else state.current
        return fill_state(self.state_layout, self.observe(state, 0), self.observe_hidden(state, 0), mover,
                          state.stock, _KINDS, self._inv_copies)
