"""What a hand reader reads: one seat's public knowledge of a hand as one flat float32 vector.

Why here, beside `cardlab.envs.world_sampling`: a hand reader
(`cardlab.agents.hand_reading.reader`) predicts where each unseen card is
from what the seat could have seen, and nothing else; this module is the one
place that turns that knowledge into numbers, so the reader's training data
and its use at the table cannot read different things. It reads three public
sources, never hidden state: the seat's observation vector; its
`Determinization` (which cards are unseen, how many each other hand and the
pile hold, what the record proves: Switch's A8 `voids`); and the hand's
public record as the seat saw it, summed per other seat (the cards it laid,
the suits it declared, its draws and passes, and per kind how many cards it
has drawn since it last showed it lacked the kind: a player who draws while
holding a matching card is rarer than one who draws for want of one).

`InputLayout` names the slices (`fields`) of the vector, like the observers'
layouts; per-kind slices cover the deck's kinds (`deck_kinds`) in card-id
order, counts scaled to about 0..1. `READING_VERSION` changes whenever the
vector's meaning does; a reader file names the version it was trained on and
is refused under another.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from cardlab.envs.cards import NUM_KINDS, NUM_SUITS, rank_of, suit_of
from cardlab.envs.record import CALL, DRAW, LAY, PASS, STARTER, Record
from cardlab.envs.world_sampling import Determinization

READING_VERSION = 1
"""the version of the inputs' layout and meaning (a reader file records the one it was trained on)"""

SEAT_SCALARS = ("share", "drawn", "imposed", "laid", "passes", "voluntary")
"""per other seat: its hand's share of the unseen cards, cards drawn (all, imposed), cards laid, passes
(each /10), whether it ever drew of its accord"""
SEAT_KINDS = ("laid", "lacked", "lacked_since", "proven_since", "passed_over_since")
"""per other seat and deck kind: copies laid (/copies); whether the seat ever showed it lacked the kind (it
drew of its accord, or passed, while the kind matched the table); the cards it has drawn since it last
showed so (/10, at most 1; 1 when never); the same since the record last proved it held none (Switch's A8),
and since it last laid other cards while the kind matched the table (a choice that says something of what
it held, as much as its style does)"""
SCALE = 10.0
"""counts of cards and events are divided by this"""


@dataclasses.dataclass(frozen=True)
class InputLayout:
    """Where each part of a reader's input vector lies, for one table (observation size, seats, deck)."""

    observation_size: int
    num_players: int
    deck_kinds: tuple[int, ...]
    """the card ids of the game's deck, in order: the per-kind slices' entries"""

    @property
    def fields(self) -> list[tuple[str, int]]:
        """(name, width) of each slice, in order."""
        k = len(self.deck_kinds)
        out = [("observation", self.observation_size), ("unseen", k), ("events", 1)]
        for r in range(1, self.num_players):
            out += [(f"seat{r}.{name}", 1) for name in SEAT_SCALARS]
            out += [(f"seat{r}.{name}", k) for name in SEAT_KINDS]
            out.append((f"seat{r}.declared", NUM_SUITS))
        return out

    @property
    def size(self) -> int:
        """The vector's length."""
        return sum(width for _, width in self.fields)


def input_layout(observation_size: int, num_players: int, deck: Sequence[int]) -> InputLayout:
    """The layout for a table whose observation has `observation_size` values and whose deck is `deck`
    (copies per card id)."""
    return InputLayout(int(observation_size), int(num_players),
                       tuple(int(k) for k in np.flatnonzero(np.asarray(deck))))


class _Seat:
    """One other seat's running sums over the record."""

    def __init__(self) -> None:
        self.laid = np.zeros(NUM_KINDS)
        self.declared = np.zeros(NUM_SUITS)
        self.lacked = np.full(NUM_KINDS, -1.0)  # cards drawn since it showed it lacked the kind; -1: never
        self.proven = np.full(NUM_KINDS, -1.0)  # the same since the record proved it (A8)
        self.passed_over = np.full(NUM_KINDS, -1.0)  # the same since it laid others while the kind matched
        self.drawn = self.imposed = self.cards_laid = self.passes = 0
        self.voluntary = False

    def draw(self, number: int) -> None:
        """`number` more cards in hand: each kind it lacked may be among them."""
        self.drawn += number
        for since in (self.lacked, self.proven, self.passed_over):
            since[since >= 0] += number


