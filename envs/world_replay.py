"""A hand's public record played back from each sampled world: the deal each world implies, and the moves.

Why: to weigh a world by how likely the other seats were to make their
recorded moves from its hands (`cardlab.agents.hand_reading.belief`), each seat's hand
at each of its decisions is needed. A world (`cardlab.envs.world_sampling`)
gives the hands now; walking the record backwards from them gives the hands
at the deal: a lay puts its cards back in the layer's hand, a draw of n takes
n cards out of the drawer's hand at that point, chosen at random among the
kinds the record allows (`Determinization.drawn`: Switch's A8), and these go
back on the face-down pile's top in the order drawn. That deal, played
forward with the recorded moves, passes through the world's hands at every
step. Where the record proves a drawer held none of some kinds at a draw
(`Determinization.voids`, A8), the cards of those kinds it holds later are
taken out at its later draws first: a small lean away from uniform that keeps
the worlds that fit the record from being lost to an unlucky split.

The moves come from the record's events by their text form, so every game
whose events name its actions that way replays. Not replayed (`unreplayable`
says why): a record that does not go back to the deal, and one in which the
played cards became a new pile (A10, B10), whose order the world does not
hold. Seats are the record's (the observing seat is 0, `Record.seen_from`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.match import Match
from cardlab.envs.record import CALL, DEAL, DRAW, LAY, PASS, REFILL, STARTER, Event, Record
from cardlab.envs.world_sampling import Determinization, Worlds

ACTING = (LAY, DRAW, PASS, CALL)
"""the event kinds that are a seat's move (one action each)"""


class Move(NamedTuple):
    """One recorded move: the index of its event, the seat that made it and its action id."""

    event: int
    seat: int
    action: int


def event_text(event: Event) -> str:
    """The action text of a move's event: ``play 9S 9H``, ``play 8C declare S``, ``draw``, ``pass``,
    ``declare H``."""
    if event.kind == DRAW:
        return "draw"
    if event.kind == PASS:
        return "pass"
    if event.kind == CALL:
        return f"declare {C.suit_str(event.suit)}"
    if event.kind != LAY:
        raise ValueError(f"event {event.text()!r} is no move of a seat")
    declare = "" if event.suit == C.NO_SUIT else f" declare {C.suit_str(event.suit)}"
    return "play " + C.format_cards(list(event.cards)) + declare


def recorded_moves(game: Any, record: Record) -> list[Move]:
    """Every move of the record, in order, as the game's action ids (`Game.str_to_action` of its text)."""
    return [Move(i, e.seat, game.str_to_action(event_text(e)))
            for i, e in enumerate(record.events) if e.kind in ACTING]


def unreplayable(record: Record | None) -> str | None:
    """Why a record cannot be played back from the deal (None: it can)."""
    if record is None:
        return "no record was shown"
    if not record.complete:
        return "the record does not go back to the deal"
    if any(e.kind == REFILL for e in record.events):
        return "the played cards became a new face-down pile (A10, B10)"
    return None


class Deals(NamedTuple):
    """The deal of each of W worlds (`deals_back`)."""

    hands: np.ndarray
    """(W, n, NUM_KINDS) int64: each seat's cards at the deal (seats as the record numbers them)"""
    piles: np.ndarray
    """(W, cards) int64: the face-down pile at the deal, top first"""
    ok: np.ndarray
    """(W,) bool: the world can come from a deal (false: a draw found no card the record allows)"""


def deals_back(known: Determinization, worlds: Worlds, record: Record, rng: np.random.Generator) -> Deals:
    """The deals the record leads back to from each world (see the module doc); `known` is the observing
    seat's, which must be seat 0 (the record's numbering) and the record replayable (`unreplayable`)."""
    reason = unreplayable(record)
    if reason is not None:
        raise ValueError(f"the record cannot be played back from the deal: {reason}")
    if known.seat != 0:
        raise ValueError(f"worlds are played back from seat 0's view (the record's numbering), not seat "
                         f"{known.seat}'s")
    count, n = worlds.count, len(known.sizes)
    hands = np.zeros((count, n, C.NUM_KINDS), dtype=np.int64)
    hands[:, 0] = np.bincount(np.asarray(known.own, dtype=np.int64), minlength=C.NUM_KINDS)
    spans, pile = known.spans
    rows = np.arange(count)
    for seat, start, stop in spans:
        seats = np.full((stop - start) * count, seat)
        np.add.at(hands, (np.repeat(rows, stop - start), seats, worlds.hidden[:, start:stop].ravel()), 1)
    ok = np.ones(count, dtype=bool)
    drawn: list[np.ndarray] = []  # the cards of each draw, backwards: (W, number) arrays
    for i in range(len(record.events) - 1, -1, -1):
        event = record.events[i]
        if event.kind == LAY:
            for card in event.cards:
                hands[:, event.seat, card] += 1
        elif event.kind == DRAW and event.number:
            allowed = known.drawn[i] if i < len(known.drawn) else None
            first = _void_before(known, record, i)
            taken = np.stack([_take_one(hands, event.seat, allowed, first, ok, rng)
                              for _ in range(event.number)], 1)  # seat 0 (all worlds alike): alike
            drawn.append(taken)
    dealt = [e for e in record.events if e.kind == DEAL]
    for e in dealt:
        ok &= hands[:, e.seat].sum(axis=1) == e.number
    piles = np.concatenate([*reversed(drawn), worlds.hidden[:, pile]], axis=1) if drawn else \
        worlds.hidden[:, pile]
    return Deals(hands, piles.astype(np.int64), ok)


