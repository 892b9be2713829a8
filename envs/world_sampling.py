"""Determinization: whole engine states sampled to agree with what one seat observes.

A search agent (`cardlab.agents.search`) sees only its observation dict; to look
ahead it needs whole states ("worlds"). Each game's determinize function
(`GameSpec.determinize`) reads an observation once into a `Determinization`:
every public field exactly, and which cards are unseen. Its `deal(rng,
count)` deals the unseen cards of `count` worlds at once, as arrays
(`Worlds`), uniformly to the other hands (at their observed sizes) and the
face-down pile; `sample_into` writes them straight into a batched engine's
slots, `world` builds one as a rules-engine state. A sampled state's
observation and legal mask for that seat equal the given ones
(`tests/envs/test_determinize.py`). Given the hand's public record, what it
proves of the other hands (`cardlab.envs.hand_constraints`) is filled as well.
`revealed` is the cheat's determinization (``search:cheat=1``, upper bounds
only). What no observation tells (the turn counter, the order under the top
card, the dealer) is chosen as docs/envs.md, "The public record and worlds
that agree with it", says. The helpers work on per-kind counts of the global
card ids (`cardlab.envs.cards`).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from cardlab.envs.cards import NUM_KINDS, NUM_SUITS, card_str
from cardlab.envs.checked_json import excerpt
from cardlab.envs.hand_constraints import Slot, deal_slots
from cardlab.envs.match import Match
from cardlab.envs.worlds_by_reading import lean_rows

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, eq=False)
class Determinization:
    """What one seat's observation fixes of a state; `sample` deals the rest (see the module doc)."""

    state: Any
    """the engine state class (a `cardlab.envs.hand.HandState`)"""
    rules: Any
    seat: int
    """the observing seat, to move in every sample"""
    own: list[int]
    """the seat's cards"""
    sizes: list[int]
    """cards held, per seat"""
    pile: int
    """cards in the face-down pile"""
    unseen: np.ndarray
    """the cards to deal, one entry per copy"""
    under: np.ndarray
    """the played cards under the top card, one entry per copy"""
    top: int | None
    """the top played card (None: nothing played)"""
    match: Match
    """the totals and streaks observed (copied into each sample)"""
    fields: Mapping[str, Any]
    """the game's own attributes of the state, as observed (current_suit, phase, ...)"""
    picks: Mapping[str, Sequence[Any]] = dataclasses.field(default_factory=dict)
    """attributes no observation tells, each drawn per sample from its options"""
    slots: tuple[Slot, ...] = ()
    """what the hand's public record proves of the other hands (`cardlab.envs.hand_constraints`); every sample
    fills them"""
    drawn: tuple[np.ndarray | None, ...] = ()
    """per event of the record, the kinds ((NUM_KINDS,) bool) a card drawn there may be, None: any (Switch's
    A8); empty without a record. A replay of the hand (`cardlab.envs.world_replay`) draws by it"""
    voids: tuple[np.ndarray | None, ...] = ()
    """per event of the record, the kinds the drawer there held none of (Switch's A8), None: unknown"""
    truth: Revealed | None = None
    """the true hidden cards (`revealed`: a cheat's): every sample deals the other hands as they are"""
    leaning: np.ndarray | None = None
    """(NUM_KINDS, places) weights of where each unseen kind is (a hand reader's,
    `cardlab.envs.worlds_by_reading`): samples are dealt by them, slots and sizes still exact;
    None: uniformly"""

    def __post_init__(self) -> None:
        needed = sum(size for s, size in enumerate(self.sizes) if s != self.seat) + self.pile
        if needed > self.unseen.size:
            raise unfit(f"the other hands and the pile hold {needed} cards but only {self.unseen.size} are "
                        "unseen")

    @functools.cached_property
    def spans(self) -> tuple[list[tuple[int, int, int]], slice]:
        """Where a `Worlds.hidden` row puts its cards: (seat, start, stop) of each other hand in seat order,
        and the slice of the face-down pile (top first); the cards after it are left out."""
        hands, start = [], 0
        for s, size in enumerate(self.sizes):
            if s != self.seat:
                hands.append((s, start, start + size))
                start += size
        return hands, slice(start, start + self.pile)

    def deal(self, rng: np.random.Generator, count: int) -> Worlds:
        """`count` worlds' unseen cards dealt from `rng`, each world's independently: uniformly, with
        `slots` filled (`hand_constraints.deal_slots`, a world at a time), or by the `leaning`
        (`leaning.lean_rows`)."""
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"count must be a whole number of worlds >= 0, got {excerpt(count)}")
        if self.truth is not None:
            hidden = self.truth.rows(rng, int(count))
        elif self.leaning is not None:
            hidden = lean_rows(self, self.leaning, rng, int(count))
        elif self.slots:
            hidden = np.stack([self.constrained_row(rng) for _ in range(int(count))]) if count else \
                np.empty((0, self.unseen.size), dtype=np.int64)
        else:
            hidden = rng.permuted(np.broadcast_to(self.unseen, (int(count), self.unseen.size)), axis=1)
        under = rng.permuted(np.broadcast_to(self.under, (int(count), self.under.size)), axis=1)
        picks = {name: rng.integers(len(options), size=int(count)) for name, options in self.picks.items()}
        return Worlds(hidden.astype(np.int64), under.astype(np.int64), picks)

    def constrained_row(self, rng: np.random.Generator) -> np.ndarray:
        """One `Worlds.hidden` row dealt by `deal_slots`: the other hands, the pile, the rest."""
        hands, pile = deal_slots(self.unseen, self.sizes, self.seat, self.pile, self.slots, rng)
        dealt = [card for s, hand in enumerate(hands) if s != self.seat for card in hand] + list(pile)
        left = np.bincount(np.asarray(dealt, dtype=np.int64), minlength=NUM_KINDS).tolist()
        rest = []  # the unseen cards not dealt, in their order (each dealt card takes its kind's first)
        for card in self.unseen.tolist():
            if left[card]:
                left[card] -= 1
            else:
                rest.append(card)
        return np.array(dealt + rest, dtype=np.int64)

    def world(self, worlds: Worlds, w: int, rng: np.random.Generator) -> Any:
        """World `w` of `worlds` as a whole state, with `rng` as its generator (the state's own)."""
        cards = worlds.hidden[w]
        hands: list[list[int]] = [list(self.own) for _ in self.sizes]
        spans, pile = self.spans
        for s, start, stop in spans:
            hands[s] = cards[start:stop].tolist()
        played = [] if self.top is None else [*worlds.under[w].tolist(), self.top]
        m = self.match
        match = Match(m.num_players, list(m.scores), m.dealer, list(m.streaks), m.hands_played)
        state = self.state.assembled(self.rules, rng, hands, cards[pile].tolist(), played, match, self.seat)
        for name, value in self.fields.items():
            setattr(state, name, copy.copy(value))  # a list field is the state's own, not shared by samples
        for name, options in self.picks.items():
            setattr(state, name, options[int(worlds.picks[name][w])])
        return state

    def sample(self, rng: np.random.Generator) -> Any:
        """A whole state: one world dealt from `rng` (`deal`), its own generator seeded from `rng`."""
        worlds = self.deal(rng, 1)
        return self.world(worlds, 0, np.random.default_rng(int(rng.integers(2**63))))

    def sample_into(self, engine: Any, slots: np.ndarray, rng: np.random.Generator) -> Worlds:
        """Deal one world per row of the (W, K) `slots` from `rng` and load it into the row's K slots of
        the batched `engine` (`BatchedEngine.load_worlds`); the worlds dealt."""
        worlds = self.deal(rng, int(np.shape(slots)[0]))
        engine.load_worlds(self, worlds, slots)
        return worlds


