"""Huit américain determinization: a `HuitState` sampled to agree with one seat's observation.

The shared method and choices are in `cardlab.envs.determinize`. From the
observation (`cardlab.envs.huit.observer`) come exactly: the seat's hand, the
table's cards and its top card, the suit, the announced / Ace-penalty /
after-draw flags, every hand size, the bank's size, the match totals and the
B12 streaks. Not observed, and chosen: the bank's order and the other hands
(dealt at random from the unseen cards: neither in the hand nor on the table;
cards an earlier refill took from the table are among them), the table's
order under the top card, and the fields the shared module lists.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

from cardlab.envs import determinize as D
from cardlab.envs.huit.observer import DECK_IDS, NUM_CARDS, make_layout
from cardlab.envs.huit.rules import AFTER_DRAW, PLAY, HuitRules, HuitState
from cardlab.envs.layout import Layout

_ONES = np.ones(NUM_CARDS, dtype=np.float64)


@functools.cache
def _layout(rules: HuitRules) -> Layout:
    return make_layout(rules)


def determinize(rules: HuitRules, observation: Mapping[str, np.ndarray], rng: np.random.Generator,
                seat: int = 0) -> HuitState:
    """A state, `seat` to move, whose observation for `seat` is `observation["observation"]` exactly.

    The unseen cards are dealt from `rng` (see the module doc); a `ValueError`
    says why an observation fits no state of `rules`.
    """
    parts = _layout(rules).split(np.asarray(observation["observation"]))
    hand = D.kind_counts(parts["hand"], _ONES, DECK_IDS, "hand")
    table = D.kind_counts(parts["played"], _ONES, DECK_IDS, "played")
    top_index = D.one_hot(parts["top"], "top")
    sizes = D.absolute([int(hand.sum()), *(D.whole(v, 8, "opponents") for v in parts["opponents"])], seat)
    hands, bank = D.deal_unseen(D.unseen(rules.deck(), hand, table), sizes, seat,
                                D.whole(parts["bank"][0], NUM_CARDS, "bank"), rng)
    hands[seat] = np.repeat(np.arange(hand.size), hand).tolist()
    if top_index is None:
        if table.any():
            raise D.unfit("cards are on the table but no top card is shown")
        played: list[int] = []
    else:
        played = D.played_pile(table, int(DECK_IDS[top_index]), rng)
    match = D.observed_match(parts["scores"], rules.target_score, parts["streaks"], rules.streak_length, seat)
    state: HuitState = HuitState.assembled(rules, D.own_generator(rng), hands, bank, played, match, seat)
    state.current_suit = D.one_hot(parts["suit"], "suit")
    state.announced = bool(parts["announced"][0])
    state.ace_penalty = bool(parts["ace_penalty"][0])
    state.phase = AFTER_DRAW if parts["after_draw"][0] else PLAY
    return state
