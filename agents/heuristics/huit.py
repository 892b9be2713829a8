"""Heuristic Huit américain players (RULES.md part B): `HuitGreedy` and `HuitExpert`.

Hands and card sets are Python int bitmasks over card ids (bit `c` set = card
`c` held): with one copy of each of 32 cards, set operations and
`int.bit_count` are all the expert's reckoning needs, and they are fast.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cardlab.agents.heuristics.common import HeuristicAgent, Score, p_lacks
from cardlab.envs import cards as C
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.observer import DECK_IDS

BIT = [1 << c for c in range(C.NUM_KINDS)]
RANK_BITS = {r: sum(BIT[C.make_card(r, s)] for s in range(C.NUM_SUITS)) for r in R.RANKS}
SUIT_BITS = [sum(BIT[C.make_card(r, s)] for r in R.RANKS) for s in range(C.NUM_SUITS)]
EIGHTS, ACES = RANK_BITS[C.EIGHT], RANK_BITS[C.ACE]
PLAIN = sum(BIT[c] for c in R.DECK_CARDS) & ~EIGHTS
RANK_POINTS = {r: int(R.POINTS[C.make_card(r, 0)]) for r in R.RANKS}
AGAIN = 3  # extra turns (Queens, 2 players) the expert looks ahead
# Per play action: the card it leaves on top, and the cards it lays as a bitmask.
TOP_CARD = [R.group_cards(a)[-1] if a < R.DRAW else -1 for a in range(R.NUM_ACTIONS)]
GROUP_BITS = [sum(BIT[c] for c in R.group_cards(a)) if a < R.DRAW else 0 for a in range(R.NUM_ACTIONS)]


def cards_of(mask: int) -> list[int]:
    """The card ids in a bitmask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def to_mask(vector: np.ndarray) -> int:
    """Bitmask of the cards marked in a 32-long observation slice (`DECK_CARDS` order)."""
    return sum(BIT[int(c)] for c in DECK_IDS[np.flatnonzero(vector > 0.5)])


def suit_counts(hand: int) -> list[int]:
    """Cards other than 8s held per suit (8s go on anything anyway)."""
    return [(hand & PLAIN & bits).bit_count() for bits in SUIT_BITS]


def groups(hand: int) -> int:
    """Turns needed to lay `hand` at best: one per rank, all 8s together."""
    return sum(1 for bits in RANK_BITS.values() if hand & bits)


def points(hand: int) -> int:
    """B11 value of a hand."""
    return sum(RANK_POINTS[r] * (hand & bits).bit_count() for r, bits in RANK_BITS.items())


def suit_after(action: int) -> int:
    """The current suit once `action` is laid: the announced one for 8s (B6), else the top's."""
    declared = R.ACTION_DECLARE[action]
    return R.ACTION_TOP[action] if declared == C.NO_SUIT else declared


@dataclasses.dataclass
class HuitView:
    """The observation of the seat to move, decoded. Seats are offsets from me (0)."""

    hand: int  # bitmask of my cards
    top: int | None  # None on an empty table (B4)
    suit: int | None
    announced: bool  # the suit was announced by 8s (B6)
    ace_penalty: bool  # I face a fresh Ace: Aces, 8s or draw 2 (B7)
    after_draw: bool  # I drew this turn: lay or pass (B9)
    sizes: list[int]  # cards held, me first, then seat order
    unknown: int  # bitmask of the cards neither in my hand nor on the table: other hands or the bank

    @property
    def n(self) -> int:
        return len(self.sizes)


def decode(agent: HeuristicAgent, observation: dict[str, np.ndarray]) -> HuitView:
    """Read the observation vector through the env's layout."""
    parts = agent.layout.split(observation["observation"])
    hand = to_mask(parts["hand"])
    played = to_mask(parts["played"])
    top = int(DECK_IDS[np.argmax(parts["top"])]) if parts["top"].any() else None
    return HuitView(
        hand=hand,
        top=top,
        suit=int(np.argmax(parts["suit"])) if parts["suit"].any() else None,
        announced=bool(parts["announced"][0] > 0.5),
        ace_penalty=bool(parts["ace_penalty"][0] > 0.5),
        after_draw=bool(parts["after_draw"][0] > 0.5),
        sizes=[hand.bit_count(), *np.rint(parts["opponents"] * 8).astype(int).tolist()],
        unknown=(PLAIN | EIGHTS) & ~hand & ~played,
    )


class HuitGreedy(HeuristicAgent):
    """A sensible rule-based Huit américain player.

    - It lays a group whenever it can, as many cards as possible, then the
      highest B11 value; 8s only when nothing else goes (they are the wild cards).
    - Facing a fresh Ace (B7) it answers with Aces if it can, else with 8s.
    - The card left on top (or the suit 8s announce) is the suit it holds most
      of afterwards.
    - It draws only when it cannot lay anything, then lays if it can, else passes.
    """

    name = "greedy"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = decode(self, observation)
        return self.best(self.legal(observation), lambda a: self.score(view, a))

    def score(self, view: HuitView, action: int) -> Score:
        if action == R.DRAW:
            return (-2.0,)
        if action == R.PASS:
            return (-1.0,)
        group = GROUP_BITS[action]
        held = suit_counts(view.hand & ~group)[suit_after(action)]
        return (float(R.ACTION_RANK[action] != C.EIGHT), float(R.ACTION_SIZE[action]), float(points(group)),
                float(held))


