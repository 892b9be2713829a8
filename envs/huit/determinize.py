"""Huit américain determinization: what one seat's observation fixes of a `HuitState`, the rest sampled.

The shared method and choices are in `cardlab.envs.world_sampling`. From the
observation (`cardlab.envs.huit.observer`) come exactly: the seat's hand, the
table's cards and its top card, the suit, the announced / Ace-penalty /
after-draw flags, every hand size, the bank's size, the match totals and the
B12 streaks, and with the option `memory` the other seats' `drew_on` (the
seat's own is not observed: 0). The hands are dealt without regard to
`drew_on`. Not observed, and chosen: the bank's order and the other hands
(dealt at random from the unseen cards: neither in the hand nor on the table;
cards an earlier refill took from the table are among them), the table's
order under the top card, and the fields the shared module lists.

The public record (`cardlab.envs.record`) proves nothing certain about the
hands: B9 allows a draw with a legal play in hand and a pass after it with the
drawn card (or any other) playable, and B7's 2-card penalty may be drawn with
Aces or 8s in hand. A Huit draw or pass is evidence (a belief can weigh it),
never proof, so no world is ruled out.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

from cardlab.envs import world_sampling as D
from cardlab.envs.huit.observer import DECK_IDS, NUM_CARDS, make_layout
from cardlab.envs.huit.rules import AFTER_DRAW, PLAY, HuitRules, HuitState
from cardlab.envs.layout import Layout
from cardlab.envs.record import Record

_ONES = np.ones(NUM_CARDS, dtype=np.float64)


@functools.cache
def _layout(rules: HuitRules) -> Layout:
    return make_layout(rules)


def determinize(rules: HuitRules, observation: Mapping[str, np.ndarray], seat: int = 0,
                record: Record | None = None) -> D.Determinization:
    """What the observation dict fixes of a state with `seat` to move; its `sample(rng)` deals the rest.

    `record` (the hand's public record) changes nothing: no Huit move proves what a hand holds (see
    the module doc). A `ValueError` says why an observation fits no state of `rules`.
    """
    parts = _layout(rules).split(np.asarray(observation["observation"]))
    hand = D.kind_counts(parts["hand"], _ONES, DECK_IDS, "hand")
    table = D.kind_counts(parts["played"], _ONES, DECK_IDS, "played")
    top_index = D.one_hot(parts["top"], "top")
    top = None if top_index is None else int(DECK_IDS[top_index])
    return D.Determinization(
        state=HuitState, rules=rules, seat=seat, own=D.cards(hand).tolist(),
        sizes=D.absolute([int(hand.sum()), *(D.whole(v, 8, "opponents") for v in parts["opponents"])], seat),
        pile=D.whole(parts["bank"][0], NUM_CARDS, "bank"), unseen=D.unseen(rules.deck(), hand, table),
        under=D.under_top(table, top), top=top,
        match=D.observed_match(parts["scores"], rules.target_score, parts["streaks"], rules.streak_length,
                               seat),
        fields={"current_suit": D.one_hot(parts["suit"], "suit"), "announced": bool(parts["announced"][0]),
                "ace_penalty": bool(parts["ace_penalty"][0]),
                "phase": AFTER_DRAW if parts["after_draw"][0] else PLAY,
                "drew_on": D.observed_memory(parts.get("drew_on"), rules.num_players, seat)},
    )
