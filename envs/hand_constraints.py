"""What the public record proves about hidden hands, as data a sampler honours.

A game's inference (Switch: `cardlab.envs.switch.hand_constraints`) reads a `Record`
(`cardlab.envs.record`) into `Slot`s: "`size` of seat `seat`'s cards are of
the kinds in `allowed`". A seat's cards not in any slot are free. Slots of one
seat form a laminar family (two slots' allowed kinds are nested or disjoint),
which is what makes the checks and the deal here exact:

- `fits(hand, slots)`: a hand can fill the slots (Hall's condition, which for
  a laminar family needs one check per slot);
- `deal_slots(...)`: cards dealt into the slots smallest first, each slot's
  cards uniformly among the unseen copies it allows, then the rest at random.
  Within one seat this cannot meet a dead end when some deal exists (a slot
  takes only cards its enclosing slots allow too); slots of different seats
  can compete for the same scarce kinds, so a dead end deals again, up to
  `TRIES` times. Every deal it returns fills every slot; it is not uniform
  over all such deals (a hand that fills its slots in more ways is likelier).

A batched sampler reads the same slots as arrays (`slot_arrays`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from cardlab.envs.cards import NUM_KINDS

TRIES = 20
"""deals tried before `deal_slots` gives up"""


class Slot(NamedTuple):
    """`size` of `seat`'s cards are of the kinds where `allowed` is true."""

    seat: int
    size: int
    allowed: np.ndarray
    """(NUM_KINDS,) bool"""


def fits(hand: np.ndarray, slots: Sequence[Slot]) -> bool:
    """Whether a hand ((NUM_KINDS,) counts) can fill these slots of one seat (laminar: exact)."""
    if sum(s.size for s in slots) > int(hand.sum()):
        return False
    for slot in slots:
        inside = sum(s.size for s in slots if not (s.allowed & ~slot.allowed).any())
        if int(hand[slot.allowed].sum()) < inside:
            return False
    return True


def deal_slots(unseen: np.ndarray, sizes: Sequence[int], skip: int, pile: int, slots: Sequence[Slot],
               rng: np.random.Generator) -> tuple[list[list[int]], list[int]]:
    """The other hands (seat `skip` gets none) and the pile (`pile` cards) dealt from `unseen` card ids.

    The slots are filled first, the smallest allowed set first; a `ValueError` when `TRIES` deals
    cannot fill them (the record and the observation disagree).
    """
    for _ in range(TRIES - 1):
        try:
            return _deal_once(unseen, sizes, skip, pile, slots, rng)
        except ValueError:
            continue
    return _deal_once(unseen, sizes, skip, pile, slots, rng)


def _deal_once(unseen: np.ndarray, sizes: Sequence[int], skip: int, pile: int, slots: Sequence[Slot],
               rng: np.random.Generator) -> tuple[list[list[int]], list[int]]:
    pool = rng.permutation(unseen)
    taken = np.zeros(pool.size, dtype=bool)
    hands: list[list[int]] = [[] for _ in sizes]
    for slot in sorted(slots, key=lambda s: int(s.allowed.sum())):
        free = np.flatnonzero(~taken & slot.allowed[pool])
        if free.size < slot.size:
            raise ValueError(f"the record leaves seat {slot.seat} {slot.size} cards of kinds of which only "
                             f"{free.size} are unseen: the record does not fit the observation")
        chosen = free[: slot.size]
        taken[chosen] = True
        hands[slot.seat].extend(pool[chosen].tolist())
    rest = pool[~taken].tolist()
    for seat, size in enumerate(sizes):
        if seat == skip:
            continue
        more = size - len(hands[seat])
        if more < 0:
            raise ValueError(f"the record puts more cards in seat {seat}'s slots than the {size} it holds")
        hands[seat].extend(rest[:more])
        del rest[:more]
    if len(rest) < pile:
        raise ValueError(f"the pile holds {pile} cards but only {len(rest)} are left to deal")
    return hands, rest[:pile]


def slot_arrays(slots: Sequence[Slot]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The slots as arrays: seats (k,), counts (k,), allowed kinds (k, NUM_KINDS) bool."""
    allowed = np.zeros((len(slots), NUM_KINDS), dtype=bool)
    for i, slot in enumerate(slots):
        allowed[i] = slot.allowed
    seats = np.array([s.seat for s in slots], dtype=np.int64)
    return seats, np.array([s.size for s in slots], dtype=np.int64), allowed