@dataclasses.dataclass(frozen=True)
class HuitWeights:
    """The expert's evaluation of the table when my turn ends: log-odds that I win the hand.

    A linear score of what I can see. The weights come from logistic fits of
    hand outcomes on greedy self-play positions (2 and 3-6 players), rounded,
    with `cards` and `eight` lowered where benchmarks showed the fit mistook
    correlation for cause.
    """

    cards: float  # each card I keep (more cards of the ranks I hold = more suits covered)
    groups: float  # each rank I keep: one more turn to go out
    eight: float  # I hold an 8: I can never be stuck
    ace: float  # I hold an Ace: I can answer a lock
    can_play: float  # chance that I can lay on a random unknown card
    can_now: float  # I can lay on the card I leave (if it is still on top at my turn)
    next_threat: float  # 1 / cards of the player who moves next
    other_threat: float  # the same summed over the other opponents
    skipped: float  # the player after me is skipped (Queens)
    stuck: float  # chance that the player who moves next cannot lay
    stuck_threat: float  # the same, divided by their cards: blocking matters most near the end
    stuck_ace: float  # ... when that means drawing 2 (a fresh Ace, B7)
    win: float = 12.0  # I go out


TWO_PLAYERS = HuitWeights(
    cards=0.0, groups=-1.0, eight=0.4, ace=0.0, can_play=0.25, can_now=0.2,
    next_threat=-4.0, other_threat=0.0, skipped=0.0, stuck=0.5, stuck_threat=3.0, stuck_ace=1.0,
)
MORE_PLAYERS = HuitWeights(
    cards=0.0, groups=-1.0, eight=0.4, ace=0.3, can_play=1.0, can_now=0.0,
    next_threat=-3.2, other_threat=-1.0, skipped=0.3, stuck=0.2, stuck_threat=2.4, stuck_ace=0.1,
)


