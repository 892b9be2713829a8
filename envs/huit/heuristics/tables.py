"""Huit américain card sets as bitmasks, and what the rules say about a table, tabulated at import.

Hands and card sets are bitmasks over card ids (bit `c` set = card `c` held):
with one copy of each of 32 cards, set operations and popcounts are all the
heuristics' reckoning needs. The compiled heuristics
(`cardlab.envs.huit.heuristics.kernels`) weigh tens of thousands of
hypothetical hands per game, so what the rules say about a table (which groups
go on it, which cards follow it, how a turn ends) is tabulated here once
(`Follow`, `Outcome`, `plays_for`), not asked of the engine; `arrays` turns
these tables into the kernels' arrays.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.huit import rules as R

BIT = [1 << c for c in range(C.NUM_KINDS)]
RANK_BITS = {r: sum(BIT[C.make_card(r, s)] for s in range(C.NUM_SUITS)) for r in R.RANKS}
SUIT_BITS = [sum(BIT[C.make_card(r, s)] for r in R.RANKS) for s in range(C.NUM_SUITS)]
EIGHTS, ACES = RANK_BITS[C.EIGHT], RANK_BITS[C.ACE]
PLAIN = sum(BIT[c] for c in R.DECK_CARDS) & ~EIGHTS
RANK_POINTS = {r: int(R.POINTS[C.make_card(r, 0)]) for r in R.RANKS}
# Per play action: the card it leaves on top, and the cards it lays as a bitmask.
TOP_CARD = [R.group_cards(a)[-1] if a < R.DRAW else -1 for a in range(R.NUM_ACTIONS)]
GROUP_BITS = [sum(BIT[c] for c in R.group_cards(a)) if a < R.DRAW else 0 for a in range(R.NUM_ACTIONS)]
# The bit of each card in the observation's card order (`DECK_CARDS`): how the kernels read a 32-long slice.
DECK_BITS = np.array([BIT[c] for c in R.DECK_CARDS], dtype=np.int64)


def points(hand: int) -> int:
    """B11 value of a hand."""
    return sum(RANK_POINTS[r] * (hand & bits).bit_count() for r, bits in RANK_BITS.items())


def suit_after(action: int) -> int:
    """The current suit once `action` is laid: the announced one for 8s (B6), else the top's."""
    declared = R.ACTION_DECLARE[action]
    return R.ACTION_TOP[action] if declared == C.NO_SUIT else declared


# ---------------------------------------------------------------- the shape of a hand
# A card set's *shape*: bit i set for each rank `RANKS[i]` it holds, bit len(RANKS) + s for each suit s.
SHAPE_BITS = len(R.RANKS) + C.NUM_SUITS
RANKS_HELD = (1 << len(R.RANKS)) - 1  # the rank bits of a shape


def _reaches() -> list[int]:
    """Per shape, the cards that share a rank or a suit with a card set of that shape."""
    per_bit = [*(RANK_BITS[r] for r in R.RANKS), *SUIT_BITS]  # the cards sharing each shape bit
    out = [0] * (1 << SHAPE_BITS)
    for shape in range(1, 1 << SHAPE_BITS):
        low = shape & -shape
        out[shape] = out[shape ^ low] | per_bit[low.bit_length() - 1]
    return out


REACH = _reaches()


# ---------------------------------------------------------------- what may follow a table
Lays = dict[int, tuple[int, ...]]  # the cards held of one rank (a bitmask) -> the legal groups, ascending ids


@dataclasses.dataclass(frozen=True, eq=False)
class Follow:
    """What the rules let follow one table: a top rank (None: an empty table) and a current suit.

    `lays` are the ranks that can go on it, in the order of their action ids
    (plain ranks, then 8s), each with the groups every held subset of it may
    lay, exactly as `HuitState.legal_actions` filters them; `can` is the cards
    that go on it. There is one instance per table (`follow_of`, also when
    copied or unpickled), so that `arrays` numbers the tables by identity.
    """

    top_rank: int | None
    suit: int | None
    lays: tuple[tuple[int, Lays], ...]
    can: int

    def __reduce__(self) -> tuple[Any, ...]:
        return _table, (self.top_rank, self.suit)