@dataclasses.dataclass(frozen=True)
class Worlds:
    """W worlds of one `Determinization`, as arrays (`Determinization.deal`)."""

    hidden: np.ndarray
    """(W, unseen) int64: each row a permutation of the unseen cards, laid out as `Determinization.spans`"""
    under: np.ndarray
    """(W, under) int64: each row a permutation of the played cards under the top card, bottom first"""
    picks: Mapping[str, np.ndarray]
    """per unobserved attribute (`Determinization.picks`), (W,) int64 indices into its options"""

    @property
    def count(self) -> int:
        """The number of worlds W."""
        return int(self.hidden.shape[0])

    def rows(self, which: np.ndarray | slice) -> Worlds:
        """The worlds `which` (indices or a slice) of these, in that order."""
        return Worlds(self.hidden[which], self.under[which],
                      {name: chosen[which] for name, chosen in self.picks.items()})


class Revealed(NamedTuple):
    """The hidden cards of a true state as a `Worlds.hidden` row lays them out (`revealed`)."""

    hands: np.ndarray
    """the other hands' cards, in `Determinization.spans` order"""
    pile: np.ndarray
    """the face-down pile's cards (dealt in a random order in each world)"""
    rest: np.ndarray
    """the unseen cards in no hand and not in the pile (a stacked deal's unused cards)"""

    def rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """(count, unseen) int64: the hands as they are, the pile shuffled from `rng` per row, the rest."""
        pile = rng.permuted(np.broadcast_to(self.pile, (count, self.pile.size)), axis=1)
        return np.concatenate([np.broadcast_to(self.hands, (count, self.hands.size)), pile,
                               np.broadcast_to(self.rest, (count, self.rest.size))], axis=1).astype(np.int64)