def _void_before(known: Determinization, record: Record, i: int) -> list[np.ndarray]:
    """The kinds the drawer of event `i` held none of at each of its earlier draws, the latest first."""
    seat = record.events[i].seat
    return [void for j in range(min(i, len(known.voids)) - 1, -1, -1)
            if (void := known.voids[j]) is not None and record.events[j].seat == seat]


def _take_one(hands: np.ndarray, seat: int, allowed: np.ndarray | None, first: list[np.ndarray],
              ok: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(W,) one card taken at random from `seat`'s hand in every world, of the `allowed` kinds, and of the
    first kinds of `first` the hand holds (cards the seat cannot have held at its latest earlier draw must
    come from a later one, then those of the draw before, ...); a world whose hand holds no allowed card
    is marked not `ok` (and gives none up)."""
    counts = hands[:, seat] if allowed is None else hands[:, seat] * allowed
    if first:
        picked_from = counts.copy()
        pending = np.ones(counts.shape[0], dtype=bool)
        for void in first:
            preferred = counts * void
            found = pending & (preferred.sum(axis=1) > 0)
            picked_from[found] = preferred[found]
            pending &= ~found
        counts = picked_from
    totals = counts.sum(axis=1)
    ok &= totals > 0
    ends = np.cumsum(counts, axis=1)
    # The observing seat's hands are alike in every world: one draw for all keeps its deal alike too.
    target = np.floor((rng.random() if seat == 0 else rng.random(len(totals))) * totals)
    picked = (ends > target[:, None]).argmax(axis=1)
    live = totals > 0
    hands[np.flatnonzero(live), seat, picked[live]] -= 1
    return np.where(live, picked, -1)


def deal_worlds(game: Any, known: Determinization, deals: Deals, record: Record,
                rng: np.random.Generator) -> tuple[Determinization, Worlds]:
    """The deals as worlds of a determinization at the deal, for `BatchedEngine.load_worlds` (array writes).

    The first mover, the starter's effects (A4) and every other field come
    from one stacked deal (`deal_stacked`) with the dealer that makes the
    record's first mover move first; the observing seat's deal is alike in
    every world (`deals_back`), so it is that determinization's own hand. A
    world that is not `ok` gets the first `ok` world's cards (its slot is
    not played).
    """
    n = len(known.sizes)
    starter = next((e.cards[0] for e in record.events if e.kind == STARTER), None)
    moves = [e for e in record.events if e.kind in ACTING]
    w0 = int(np.argmax(deals.ok))
    template = _template(game, deals.hands[w0], deals.piles[w0], starter, moves[0].seat if moves else 0,
                         known.match.scores, rng)
    hands = np.where(deals.ok[:, None, None], deals.hands, deals.hands[w0][None])
    piles = np.where(deals.ok[:, None], deals.piles, deals.piles[w0][None])
    sizes = hands[w0].sum(axis=1).tolist()
    deck = np.asarray(known.rules.deck(), dtype=np.int64)
    played = np.zeros(C.NUM_KINDS, dtype=np.int64)
    if starter is not None:
        played[starter] += 1
    unseen = deck - hands[w0, 0] - played
    count = deals.ok.size
    kinds = np.tile(np.arange(C.NUM_KINDS), count)
    parts = [np.repeat(kinds, hands[:, s].ravel()).reshape(count, -1) for s in range(1, n)]
    parts.append(piles)
    in_pile = np.zeros((count, C.NUM_KINDS), dtype=np.int64)
    np.add.at(in_pile, (np.repeat(np.arange(count), piles.shape[1]), piles.ravel()), 1)
    rest = unseen[None] - hands[:, 1:].sum(axis=1) - in_pile
    parts.append(np.repeat(kinds, rest.ravel()).reshape(count, -1))
    m = known.match
    at_deal = dataclasses.replace(
        known, own=C.counts_to_cards(hands[w0, 0].tolist()), sizes=sizes, pile=piles.shape[1],
        unseen=np.repeat(np.arange(C.NUM_KINDS), unseen), under=np.zeros(0, dtype=np.int64), top=starter,
        match=Match(n, list(m.scores), template.match.dealer, list(m.streaks), m.hands_played),
        fields={**{name: getattr(template, name) for name in (*known.fields, *known.picks)},
                "current": template.current},
        picks={}, slots=(), drawn=(), voids=())
    worlds = Worlds(np.concatenate(parts, axis=1), np.zeros((count, 0), dtype=np.int64), {})
    return at_deal, worlds


def _template(game: Any, hands: np.ndarray, pile: np.ndarray, starter: int | None, first: int,
              scores: list[int], rng: np.random.Generator) -> Any:
    """A stacked deal of these cards whose first mover is `first` (the dealer tried seat by seat)."""
    piles = game.spec.state.PILES
    deal: dict[str, Any] = {
        "hands": [[C.card_str(c) for c in C.counts_to_cards(h.tolist())] for h in hands],
        piles[0]: [C.card_str(int(c)) for c in pile],
        "scores": list(scores),
    }
    if starter is not None:
        deal["starter"] = C.card_str(starter)
    for dealer in range(game.num_players):
        state = game.new_state(rng)
        state.deal_stacked({**deal, "dealer": dealer})
        if state.current == first:
            return state
    raise ValueError(f"no dealer makes seat {first} move first in this record: it does not fit the game")
