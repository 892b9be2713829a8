"""Worlds dealt by where a reader says each unseen card is, agreeing with everything the seat knows.

A `Determinization` deals its unseen cards uniformly; given a leaning (for
each card kind, a weight for each place it can be: each other hand, seat
order from the observer, then the face-down pile), `lean_rows` deals them by
it instead, with every hand size exact and the record's slots
(`cardlab.envs.hand_constraints`) filled:

1. the leaning is scaled into expected copies per kind and place that add
   up to the copies unseen of each kind and to each place's size (Sinkhorn's
   iterative scaling, `expected`), so a hand is not asked for more cards
   than it holds;
2. each world fills the slots first (a slot's cards drawn without
   replacement, each unseen copy weighed by its kind's expected share of the
   slot's seat), then deals the rest one card at a time in a random order,
   a card going to a place with probability proportional to its kind's
   expected share of that place times the room the place has left, so the
   last cards cannot overfill a hand.

Pure arrays from an injected generator, compiled (numba takes the
`np.random.Generator` itself): the same generator gives the same worlds
(C2). The leaning is data, so this module knows nothing of the model
that made it (`cardlab.agents.hand_reading.reader`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from cardlab.envs.cards import NUM_KINDS
from cardlab.envs.hand_constraints import TRIES

SINKHORN_STEPS = 12
"""scalings of the expected copies (rows, then columns) per deal"""
FLOOR = 1e-6
"""the least weight of a kind in a place with room: a reader's near-certainty never makes a deal impossible"""


def places(known: Any) -> np.ndarray:
    """(P,) int64: the room of each place, the other hands in seat order from the observer, then the pile
    (with any unseen cards left out of the deal)."""
    n = len(known.sizes)
    others = [known.sizes[(known.seat + r) % n] for r in range(1, n)]
    return np.array([*others, known.unseen.size - sum(others)], dtype=np.int64)


def expected(leaning: np.ndarray, copies: np.ndarray, room: np.ndarray) -> np.ndarray:
    """(NUM_KINDS, P) expected copies of each kind in each place: the leaning scaled so that rows add up to
    `copies` and columns to `room` (see the module doc)."""
    weights = np.where(room[None, :] > 0, np.maximum(np.asarray(leaning, dtype=np.float64), FLOOR), 0.0)
    weights = weights * (copies > 0)[:, None]
    for _ in range(SINKHORN_STEPS):
        rows = weights.sum(axis=1, keepdims=True)
        weights = np.divide(weights * copies[:, None], rows, out=np.zeros_like(weights), where=rows > 0)
        cols = weights.sum(axis=0, keepdims=True)
        weights = np.divide(weights * room[None, :], cols, out=np.zeros_like(weights), where=cols > 0)
    return weights


