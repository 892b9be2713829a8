"""Toy shedding observations: named slices of one flat vector."""

from __future__ import annotations

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.layout import Field, Layout, fill_hidden, fill_state, hidden_layout, rotated, state_layout
from tests.toygame.rules import DECK_CARDS, ToyRules, ToyState

INDEX = np.full(C.NUM_KINDS, -1, dtype=np.int64)
INDEX[list(DECK_CARDS)] = np.arange(len(DECK_CARDS))
IDS = np.array(DECK_CARDS, dtype=np.int64)
ONES = np.ones(C.NUM_KINDS, dtype=np.float32)


class ToyObserver:
    def __init__(self, rules: ToyRules) -> None:
        n, k = rules.num_players, len(DECK_CARDS)
        self.layout = Layout([
            Field("hand", k, 0, 1, "1 for each card I hold"),
            Field("top", k, 0, 1, "one-hot top card"),
            Field("opponents", n - 1, 0, 1, "hand sizes / 12 of seats me+1, ..."),
            Field("stock", 1, 0, 1, "stock size / 12"),
        ])
        self.hidden_layout = hidden_layout(n, k)
        self.state_layout = state_layout(self.layout, self.hidden_layout, n, k)

    def observe(self, state: ToyState, seat: int) -> np.ndarray:
        parts = self.layout.slices
        obs = np.zeros(self.layout.size, dtype=np.float32)
        obs[parts["hand"]] = state.hands[seat][IDS]
        obs[parts["top"].start + INDEX[state.table[-1]]] = 1.0
        obs[parts["opponents"]] = [v / 12 for v in rotated(state.sizes, seat)[1:]]
        obs[parts["stock"]] = len(state.stock) / 12
        return obs

    def observe_hidden(self, state: ToyState, seat: int) -> np.ndarray:
        return fill_hidden(self.hidden_layout, state.hands, seat, state.stock, INDEX, ONES)

    def observe_state(self, state: ToyState) -> np.ndarray:
        mover = None if state.hand_over else state.current
        return fill_state(self.state_layout, self.observe(state, 0), self.observe_hidden(state, 0), mover,
                          state.stock, INDEX, ONES)