class HuitExpert(HeuristicAgent):
    """The strongest rule-based Huit américain player here.

    It weighs every legal action by the log-odds of winning the hand once its
    turn ends (`HuitWeights`: a linear score of what it can see, fitted on
    self-play positions, then corrected where the fit confused cause and
    correlation, e.g. for holding many cards or hoarding 8s). What it tracks,
    as an attentive player would:

    - *Turns, not cards.* A hand takes one turn per rank held (all 8s go
      together), so it lays whole ranks and counts extra cards of a rank as
      free; it prefers lays that keep cards of many suits and ranks, so that it
      can follow whatever comes, and the card on top that it can follow itself.
    - *Unknown cards*: the 32 less its hand less the table. From them and an
      opponent's hand size it reckons the chance that the next player cannot
      lay on what it leaves (`common.p_lacks`): no card of the suit or rank and
      no 8, or on a fresh Ace no Ace and no 8 (B7). It picks the top card of a
      group, or the suit its 8s announce, with that in view.
    - *Who moves next* after Queens (B8): in 4-player play a Queen skips the
      next player (worth more the closer they are to going out); with 2
      players each Queen is another turn, and it looks up to 3 such turns ahead
      for the best follow-up (a Queen, then the rest of its hand).
    - *Aces* lock the table (B7): it plays them when the next player probably
      cannot answer, and values keeping one to answer locks.
    - *8s* are kept while something else can be laid (an 8 is a sure play,
      and the last card that always goes), but not hoarded: benchmarks show
      that drawing rather than laying a needed 8 loses.
    - *Drawing on purpose* (B9): the value of drawing is the expectation, over
      the unknown cards, of the best of laying or passing afterwards; it draws
      when that beats every lay it has.
    - *Going out* wins at once (B11), and is always taken.
    """

    name = "expert"

    def __init__(self, env: Any, seed: int | None = None) -> None:
        super().__init__(env, seed)
        self.weights = TWO_PLAYERS if self.rules.num_players == 2 else MORE_PLAYERS
        # A scratch engine state, to ask the rules which groups a hypothetical hand could lay.
        self.scratch = R.HuitState(self.rules, np.random.default_rng(0))

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = decode(self, observation)
        # Values met again along other lines of play (same hand and table) are reckoned once per turn.
        self.memo: dict[tuple[Any, ...], float] = {}
        return self.best(self.legal(observation), lambda a: (self.value(view, view.hand, a, AGAIN),))

    # ------------------------------------------------------------ rules
    def legal_in(self, hand: int, top: int | None, suit: int | None, after_draw: bool) -> list[int]:
        """Legal ids for me holding `hand` on `top`/`suit` (no fresh Ace)."""
        s = self.scratch
        held = np.zeros(C.NUM_KINDS, dtype=np.int64)
        held[cards_of(hand)] = 1
        s.hands[0] = held
        s.current, s.hand_over, s.ace_penalty = 0, False, False
        s.table = [] if top is None else [top]
        s.current_suit = suit
        s.phase = R.AFTER_DRAW if after_draw else R.PLAY
        return s.legal_actions()

    # ------------------------------------------------------------ values
    def value(self, view: HuitView, hand: int, action: int, again: int) -> float:
        """Value of `action` with `hand` in the position of `view`.

        When Queens give me another turn (2 players), my best next play counts,
        for up to `again` more turns.
        """
        if action == R.PASS:
            return self.static(view, hand, view.top, view.suit, False, 1)
        if action == R.DRAW:
            key = (hand, view.top, view.suit, view.ace_penalty)
            if key not in self.memo:
                self.memo[key] = self.draw_value(view, hand)
            return self.memo[key]
        rest = hand & ~GROUP_BITS[action]
        if not rest:
            return self.weights.win
        rank = R.ACTION_RANK[action]
        skips = 0
        if rank == C.QUEEN:
            skips = R.ACTION_SIZE[action] if self.rules.queen_skips_each else 1
        top = TOP_CARD[action]
        suit = suit_after(action)
        nxt = (1 + skips) % view.n
        if nxt == 0 and again:  # my turn again: the best follow-up counts
            follow = self.legal_in(rest, top, suit, False)
            later = dataclasses.replace(view, top=top, suit=suit, ace_penalty=False, after_draw=False)
            return max(self.value(later, rest, a, again - 1) for a in follow)
        return self.static(view, rest, top, suit, rank == C.ACE, nxt)

    def draw_value(self, view: HuitView, hand: int) -> float:
        """Expected value of drawing: over the unknown cards, the best of laying or passing after."""
        pool = cards_of(view.unknown)
        stay = self.static(view, hand, view.top, view.suit, False, 1)
        if not pool:
            return stay
        if view.ace_penalty:  # B7: two cards, and the turn ends; the next player faces the lock
            mean = sum(self.static(view, hand | BIT[c], view.top, view.suit, False, 1) for c in pool) / len(pool)
            return stay + 2 * (mean - stay)
        total = 0.0
        for card in pool:
            more = hand | BIT[card]
            options = self.legal_in(more, view.top, view.suit, True)
            total += max(self.value(view, more, a, 0) for a in options)
        return total / len(pool)

    @staticmethod
    def p_can_play(hand: int, unknown: int, pool: int) -> float:
        """Chance that I can lay on a card drawn from the unknown ones (by suit or rank, or an 8)."""
        if hand & EIGHTS or not pool:
            return 1.0
        can = 0
        for bits in SUIT_BITS:
            if hand & bits:
                can |= bits
        for bits in RANK_BITS.values():
            if hand & bits:
                can |= bits
        return (unknown & can).bit_count() / pool

    def static(self, view: HuitView, hand: int, top: int | None, suit: int | None,
               fresh_ace: bool, nxt: int) -> float:
        """Log-odds that I win once my turn ends with `hand`, `top`/`suit` on the table and seat `nxt` to move."""
        key = (hand, None if top is None else C.rank_of(top), suit, fresh_ace, nxt)
        if key not in self.memo:
            self.memo[key] = self._static(view, hand, top, suit, fresh_ace, nxt)
        return self.memo[key]

    def _static(self, view: HuitView, hand: int, top: int | None, suit: int | None,
                fresh_ace: bool, nxt: int) -> float:
        w = self.weights
        sizes = view.sizes
        unknown = view.unknown
        pool = unknown.bit_count()
        if top is None:
            can = PLAIN | EIGHTS
        elif C.rank_of(top) == C.ACE:
            can = ACES | EIGHTS
        else:
            can = EIGHTS | RANK_BITS[C.rank_of(top)] | SUIT_BITS[suit]  # type: ignore[index]
        value = (
            w.cards * hand.bit_count()
            + w.groups * groups(hand)
            + w.eight * bool(hand & EIGHTS)
            + w.ace * bool(hand & ACES)
            + w.can_play * self.p_can_play(hand, unknown, pool)
            + w.can_now * bool(hand & can)
        )
        # My turn again (Queens) beyond the look-ahead: if I can lay on my own card, it is as if the
        # player after me could not; if I cannot, I pass and they face it.
        again = nxt == 0
        nxt = nxt or 1
        stuck = 1.0 if again and hand & can else p_lacks(pool, (unknown & can).bit_count(), sizes[nxt])
        others = sum(1.0 / sizes[seat] for seat in range(1, view.n) if seat != nxt and sizes[seat])
        return value + (
            w.next_threat / sizes[nxt]
            + w.other_threat * others
            + w.skipped * (nxt != 1)
            + (w.stuck + w.stuck_threat / sizes[nxt]) * stuck
            + w.stuck_ace * stuck * fresh_ace
        )
