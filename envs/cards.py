"""The card notation of RULES.md, shared by both games.

A card *kind* is an int id. Duplicate cards (Switch plays with four decks) are
identical, so hands and piles are counted per kind. Ranks and suits are only
ever read through `rank_of` / `suit_of` and built through `make_card`; no other
module does arithmetic on raw ids.

Notation: rank then suit, ranks ``A 2 3 4 5 6 7 8 9 10 J Q K`` (``T`` accepted
as input for 10), suits ``S H D C``, and ``JOKER``. Examples: ``10H``, ``QS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cardlab.envs.checked_json import excerpt

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
SUIT_NAMES: tuple[str, ...] = ("spades", "hearts", "diamonds", "clubs")

ACE, TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING = range(13)
SPADES, HEARTS, DIAMONDS, CLUBS = range(4)
NUM_RANKS = len(RANKS)
NUM_SUITS = len(SUITS)

# Layout of card ids: the 52 suited cards first, then the joker.
NUM_SUITED = NUM_RANKS * NUM_SUITS
JOKER = NUM_SUITED
NUM_KINDS = JOKER + 1

NO_RANK = -1
NO_SUIT = -1

_RANK_OF: tuple[int, ...] = (*(c // NUM_SUITS for c in range(NUM_SUITED)), NO_RANK)
_SUIT_OF: tuple[int, ...] = (*(c % NUM_SUITS for c in range(NUM_SUITED)), NO_SUIT)


def make_card(rank: int, suit: int) -> int:
    """The id of the suited card of `rank` and `suit`."""
    if not (0 <= rank < NUM_RANKS and 0 <= suit < NUM_SUITS):
        raise ValueError(f"no card with rank index {rank} and suit index {suit}")
    return rank * NUM_SUITS + suit


def rank_of(card: int) -> int:
    """Rank index of `card` (`NO_RANK` for the joker)."""
    return _RANK_OF[card]


def suit_of(card: int) -> int:
    """Suit index of `card` (`NO_SUIT` for the joker)."""
    return _SUIT_OF[card]


def card_str(card: int) -> str:
    """`card` in the notation of RULES.md, e.g. ``10H`` or ``JOKER``."""
    if card == JOKER:
        return "JOKER"
    return RANKS[_RANK_OF[card]] + SUITS[_SUIT_OF[card]]


def suit_str(suit: int) -> str:
    return SUITS[suit]


def parse_suit(text: str) -> int:
    """Parse a suit letter (``S H D C``, any case)."""
    s = text.strip().upper()
    if s not in SUITS:
        raise ValueError(f"unknown suit {excerpt(text)}: expected one of {' '.join(SUITS)}")
    return SUITS.index(s)


def parse_card(text: str, ranks: Sequence[str] = RANKS) -> int:
    """Parse one card such as ``10H``, ``TH``, ``qs`` or ``JOKER``.

    `ranks`: the ranks an unknown rank's error lists (a game's own deck, e.g.
    Huit's 7 to A), so the hint names only cards that game has.
    """
    s = text.strip().upper()
    if s == "JOKER":
        return JOKER
    if len(s) < 2:
        raise ValueError(
            f"cannot read card {excerpt(text)}: expected rank then suit, e.g. 10H, QS, 8D, or JOKER"
        )
    rank_txt, suit_txt = s[:-1], s[-1]
    if rank_txt == "T":
        rank_txt = "10"
    if rank_txt not in RANKS:
        raise ValueError(
            f"cannot read card {excerpt(text)}: unknown rank {excerpt(rank_txt)}, expected one of "
            f"{' '.join(ranks)} (or T for 10)"
        )
    if suit_txt not in SUITS:
        raise ValueError(
            f"cannot read card {excerpt(text)}: unknown suit {excerpt(suit_txt)}, expected one of "
            f"{' '.join(SUITS)}"
        )
    return make_card(RANKS.index(rank_txt), SUITS.index(suit_txt))


def counts_to_cards(counts: Sequence[int]) -> list[int]:
    """Expand per-kind counts into a sorted list of card ids."""
    return [c for c, n in enumerate(counts) for _ in range(n)]


def cards_to_counts(cards: Iterable[int]) -> list[int]:
    counts = [0] * NUM_KINDS
    for c in cards:
        counts[c] += 1
    return counts


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(card_str(c) for c in cards)


def parse_card_list(items: Sequence[str], where: str) -> list[int]:
    """Parse a list (or tuple) of card strings; errors name `where` (e.g. ``hands[2]``).

    Only lists and tuples are read: a dict or a set would be iterated silently
    (a dict by its keys, a set in no fixed order), hiding the mistake.
    """
    if isinstance(items, str):
        raise ValueError(f"{where}: expected a list of card strings, got the string {excerpt(items)}")
    if not isinstance(items, (list, tuple)):
        raise ValueError(
            f"{where}: expected a list of card strings such as ['9S', '10H'], "
            f"got {type(items).__name__} {excerpt(items)}"
        )
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{where}[{i}]: expected a card string such as '10H', got {excerpt(item)}")
        try:
            out.append(parse_card(item))
        except ValueError as err:
            raise ValueError(f"{where}[{i}]: {err}") from None
    return out