def _lays(rank: int, top_rank: int | None, suit: int | None) -> Lays | None:
    """The legal groups of `rank` per held subset, on a table (`top_rank` None: empty).

    None if no group of `rank` ever goes on it.
    """
    suits_of = {BIT[C.make_card(rank, s)]: 1 << s for s in range(C.NUM_SUITS)}
    out: Lays = {}
    for held in range(1, 1 << C.NUM_SUITS):
        cards = sum(bits for bits, suit_bit in suits_of.items() if held & suit_bit)
        candidates = R.CANDIDATES[rank][held]
        if top_rank is None:  # B4
            out[cards] = tuple(a for a, size, _m, _t in candidates if size == 1 or rank == C.EIGHT)
        elif rank == C.EIGHT or rank == top_rank:  # B6, B5 by rank
            out[cards] = tuple(a for a, _s, _m, _t in candidates)
        elif top_rank == C.ACE:  # B7
            return None
        else:  # B5 by suit: the first card laid has the current suit
            bit = 1 << suit  # type: ignore[operator]
            out[cards] = tuple(
                a for a, size, mask, t in candidates if mask & bit and (t == suit if size == 1 else t != suit)
            )
    return out


def _follow(top_rank: int | None, suit: int | None) -> Follow:
    """Build the `Follow` of a table (`top_rank` None: empty, whatever `suit`)."""
    if top_rank is None:
        can = PLAIN | EIGHTS
    elif top_rank == C.ACE:
        can = ACES | EIGHTS
    else:
        can = EIGHTS | RANK_BITS[top_rank] | SUIT_BITS[suit]  # type: ignore[index]
    lays = []
    for rank in (*R.PLAIN_RANKS, C.EIGHT):  # the order of their action ids
        table = _lays(rank, top_rank, suit)
        if table is not None:
            lays.append((RANK_BITS[rank], table))
    return Follow(top_rank, suit, tuple(lays), can)


EMPTY_TABLE = _follow(None, None)
# Looked up by (top rank, current suit) as a table gives them: the suit is typed `int | None` there,
# but a table with a top card always has one (a None suit would be a KeyError, as before).
FOLLOWS: dict[tuple[int, int | None], Follow] = {
    (r, s): _follow(r, s) for r in R.RANKS for s in range(C.NUM_SUITS)
}


def _table(top_rank: int | None, suit: int | None) -> Follow:
    """The `Follow` of a top rank (None: an empty table) and a suit."""
    return EMPTY_TABLE if top_rank is None else FOLLOWS[(top_rank, suit)]


def follow_of(top: int | None, suit: int | None) -> Follow:
    """The `Follow` of a table with card `top` (None: empty) and the current `suit`."""
    return EMPTY_TABLE if top is None else FOLLOWS[(C.rank_of(top), suit)]


class Outcome(NamedTuple):
    """How a turn ends: the table left, whether it is a fresh Ace (B7), and the seat (offset) to move next."""

    table: Follow
    fresh_ace: bool
    nxt: int


# Per play action: the cards it keeps (all but those it lays: a mask to `&` a hand with), and how the
# turn ends.
Play = tuple[int, Outcome]


@functools.cache
def plays_for(num_players: int, queen_skips_each: bool) -> tuple[Play, ...]:
    """The `Play` of every play action id (B8: Queens skip one seat each, or one in all, never the layer)."""
    out = []
    for action in range(R.DRAW):
        rank = R.ACTION_RANK[action]
        skips = 0
        if rank == C.QUEEN:
            skips = min(R.ACTION_SIZE[action] if queen_skips_each else 1, num_players - 1)
        after = FOLLOWS[(C.rank_of(TOP_CARD[action]), suit_after(action))]
        out.append((~GROUP_BITS[action], Outcome(after, rank == C.ACE, (1 + skips) % num_players)))
    return tuple(out)