def lean_rows(known: Any, leaning: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, unseen) int64 `Worlds.hidden` rows dealt by `leaning` ((NUM_KINDS, P), P the places of
    `places`), laid out as `known.spans`; every hand size exact, every slot of `known` filled."""
    n = len(known.sizes)
    room = places(known)
    if leaning.shape != (NUM_KINDS, room.size):
        raise ValueError(f"a leaning for {n} seats is ({NUM_KINDS}, {room.size}) weights per kind and place, "
                         f"got shape {leaning.shape}")
    unseen = np.asarray(known.unseen, dtype=np.int64)
    copies = np.bincount(unseen, minlength=NUM_KINDS).astype(np.float64)
    share = expected(leaning, copies, room)
    share = np.divide(share, room[None, :], out=np.zeros_like(share), where=room[None, :] > 0)
    slots = sorted(known.slots, key=lambda s: int(s.allowed.sum()))
    allowed = np.zeros((len(slots), NUM_KINDS), dtype=np.bool_)
    for i, slot in enumerate(slots):
        allowed[i] = slot.allowed
    slot_place = np.array([(slot.seat - known.seat) % n - 1 for slot in slots], dtype=np.int64)
    slot_size = np.array([slot.size for slot in slots], dtype=np.int64)
    left = room - np.bincount(slot_place, weights=slot_size, minlength=room.size).astype(np.int64)
    if (left < 0).any():
        raise ValueError("the record's slots put more cards in a hand than it holds")
    cards, where, short = _deal(share, unseen, left, slot_place, slot_size, allowed, int(count), rng)
    if short >= 0:
        slot = slots[short]
        raise ValueError(f"the record leaves seat {slot.seat} {slot.size} cards of kinds that "
                         "are not all unseen: the record does not fit the observation")
    return _laid_out(known, cards, where, room.size)


@njit(cache=True)
def _deal(share: np.ndarray, unseen: np.ndarray, left: np.ndarray, slot_place: np.ndarray,
          slot_size: np.ndarray, allowed: np.ndarray, count: int,
          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Each world's cards in dealing order and the place each goes to (module doc, step 2); the index of a
    slot that cannot be filled, else -1.

    Slots of different seats can compete for the same scarce kinds, so a world whose slots meet a dead end
    is dealt again, up to `TRIES` times (as `deal_slots` does); only then is the slot named."""
    size, places_n = unseen.size, left.size
    cards = np.empty((count, size), dtype=np.int64)
    where = np.empty((count, size), dtype=np.int64)
    weight = np.empty(max(size, places_n))
    taken = np.zeros(size, dtype=np.bool_)
    order = unseen.copy()
    slotted = int(slot_size.sum())
    for w in range(count):
        for attempt in range(TRIES):
            order[:] = unseen
            for i in range(size - 1, 0, -1):  # Fisher-Yates
                j = min(i, int(rng.random() * (i + 1)))  # numba's Generator.integers costs ten times more
                order[i], order[j] = order[j], order[i]
            short = _fill_slots(share, order, slot_place, slot_size, allowed, taken, weight, cards[w],
                                where[w], rng)
            if short < 0:
                break
            if attempt == TRIES - 1:
                return cards, where, short
        at = slotted
        room = left.copy()
        for i in range(size):
            if taken[i]:
                continue
            total = 0.0
            for p in range(places_n):
                weight[p] = share[order[i], p] * room[p] + FLOOR if room[p] > 0 else 0.0
                total += weight[p]
            pick = _roulette(weight, places_n, rng.random() * total, places_n - 1)
            room[pick] -= 1
            cards[w, at] = order[i]
            where[w, at] = pick
            at += 1
    return cards, where, -1


@njit(cache=True)
def _roulette(weight: np.ndarray, n: int, u: float, pick: int) -> int:
    """The index among the first `n` of `weight` that `u` (uniform over their total) falls on: the last
    positive weight that `u` has not yet passed; `pick` where none is positive."""
    for i in range(n):
        if weight[i] > 0.0:
            pick = i
            u -= weight[i]
            if u <= 0.0:
                break
    return pick


@njit(cache=True)
def _fill_slots(share: np.ndarray, order: np.ndarray, slot_place: np.ndarray, slot_size: np.ndarray,
                allowed: np.ndarray, taken: np.ndarray, weight: np.ndarray, cards: np.ndarray,
                where: np.ndarray, rng: np.random.Generator) -> int:
    """One world's slots filled from the shuffled `order`, smallest first, into the start of `cards` and
    `where` (`taken` marks the cards used); the index of the first slot that meets a dead end, else -1."""
    size = order.size
    taken[:] = False
    at = 0
    for s in range(slot_size.size):
        place = slot_place[s]
        for _ in range(slot_size[s]):
            total = 0.0
            for i in range(size):
                free = not taken[i] and allowed[s, order[i]]
                weight[i] = share[order[i], place] + FLOOR if free else 0.0
                total += weight[i]
            if total <= 0.0:
                return s
            pick = _roulette(weight, size, rng.random() * total, -1)
            taken[pick] = True
            cards[at] = order[pick]
            where[at] = place
            at += 1
    return -1


def _laid_out(known: Any, cards: np.ndarray, where: np.ndarray, count: int) -> np.ndarray:
    """The dealt cards in `known.spans` order: each other hand (seat order), then the pile."""
    n = len(known.sizes)
    spans, _pile = known.spans
    rank = np.empty(count, dtype=np.int64)
    for position, (seat, _start, _stop) in enumerate(spans):
        rank[(seat - known.seat) % n - 1] = position
    rank[count - 1] = count - 1
    keys = rank[where] * cards.shape[1] + np.arange(cards.shape[1])[None, :]
    return np.take_along_axis(cards, np.argsort(keys, axis=1), axis=1)
