"""Determinization: a whole engine state sampled to agree with what one seat observes.

A search agent (`cardlab.agents.search`) sees only its observation dict; to look
ahead it needs whole states ("worlds"). Each game's determinize function
(`GameSpec.determinize`, in the game's folder; `Game.determinize` calls it)
rebuilds every public field of the observation exactly and deals the unseen
cards (the deck minus the seat's hand and the played cards) uniformly at random
to the other hands, at their observed sizes, and to the face-down pile, from an
injected generator. The sampled state's observation and legal mask for that
seat equal the given ones (`tests/envs/test_determinize.py`).

What no observation tells is chosen the same way in both games (each game's
module adds its own):

- the turn counter starts at 0 (C1's cut comes `max_turns` actions later);
- the order of the played cards under the top card is random (it only shapes
  a pile turned over, Huit's B10);
- the dealer is the seat before the observing one, `hands_played` is 0 and
  the end-of-hand fields are those of a hand in play;
- unseen cards beyond the hands and the pile (a stacked deal's unused cards)
  are left out, drawn at random like the others;
- the state's own generator is seeded from the injected one.

The helpers here work on per-kind counts of the global card ids
(`cardlab.envs.cards`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from cardlab.envs.cards import NUM_KINDS, card_str
from cardlab.envs.match import Match

T = TypeVar("T")


def unfit(what: str) -> ValueError:
    """The error of an observation that no state of these rules could give."""
    return ValueError(f"the observation fits no state of these rules: {what} (is it this game's observation "
                      "vector, with these rule options, of the seat to move?)")


def whole(value: Any, scale: float, field: str) -> int:
    """The count an observed number stands for (`value * scale`, nearly whole and >= 0), else `unfit`."""
    count = float(value) * scale
    rounded = round(count)
    if rounded < 0 or abs(count - rounded) > 1e-3:
        raise unfit(f"field {field!r} holds {float(value)!r}, which is no count of cards or points")
    return int(rounded)


def kind_counts(part: np.ndarray, copies: np.ndarray, kinds: np.ndarray, field: str) -> np.ndarray:
    """(NUM_KINDS,) int64 counts of an observed per-kind slice (entry i: card `kinds[i]`, times 1/copies)."""
    scaled = np.asarray(part, dtype=np.float64) * copies
    rounded = np.rint(scaled)
    if (rounded < 0).any() or (np.abs(scaled - rounded) > 1e-3).any() or (rounded > copies).any():
        raise unfit(f"field {field!r} holds values that are no card counts of the deck")
    out = np.zeros(NUM_KINDS, dtype=np.int64)
    out[kinds] = rounded.astype(np.int64)
    return out


def one_hot(part: np.ndarray, field: str) -> int | None:
    """The index set in an observed one-hot slice, None when all zero."""
    hot = np.flatnonzero(np.asarray(part) != 0)
    if hot.size == 0:
        return None
    if hot.size > 1 or part[hot[0]] != 1:
        raise unfit(f"field {field!r} must be one-hot or all zero")
    return int(hot[0])


def absolute(relative: Sequence[T], seat: int) -> list[T]:
    """Per-seat values given from `seat` (`seat` first, then seat order) back in seat order."""
    n = len(relative)
    return [relative[(s - seat) % n] for s in range(n)]


def unseen(deck: Sequence[int], *seen: np.ndarray) -> np.ndarray:
    """(NUM_KINDS,) counts of the deck's cards that are in none of the `seen` counts."""
    rest = np.asarray(deck, dtype=np.int64) - sum(seen)
    if (rest < 0).any():
        extra = ", ".join(card_str(int(c)) for c in np.flatnonzero(rest < 0)[:8])
        raise unfit(f"more copies of {extra} are seen than the deck holds")
    return rest


def deal_unseen(rest: np.ndarray, sizes: Sequence[int], seat: int, pile: int,
                rng: np.random.Generator) -> tuple[list[list[int]], list[int]]:
    """Hands of the seats other than `seat` (`sizes[s]` cards each) and the pile (top first), dealt at random.

    The unseen cards `rest` are shuffled once and dealt; any left over are left out.
    `seat`'s hand is returned empty, for the caller to fill.
    """
    cards = np.repeat(np.arange(NUM_KINDS), rest)
    needed = sum(size for s, size in enumerate(sizes) if s != seat) + pile
    if needed > cards.size:
        raise unfit(f"the other hands and the pile hold {needed} cards but only {cards.size} are unseen")
    rng.shuffle(cards)
    hands: list[list[int]] = []
    start = 0
    for s, size in enumerate(sizes):
        take = 0 if s == seat else size
        hands.append(cards[start:start + take].tolist())
        start += take
    return hands, cards[start:start + pile].tolist()


def played_pile(counts: np.ndarray, top: int, rng: np.random.Generator) -> list[int]:
    """The played cards bottom first: `top` last, the others in a random order under it."""
    if counts[top] < 1:
        raise unfit(f"the top card {card_str(top)} is not among the played cards")
    under = np.repeat(np.arange(NUM_KINDS), counts)
    under = np.delete(under, np.searchsorted(under, top))
    rng.shuffle(under)
    return [*under.tolist(), top]


def observed_match(scores: np.ndarray, target: int, streaks: np.ndarray | None, streak_length: int,
                   seat: int) -> Match:
    """The match as observed from `seat`: totals (and B12 streaks), the dealer the seat before `seat`."""
    n = len(scores)
    totals = absolute([round(float(v) * target) for v in scores], seat)
    runs = [0] * n if streaks is None else [whole(v, streak_length, "streaks") for v in streaks]
    return Match(n, totals, (seat - 1) % n, absolute(runs, seat))


def own_generator(rng: np.random.Generator) -> np.random.Generator:
    """The sampled state's generator (its refill shuffles), seeded from the injected one."""
    return np.random.default_rng(int(rng.integers(2**63)))