def revealed(known: Determinization, state: Any, seat: int) -> Determinization:
    """`known` dealing the true `state`'s other hands in every world: a cheat, for measured bounds only.

    `seat` is the observer's seat in `state` (`known.seat` in the worlds; the
    others follow in seat order). The face-down pile is dealt at random from
    its true cards (its order is no player's knowledge), the order under the
    top card and the picks as for any world; the record's slots are moot (the
    true hands fill them). A `ValueError` when the state does not fit the
    observation `known` was read from (other hand sizes, other unseen cards).
    """
    n = len(known.sizes)
    true_seat = [(seat + s - known.seat) % n for s in range(n)]
    hands = [np.asarray(state.hands[true_seat[s]], dtype=np.int64) for s in range(n)]
    found = [int(hand.sum()) for hand in hands]
    if found != list(known.sizes):
        raise ValueError(f"the true state's hands hold {found} cards from the observer's seat on, but the "
                         f"observation shows {list(known.sizes)}: is it the state of this observation?")
    spans, _pile = known.spans
    others = np.concatenate([cards(hands[s]) for s, _start, _stop in spans] or [np.empty(0, np.int64)])
    pile = np.sort(np.asarray(getattr(state, state.PILES[0]), dtype=np.int64))
    rest = np.sort(np.asarray(state.left_out, dtype=np.int64))
    if pile.size != known.pile or not np.array_equal(np.sort(np.concatenate([others, pile, rest])),
                                                     np.sort(known.unseen)):
        raise ValueError("the true state's other hands and piles are not the cards the observation leaves "
                         "unseen: is it the state of this observation?")
    return dataclasses.replace(known, truth=Revealed(others, pile, rest))


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


def observed_memory(part: np.ndarray | None, num_players: int, seat: int) -> list[int]:
    """Every seat's `drew_on` suit mask from `seat`'s `drew_on` field (`cardlab.envs.layout.memory_fields`).

    The seat's own is not observed: 0; without the field (no `memory` option) all are 0.
    """
    if part is None:
        return [0] * num_players
    bits = np.asarray(part).reshape(num_players - 1, NUM_SUITS)
    if not np.isin(bits, (0, 1)).all():
        raise unfit("field 'drew_on' holds values other than 0 and 1")
    return absolute([0, *(bits.astype(np.int64) @ (1 << np.arange(NUM_SUITS))).tolist()], seat)


def cards(counts: np.ndarray) -> np.ndarray:
    """Card ids, one entry per copy, of (NUM_KINDS,) counts."""
    return np.repeat(np.arange(NUM_KINDS), counts)


def unseen(deck: Sequence[int], *seen: np.ndarray) -> np.ndarray:
    """The deck's cards (one entry per copy) that are in none of the `seen` counts."""
    rest = np.asarray(deck, dtype=np.int64) - sum(seen)
    if (rest < 0).any():
        extra = ", ".join(card_str(int(c)) for c in np.flatnonzero(rest < 0)[:8])
        raise unfit(f"more copies of {extra} are seen than the deck holds")
    return cards(rest)


def under_top(counts: np.ndarray, top: int | None) -> np.ndarray:
    """The played cards but one copy of the top card (none played: no top card, else `unfit`)."""
    if top is None:
        if counts.any():
            raise unfit("cards are played but no top card is shown")
        return cards(counts)
    if counts[top] < 1:
        raise unfit(f"the top card {card_str(top)} is not among the played cards")
    rest = counts.copy()
    rest[top] -= 1
    return cards(rest)


def observed_match(scores: np.ndarray, target: int, streaks: np.ndarray | None, streak_length: int,
                   seat: int) -> Match:
    """The match as observed from `seat`: totals (and B12 streaks), the dealer the seat before `seat`."""
    n = len(scores)
    totals = absolute([round(float(v) * target) for v in scores], seat)
    runs = [0] * n if streaks is None else [whole(v, streak_length, "streaks") for v in streaks]
    return Match(n, totals, (seat - 1) % n, absolute(runs, seat))
