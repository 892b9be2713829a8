"""What a Switch record proves about the hidden hands: the voids of forced draws (A8), as slots.

A8: a player who can lay a card must (unless `voluntary_draw`), so a draw
of one's own accord (not a run, A6) proves that the drawer held no card it
could lay then: none of the kinds `playable_kinds` gives for the top card and
the suit to follow. Cards drawn later may be of those kinds; cards laid later
leave the proof standing. The drawn card itself is known to be playable when
the drawer kept the turn to choose (`offered`), and not when the turn ended
at once (with `play_after_draw`).

`slots_from_record` follows each seat's cards through the record as groups
("slots", `cardlab.envs.hand_constraints`): the cards dealt, each draw, and what each
proof rules out for every group held at that moment. A laid card leaves the
group with the fewest allowed kinds that allows it, which keeps the most
worlds open (the groups are nested or disjoint). The result fits every world
that agrees with the record. `drawn_kinds` reads the same record draw by
draw for a replay (`cardlab.envs.world_replay`). Not used: with `voluntary_draw` a
draw proves nothing; the drawn card's playability is left out (it would break
the nesting); an incomplete record gives no slots; penalty draws (A6) prove
nothing (a run may be drawn with 2s in hand).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.hand_constraints import Slot
from cardlab.envs.record import DEAL, DRAW, LAY, STARTER, Record
from cardlab.envs.switch.rules import WILD, SwitchRules

_KINDS = np.arange(C.NUM_KINDS)
_SUITS = np.array([C.suit_of(c) for c in range(C.NUM_KINDS)])
_RANKS = np.array([C.rank_of(c) for c in range(C.NUM_KINDS)])
_WILD = np.array(WILD)
_ALL = np.ones(C.NUM_KINDS, dtype=bool)


def playable_kinds(rules: SwitchRules, top: int, suit: int | None) -> np.ndarray:
    """(NUM_KINDS,) bool: the kinds A5 lets a player lay on `top` with `suit` to follow (None: free)."""
    if suit is None:
        return _ALL.copy()
    out = _WILD | (suit == _SUITS)
    if rules.match_rank and top != C.JOKER:
        out |= C.rank_of(top) == _RANKS
    return out


def slots_from_record(rules: SwitchRules, record: Record, sizes: Sequence[int], skip: int) -> list[Slot]:
    """The slots of every seat but `skip` (seats as the record numbers them; `sizes` in the same numbering).

    A `ValueError` when the record does not lead to `sizes` or contradicts itself.
    """
    if not record.complete or rules.voluntary_draw:
        return []
    groups: list[list[list]] = [[] for _ in sizes]  # per seat: [count, allowed] of each group held
    top: int | None = None
    for event in record.events:
        held = groups[event.seat] if 0 <= event.seat < len(sizes) else []
        if event.kind == DEAL:
            held.append([event.number, _ALL.copy()])
        elif event.kind == STARTER:
            top = event.cards[-1]
        elif event.kind == LAY:
            for card in event.cards:
                _take(held, card, event.seat)
            top = event.cards[-1]
        elif event.kind == DRAW and event.penalty:
            held.append([event.number, _ALL.copy()])
        elif event.kind == DRAW:
            if top is None:
                raise ValueError("the record has a draw before any card is turned up (A3)")
            playable = playable_kinds(rules, top, None if event.suit == C.NO_SUIT else event.suit)
            for group in held:
                group[1] &= ~playable
            if event.number:
                known = playable if event.offered else ~playable if rules.play_after_draw else _ALL
                held.append([event.number, known.copy()])
    slots: list[Slot] = []
    for seat, held in enumerate(groups):
        total = sum(count for count, _ in held)
        if total != sizes[seat]:
            raise ValueError(f"the record leaves seat {seat} {total} cards but it holds {sizes[seat]}: "
                             "the record does not fit the observation")
        if seat != skip:
            slots.extend(Slot(seat, size, allowed) for size, allowed in held if size and not allowed.all())
    return slots


def drawn_kinds(rules: SwitchRules, record: Record) -> tuple[tuple[np.ndarray | None, ...],
                                                               tuple[np.ndarray | None, ...]]:
    """Per event of `record`: the kinds the card of a one-card draw of the seat's accord may be, and the
    kinds the drawer held none of as it drew (A8); None for other events and where nothing is known.

    Kept the turn (`offered`) and then laid a card: that card; kept it and
    passed: a playable kind; the turn ended at once (with `play_after_draw`):
    an unplayable one. Without `voluntary_draw` the drawer held no playable kind.
    """
    out: list[np.ndarray | None] = [None] * len(record.events)
    voids: list[np.ndarray | None] = [None] * len(record.events)
    top: int | None = None
    for i, event in enumerate(record.events):
        if event.kind in (STARTER, LAY):
            top = event.cards[-1]
        if event.kind != DRAW or event.penalty or event.number != 1 or top is None:
            continue
        playable = playable_kinds(rules, top, None if event.suit == C.NO_SUIT else event.suit)
        if not rules.voluntary_draw:
            voids[i] = playable
        after = record.events[i + 1] if i + 1 < len(record.events) else None
        if event.offered and after is not None and after.kind == LAY and after.seat == event.seat:
            out[i] = np.asarray(after.cards[0] == _KINDS)
        elif event.offered:
            out[i] = playable
        elif rules.play_after_draw:
            out[i] = ~playable
    return tuple(out), tuple(voids)


def _take(held: list[list], card: int, seat: int) -> None:
    """A laid card leaves the held group with the fewest allowed kinds that allows it."""
    able = [g for g in held if g[0] and g[1][card]]
    if not able:
        raise ValueError(f"the record has seat {seat} lay {C.card_str(card)}, which no card it can hold "
                         "may be: the record contradicts itself")
    min(able, key=lambda g: int(g[1].sum()))[0] -= 1