_SUITS = np.array([suit_of(k) for k in range(NUM_KINDS)])
_RANKS = np.array([rank_of(k) for k in range(NUM_KINDS)])


def _matching(top: int | None, follow: int) -> np.ndarray:
    """(NUM_KINDS,) bool: the kinds of the suit to follow or the top card's rank (none played: all)."""
    if top is None and follow < 0:
        return np.ones(NUM_KINDS, dtype=bool)
    out: np.ndarray = np.equal(_SUITS, follow) if follow >= 0 else np.zeros(NUM_KINDS, dtype=bool)
    if top is not None and rank_of(top) >= 0:
        out = out | np.equal(_RANKS, rank_of(top))
    return out


def _walk(record: Record, known: Determinization, n: int) -> tuple[list[_Seat], int]:
    """Each other seat's sums (index 1..n-1, numbered from the viewer) and the events read."""
    seats = [_Seat() for _ in range(n)]
    top: int | None = None
    follow = -1
    voids = known.voids
    for i, event in enumerate(record.events):
        before = (top, follow)
        if event.kind in (STARTER, LAY) and event.cards:
            top = event.cards[-1]
            follow = event.suit if event.kind == LAY and event.suit >= 0 else suit_of(top)
        if event.kind == CALL:
            follow = event.suit
        if not (0 < event.seat < n):
            continue
        s = seats[event.seat]
        if event.kind == LAY:
            over = _matching(*before)
            over[list(event.cards)] = False
            s.passed_over[over] = 0
            np.add.at(s.laid, list(event.cards), 1)
            s.cards_laid += len(event.cards)
            if event.suit >= 0:
                s.declared[:] = 0
                s.declared[event.suit] = 1
        elif event.kind == CALL:
            s.declared[:] = 0
            s.declared[event.suit] = 1
        elif event.kind == DRAW:
            s.draw(event.number)
            if event.penalty:
                s.imposed += event.number
            else:
                s.voluntary = True
                s.lacked[_matching(top, event.suit if event.suit >= 0 else follow)] = event.number
            void = voids[i] if i < len(voids) else None
            if void is not None:
                s.proven[np.asarray(void, dtype=bool)] = event.number
        elif event.kind == PASS:
            s.passes += 1
            s.lacked[_matching(top, follow)] = 0
    return seats, len(record.events)


def _since(counts: np.ndarray) -> np.ndarray:
    return np.where(counts < 0, 1.0, np.minimum(counts, SCALE) / SCALE)


def reading_inputs(layout: InputLayout, known: Determinization, observation: np.ndarray,
                   record: Record | None) -> np.ndarray:
    """(layout.size,) float32: the seat's knowledge (see the module doc). `record` is numbered from the
    seat (as `Game.determinization` takes it); None reads as an empty record."""
    n = layout.num_players
    kinds = np.asarray(layout.deck_kinds, dtype=np.int64)
    copies = max(1.0, float(np.bincount(known.unseen, minlength=NUM_KINDS).max(initial=1)))
    unseen = np.bincount(known.unseen, minlength=NUM_KINDS)[kinds] / copies
    seats, events = _walk(record, known, n) if record is not None else ([_Seat() for _ in range(n)], 0)
    total = max(1, known.unseen.size)
    parts: list[np.ndarray] = [np.asarray(observation, dtype=np.float32).ravel(), unseen,
                               np.array([events / 100.0])]
    for r in range(1, n):
        s = seats[r]
        size = known.sizes[(known.seat + r) % n]
        parts.append(np.array([size / total, s.drawn / SCALE, s.imposed / SCALE, s.cards_laid / SCALE,
                               s.passes / SCALE, float(s.voluntary)]))
        parts += [s.laid[kinds] / copies, (s.lacked[kinds] >= 0).astype(np.float64), _since(s.lacked[kinds]),
                  _since(s.proven[kinds]), _since(s.passed_over[kinds]), s.declared]
    out = np.concatenate(parts).astype(np.float32)
    if out.size != layout.size:
        raise ValueError(f"the observation has {np.size(observation)} values but this reader's layout "
                         f"takes {layout.observation_size}: is it this table's observation?")
    return out
