"""Switch determinization: what one seat's observation fixes of a `SwitchState`, the rest sampled.

The shared method and choices are in `cardlab.envs.world_sampling`. From the
observation (`cardlab.envs.switch.observer`) come exactly: the seat's hand, the
discard pile's cards and its top card, the suit (none: free, A4), the pending
run, the direction, the phase, every hand size, the stock's size and the match
totals, with the `memory` option the other seats' `drew_on` (the seat's own is
not in its observation: 0); in phase `after_draw` the drawn card is the one the legal mask lets
the seat play (A8). Not observed, and chosen: the stock's order and the other
hands (dealt at random from the unseen cards), the discard pile's order under
the top card (A10 shuffles it anyway), and during an A9 run with several seats
out, which of them went out first (drawn at random; the run's drawer pays
the same either way), plus the fields the shared module lists. Given the
record, the other hands also avoid what its forced draws rule out (A8).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs import world_sampling as D
from cardlab.envs.hand_constraints import Slot
from cardlab.envs.layout import Layout
from cardlab.envs.record import Record
from cardlab.envs.switch.hand_constraints import drawn_kinds, slots_from_record
from cardlab.envs.switch.observer import make_layout
from cardlab.envs.switch.rules import (
    ACTION_CARD,
    AFTER_DRAW,
    DECLARE_START,
    NO_CARD,
    PASS,
    PLAY,
    SwitchRules,
    SwitchState,
)

_KINDS = np.arange(C.NUM_KINDS)


@functools.cache
def _layout(rules: SwitchRules) -> Layout:
    return make_layout(rules)


def determinize(rules: SwitchRules, observation: Mapping[str, np.ndarray], seat: int = 0,
                record: Record | None = None) -> D.Determinization:
    """What the observation dict fixes of a state with `seat` to move; its `sample(rng)` deals the rest.

    With `record`, the hand's public record as `seat` saw it (`Record.seen_from`), the samples also
    agree with what it proves (`cardlab.envs.switch.hand_constraints`). A `ValueError` says why an observation
    (or a record) fits no state of `rules`.
    """
    parts = _layout(rules).split(np.asarray(observation["observation"]))
    copies = np.asarray(rules.deck(), dtype=np.float64)
    hand = D.kind_counts(parts["hand"], copies, _KINDS, "hand")
    discard = D.kind_counts(parts["played"], copies, _KINDS, "played")
    top = D.one_hot(parts["top"], "top")
    if top is None:
        raise D.unfit("no top card is shown (a Switch discard pile always has one, A3)")
    sizes = D.absolute([int(hand.sum()), *(D.whole(v, 10, "opponents") for v in parts["opponents"])], seat)
    after_draw, declare = parts["phase"]
    phase = AFTER_DRAW if after_draw else DECLARE_START if declare else PLAY
    pending = D.whole(parts["pending"][0], 10, "pending")
    out = [s for s in range(rules.num_players) if not sizes[s]]
    if out and not pending:
        raise D.unfit(f"seat(s) {out} hold no cards, yet no A9 run is pending")
    drawn, voids = _draws(rules, record)
    return D.Determinization(
        state=SwitchState, rules=rules, seat=seat, own=D.cards(hand).tolist(), sizes=sizes,
        pile=D.whole(parts["stock"][0], rules.deck_size(), "stock"),
        unseen=D.unseen(rules.deck(), hand, discard),
        under=D.under_top(discard, top), top=top,
        match=D.observed_match(parts["scores"], rules.target_score, None, 1, seat),
        fields={"current_suit": D.one_hot(parts["suit"], "suit"), "pending": pending,
                "drew_on": D.observed_memory(parts.get("drew_on"), rules.num_players, seat),
                "direction": 1 if parts["direction"][0] else -1, "phase": phase,
                "drawn": _drawn_card(observation) if phase == AFTER_DRAW else NO_CARD},
        picks={"first_out": out} if out else {},
        slots=_slots(rules, record, sizes, seat),
        drawn=drawn, voids=voids,
    )


def _draws(rules: SwitchRules, record: Record | None) -> tuple[tuple[np.ndarray | None, ...],
                                                                 tuple[np.ndarray | None, ...]]:
    """What the record tells of each draw (`drawn_kinds`), as the Determinization's `drawn` and `voids`."""
    if record is None or not record.complete:
        return (), ()
    return drawn_kinds(rules, record)


def _slots(rules: SwitchRules, record: Record | None, sizes: list[int], seat: int) -> tuple[Slot, ...]:
    """The record's slots, its seats (numbered from `seat`) turned back into table seats."""
    if record is None:
        return ()
    try:
        return tuple(slots_from_record(rules, record.seen_from(-seat % rules.num_players, rules.num_players),
                                       sizes, seat))
    except ValueError as err:
        raise D.unfit(str(err)) from None


def _drawn_card(observation: Mapping[str, np.ndarray]) -> int:
    """A8: the card drawn this turn, the one card the legal mask lets the seat play besides passing."""
    legal = np.flatnonzero(np.asarray(observation["action_mask"]))
    cards = {ACTION_CARD[a] for a in legal if a != PASS}
    if len(cards) != 1 or NO_CARD in cards:
        raise D.unfit("in phase after_draw the action mask must allow one drawn card and pass (A8)")
    return int(cards.pop())
