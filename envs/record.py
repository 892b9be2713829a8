"""The public record of a hand: what every seat at the table saw happen since the deal, in order.

The rules engines (`cardlab.envs.hand.HandState` and the games' `rules.py`)
note an `Event` for each thing done in the open: the cards dealt to each seat
(their number), Switch's turned-up starter (A3), each seat's laid cards in the
order laid (Huit's groups, B5, with the suit its 8s announce, B6, or the suit a
Switch Jack declares, A5), the first player's suit call after a Jack starter
(A4), each draw (how many cards, whether it paid a penalty: a Switch run, A6,
or Huit's Ace, B7; for Switch whether the drawn card could be laid at once,
A8, which the table sees as the drawer keeps the turn), passes, and the played
cards turned into a new pile (A10, B10). A drawn card's identity is never in
it: other seats do not see it (it shows when it is laid).

`Record` is immutable: the events and whether they go back to the deal
(`complete`). A state restored from a file saved without a record, a
determinized world, or a batched engine's slot (`to_state`; the batched
engines keep no record) starts with an empty, incomplete one; events after
that are still noted. `Record.seen_from(seat)` numbers the seats from a
viewer, as the observers do (the viewer is 0, then seat order); every seat
sees the same events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from cardlab.envs import cards as C
from cardlab.envs.checked_json import excerpt

# Event kinds.
DEAL, STARTER, LAY, CALL, DRAW, PASS, REFILL = range(7)
KIND_NAMES = ("deal", "starter", "lay", "call", "draw", "pass", "refill")
NO_SEAT = -1


class Event(NamedTuple):
    """One public event; fields a kind does not use keep their defaults."""

    kind: int
    """DEAL, STARTER, LAY, CALL, DRAW, PASS or REFILL"""
    seat: int = NO_SEAT
    """the seat that acted (DEAL: was dealt); NO_SEAT for STARTER and REFILL"""
    cards: tuple[int, ...] = ()
    """STARTER: the starter; LAY: the cards laid, first laid first (the last is the new top)"""
    number: int = 0
    """DEAL: cards dealt; DRAW: cards drawn (fewer than owed when the piles ran out); REFILL: cards
    turned into the new face-down pile"""
    suit: int = C.NO_SUIT
    """LAY: the suit 8s announce or a Jack declares; CALL: the suit called; DRAW: the suit to follow
    when drawing (NO_SUIT: free after a Joker starter, A4, or an empty table, B4)"""
    penalty: bool = False
    """DRAW: a draw the rules imposed (a Switch run, A6; Huit's Ace, B7), not one of the seat's accord"""
    offered: bool = False
    """DRAW, Switch: the drawn card could be laid at once and the drawer kept the turn to choose (A8)"""

    def text(self) -> str:
        """One line such as ``seat 1 lay 9S 9H`` or ``seat 2 draw 1``."""
        who = "" if self.seat == NO_SEAT else f"seat {self.seat} "
        words = [KIND_NAMES[self.kind], *(C.card_str(c) for c in self.cards)]
        if self.kind in (DEAL, DRAW, REFILL):
            words.append(str(self.number))
        if self.suit != C.NO_SUIT:
            words.append(("on " if self.kind == DRAW else "declare ") + C.suit_str(self.suit))
        words += [flag for flag, on in (("penalty", self.penalty), ("offered", self.offered)) if on]
        return who + " ".join(words)


class Record(NamedTuple):
    """The events of a hand in order; `complete`: they go back to the deal."""

    events: tuple[Event, ...]
    complete: bool

    def seen_from(self, seat: int, num_players: int) -> Record:
        """The record with seats numbered from `seat` (it is 0, then seat order), as observers number them."""
        return Record(tuple(e if e.seat == NO_SEAT else e._replace(seat=(e.seat - seat) % num_players)
                            for e in self.events), self.complete)

    def to_saved(self) -> dict[str, Any]:
        """JSON data for a saved state (read back by `record_from_saved`)."""
        return {"complete": self.complete, "events": [_event_to_saved(e) for e in self.events]}


EMPTY = Record((), False)
"""the record of a state that does not know its hand's past"""


def most_events(max_turns: int) -> int:
    """A bound on a hand's events: the deal and starter, and per action an event and a few refills."""
    return 11 + 4 * max_turns


def _event_to_saved(e: Event) -> dict[str, Any]:
    return {"kind": KIND_NAMES[e.kind], "seat": None if e.seat == NO_SEAT else e.seat,
            "cards": [C.card_str(c) for c in e.cards], "number": e.number,
            "suit": None if e.suit == C.NO_SUIT else C.suit_str(e.suit), "penalty": e.penalty,
            "offered": e.offered}


_EVENT_KEYS = ("kind", "seat", "cards", "number", "suit", "penalty", "offered")


def record_from_saved(value: Any, num_players: int, max_turns: int, deck: list[int]) -> Record:
    """A `Record` from saved-state data, each field checked; None (a file saved before records): `EMPTY`.

    Only the form is checked (kinds, seats, cards of the deck, counts, suits),
    not that the events replay to the saved position.
    """
    if value is None:
        return EMPTY
    where = "saved state field 'record'"
    if not isinstance(value, Mapping) or set(value) != {"complete", "events"}:
        raise ValueError(f"{where} must be a dict with the keys complete and events, got {excerpt(value)}")
    complete, events = value["complete"], value["events"]
    if not isinstance(complete, bool):
        raise ValueError(f"{where}['complete'] must be true or false, got {excerpt(complete)}")
    most = most_events(max_turns)
    if not isinstance(events, list) or len(events) > most:
        raise ValueError(f"{where}['events'] must be a list of at most {most} events, got {excerpt(events)}")
    return Record(tuple(_event_from_saved(e, f"{where}['events'][{i}]", num_players, deck)
                        for i, e in enumerate(events)), complete)


def _event_from_saved(data: Any, where: str, n: int, deck: list[int]) -> Event:
    if not isinstance(data, Mapping) or set(data) != set(_EVENT_KEYS):
        keys = ", ".join(_EVENT_KEYS)
        raise ValueError(f"{where} must be a dict with the keys {keys}, got {excerpt(data)}")
    kind = data["kind"]
    if kind not in KIND_NAMES:
        raise ValueError(f"{where}['kind'] must be one of {', '.join(KIND_NAMES)}, got {excerpt(kind)}")
    seat = data["seat"]
    if seat is not None and not (type(seat) is int and 0 <= seat < n):
        raise ValueError(f"{where}['seat'] must be None or a seat 0..{n - 1}, got {excerpt(seat)}")
    cards = C.parse_card_list(data["cards"], f"{where}['cards']")
    if len(cards) > C.NUM_SUITS or any(not deck[c] for c in cards):
        raise ValueError(f"{where}['cards'] must be at most {C.NUM_SUITS} cards of the deck, got "
                         f"{excerpt(data['cards'])}")
    number = data["number"]
    if not (type(number) is int and 0 <= number <= sum(deck)):
        raise ValueError(f"{where}['number'] must be a whole number 0..{sum(deck)}, got {excerpt(number)}")
    suit = data["suit"]
    if suit is not None and suit not in C.SUITS:
        raise ValueError(f"{where}['suit'] must be None or one of {' '.join(C.SUITS)}, got {excerpt(suit)}")
    flags = [data[k] for k in ("penalty", "offered")]
    if not all(isinstance(f, bool) for f in flags):
        raise ValueError(f"{where}['penalty'] and ['offered'] must be true or false, got {excerpt(flags)}")
    return Event(KIND_NAMES.index(kind), NO_SEAT if seat is None else seat, tuple(cards), number,
                 C.NO_SUIT if suit is None else C.SUITS.index(suit), *flags)


class RecordKeeper:
    """The engines' side: the events of the hand being played, noted as they happen (see the module doc)."""

    n: int
    events: list[Event]
    record_complete: bool

    def _start_record(self, complete: bool, sizes: list[int] | None = None) -> None:
        """A new, empty record; from a deal (`complete`), with a DEAL event per seat of its `sizes`."""
        self.events = [Event(DEAL, seat, number=size) for seat, size in enumerate(sizes or [])]
        self.record_complete = complete

    def _note(self, event: Event) -> None:
        self.events.append(event)

    def _note_pass(self, seat: int) -> None:
        self.events.append(Event(PASS, seat))

    def _note_call(self, seat: int, suit: int) -> None:
        self.events.append(Event(CALL, seat, suit=suit))

    def _note_starter(self, card: int) -> None:
        self.events.append(Event(STARTER, cards=(card,)))

    def _note_offered(self) -> None:
        """The last draw's card can be laid at once and the drawer keeps the turn (Switch, A8)."""
        self.events[-1] = self.events[-1]._replace(offered=True)

    def public_record(self, seat: int | None = None) -> Record:
        """The record of the hand so far; with `seat`, its seats numbered from that seat."""
        record = Record(tuple(self.events), self.record_complete)
        return record if seat is None else record.seen_from(seat, self.n)
