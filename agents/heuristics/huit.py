"""Heuristic Huit américain players (RULES.md part B): `HuitGreedy` and `HuitExpert`.

They read hands as card bitmasks and tables through the rule tables of
`cardlab.envs.huit.heuristics.tables`, so that the expert's look-ahead over
hypothetical hands stays fast.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable

import numpy as np

from cardlab.agents.base import checked_batch
from cardlab.agents.heuristics.common import HeuristicAgent, Score
from cardlab.envs import cards as C
from cardlab.envs.fast import EXPERT, GREEDY, CompiledPolicy
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.heuristics import kernels as K
from cardlab.envs.huit.heuristics.arrays import TABLES_ARRAYS, expert_arrays, observation_offsets
from cardlab.envs.huit.heuristics.tables import (
    BIT,
    EIGHTS,
    GROUP_BITS,
    PASSED,
    PLAIN,
    RANKS_HELD,
    REACH,
    Follow,
    Outcome,
    cards_of,
    follow_of,
    lay_plays,
    legal_lays,
    plays_for,
    points,
    shape,
    suit_after,
    suit_counts,
    to_mask,
)
from cardlab.envs.policy_kernels import p_lacks
from cardlab.envs.spec import Game

AGAIN = K.AGAIN  # extra turns (Queens, 2 players) the expert looks ahead
# `p_lacks` memoised: its arguments are small counts (unknown, wanted, held cards), met again and again.
cached_p_lacks = functools.cache(p_lacks)


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
    vector = observation["observation"]
    at = agent.layout.slices
    hand = to_mask(vector[at["hand"]])
    played = to_mask(vector[at["played"]])
    top_part, suit_part = vector[at["top"]], vector[at["suit"]]
    top = int(top_part.argmax())
    suit = int(suit_part.argmax())
    return HuitView(
        hand=hand,
        top=R.DECK_CARDS[top] if top_part[top] else None,
        suit=suit if suit_part[suit] else None,
        announced=bool(vector[at["announced"].start] > 0.5),
        ace_penalty=bool(vector[at["ace_penalty"].start] > 0.5),
        after_draw=bool(vector[at["after_draw"].start] > 0.5),
        sizes=[hand.bit_count(), *(round(v * 8) for v in vector[at["opponents"]].tolist())],
        unknown=(PLAIN | EIGHTS) & ~hand & ~played,
    )


def added(values: Iterable[float]) -> float:
    """The sum of `values`, added left to right as the compiled expert adds them (`heuristics.kernels`).

    Not `sum`: from Python 3.12 it compensates rounding, and the last bits of
    a value decide ties after rounding (`HeuristicAgent.best`).
    """
    total = 0.0
    for value in values:
        total += value
    return total


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

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in order, in one compiled call (`heuristics.kernels.greedy_batch`)."""
        obs, legal = checked_batch(self.game, observations, masks)
        return K.greedy_batch(obs, legal, self.layout.slices["hand"].start, TABLES_ARRAYS, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The greedy kernel the game's fast paths call (`cardlab.envs.huit.fast`)."""
        return CompiledPolicy(GREEDY, self.game.rules, self) if type(self) is HuitGreedy else None

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


@functools.cache
def known_terms(weights: HuitWeights) -> tuple[tuple[float, ...], ...]:
    """The terms of the value of a hand that hold whatever the unknown cards, tabulated.

    Indexed by the ranks of the hand's shape (`shape(hand) & RANKS_HELD`),
    then by its number of cards; each is summed as `HuitExpert.hand_value`
    would, term by term.
    """
    w = weights
    eight, ace = 1 << R.RANKS.index(C.EIGHT), 1 << R.RANKS.index(C.ACE)
    return tuple(
        tuple(
            w.cards * cards
            + w.groups * ranks.bit_count()
            + w.eight * bool(ranks & eight)
            + w.ace * bool(ranks & ace)
            for cards in range(len(R.DECK_CARDS) + 1)
        )
        for ranks in range(RANKS_HELD + 1)
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
      lay on what it leaves (`policy_kernels.p_lacks`): no card of the suit or rank and
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

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.weights = TWO_PLAYERS if self.rules.num_players == 2 else MORE_PLAYERS
        self.known = known_terms(self.weights)
        self.plays = plays_for(self.rules.num_players, self.rules.queen_skips_each)
        self.arrays = expert_arrays(self.weights, self.known, self.rules.num_players,
                                    self.rules.queen_skips_each)
        self.offsets = observation_offsets(self.layout)
        # What is known this turn (see `start_turn`).
        self.sizes: list[int] = []
        self.unknown = self.pool_size = 0
        self.pool: list[int] = []
        self.seat_terms: list[tuple[float, float] | None] = []
        self.hand_values: dict[int, float] = {}
        self.threats: dict[Outcome, tuple[float, float]] = {}
        self.memo: dict[tuple[int, Follow, bool], float] = {}

    def start_turn(self, view: HuitView) -> None:
        """Take in what is known this turn, and forget the values reckoned on the last one.

        Values met again along other lines of play (same hand and table) are
        reckoned once per turn: hypothetical hands in `hand_values`, the
        threat terms of a table and next seat in `threats`, draws in `memo`.
        """
        self.sizes = view.sizes
        self.unknown = view.unknown
        self.pool_size = view.unknown.bit_count()
        self.pool = [BIT[c] for c in cards_of(view.unknown)]
        self.seat_terms = [None] * view.n
        self.hand_values = {}
        self.threats = {}
        self.memo = {}

    def act(self, observation: dict[str, np.ndarray]) -> int:
        values = self.values(observation)
        return self.best(list(values), lambda a: (values[a],))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in order, in one compiled call (`heuristics.kernels.expert_batch`)."""
        obs, legal = checked_batch(self.game, observations, masks)
        return K.expert_batch(obs, legal, self.offsets, self.rules.num_players, AGAIN, *self.arrays,
                              TABLES_ARRAYS, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The expert kernel the game's fast paths call (`cardlab.envs.huit.fast`), its parameters
        (`kernel_params`) those `act_batch` passes."""
        return CompiledPolicy(EXPERT, self.game.rules, self, self.kernel_params) if type(self) is HuitExpert \
            else None

    def kernel_params(self) -> tuple[np.ndarray, ...]:
        """(observation offsets, int table, float table): what the expert kernel reads of this agent."""
        return (self.offsets, *self.arrays)

    def values_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, num_actions) float64: the `value` of each legal action of each row, NaN elsewhere, compiled.

        What `act_batch` ranks (before `best` rounds it), for analysis and for
        the tests that hold the compiled values to the Python ones.
        """
        obs, legal = checked_batch(self.game, observations, masks)
        return K.expert_values(obs, legal, self.offsets, self.rules.num_players, AGAIN, *self.arrays,
                               TABLES_ARRAYS)

    def values(self, observation: dict[str, np.ndarray]) -> dict[int, float]:
        """Legal action -> its `value`, as `act` reckons it (unrounded)."""
        view = decode(self, observation)
        self.start_turn(view)
        table = follow_of(view.top, view.suit)
        return {a: self.value(view.hand, a, table, view.ace_penalty, AGAIN) for a in self.legal(observation)}

    # ------------------------------------------------------------ values
    def value(self, hand: int, action: int, table: Follow, ace_penalty: bool, again: int) -> float:
        """Value of `action` with `hand` on `table` (a fresh Ace if `ace_penalty`).

        When Queens give me another turn (2 players), my best next play counts,
        for up to `again` more turns.
        """
        if action == R.PASS:
            return self.static(hand, PASSED[table])
        if action == R.DRAW:
            key = (hand, table, ace_penalty)
            if key not in self.memo:
                self.memo[key] = self.draw_value(hand, table, ace_penalty)
            return self.memo[key]
        keep, end = self.plays[action]
        rest = hand & keep
        if not rest:
            return self.weights.win
        if end.again and again:  # my turn again: the best follow-up counts
            after = end.table
            return max(self.value(rest, a, after, False, again - 1) for a in legal_lays(rest, after, False))
        return self.static(rest, end)

    def draw_value(self, hand: int, table: Follow, ace_penalty: bool) -> float:
        """Expected value of drawing: over the unknown cards, the best of laying or passing after.

        After a draw there is no look-ahead (`value` with `again` 0), which is
        spelt out in the loop: it is where the expert spends its time.
        """
        pool = self.pool
        passed = PASSED[table]
        static = self.static
        stay = static(hand, passed)
        if not pool:
            return stay
        if ace_penalty:  # B7: two cards, and the turn ends; the next player faces the lock
            mean = added(static(hand | bit, passed) for bit in pool) / len(pool)
            return stay + 2 * (mean - stay)
        w = self.weights
        win = w.win
        can_now, cannot_now = w.can_now * True, w.can_now * False  # `w.can_now * bool(can)`, as in `static`
        hand_values, threats = self.hand_values, self.threats
        lays = lay_plays(table, self.rules.num_players, self.rules.queen_skips_each)
        total = 0.0
        for bit in pool:
            more = hand | bit
            best = static(more, passed)
            for bits, plays in lays:  # the lays of `legal_lays(more, table, True)`, written out
                held = more & bits
                if not held:
                    continue
                for keep, end in plays[held]:
                    rest = more & keep
                    if not rest:
                        value = win
                    else:  # `static(rest, end)`, inlined
                        known = hand_values.get(rest)
                        if known is None:
                            known = hand_values[rest] = self.hand_value(rest)
                        terms = threats.get(end)
                        if terms is None:
                            terms = threats[end] = self.threat_terms(end)
                        can = rest & end.can
                        follow = 1 if end.again and can else 0
                        value = known + (can_now if can else cannot_now) + terms[follow]
                    if value > best:
                        best = value
            total += best
        return total / len(pool)

    def static(self, hand: int, end: Outcome) -> float:
        """Log-odds that I win once my turn ends with `hand`, as `end` says.

        The `HuitWeights` sum splits into the terms of my hand alone
        (`hand_value`), whether I can follow the table I leave (`can_now`), and
        the terms of how the turn ends (`threat_terms`: they need my hand only
        to know if I can follow my own card). The first and last are reckoned
        once per turn; the parts are added in the order of the whole sum, so
        that the floats, hence the ties between actions, are the same.
        """
        value = self.hand_values.get(hand)
        if value is None:
            value = self.hand_values[hand] = self.hand_value(hand)
        threats = self.threats.get(end)
        if threats is None:
            threats = self.threats[end] = self.threat_terms(end)
        can = hand & end.can
        return value + self.weights.can_now * bool(can) + threats[1 if end.again and can else 0]

    def hand_value(self, hand: int) -> float:
        """The terms of `static` that depend on my hand alone (and the unknown cards).

        They are, in order: per card, per rank (turns to go), holding an 8,
        holding an Ace (`known_terms`), and the chance that I can lay on a card
        drawn from the unknown ones (by suit or rank, or an 8).
        """
        form = shape(hand)
        pool = self.pool_size
        return self.known[form & RANKS_HELD][hand.bit_count()] + self.weights.can_play * (
            1.0 if hand & EIGHTS or not pool else (self.unknown & REACH[form]).bit_count() / pool
        )

    def threat_terms(self, end: Outcome) -> tuple[float, float]:
        """The terms of `static` that depend on how my turn ends, not on my hand.

        The first is for when the next player is stuck as likely as `stuck_chance` says; the
        second for my own turn again (Queens) beyond the look-ahead while I can
        lay on my own card: as if the player after me could not. If I cannot,
        I pass and they face it (the first).
        """
        w = self.weights
        seat = end.nxt or 1
        fresh_ace = end.fresh_ace
        seat_terms = self.seat_terms[seat]
        if seat_terms is None:
            seat_terms = self.seat_terms[seat] = self.seat_terms_of(seat)
        ahead, per_stuck = seat_terms
        lacks = self.stuck_chance(seat, end.can)
        return (ahead + per_stuck * lacks + w.stuck_ace * lacks * fresh_ace,
                ahead + per_stuck * 1.0 + w.stuck_ace * 1.0 * fresh_ace)

    def stuck_chance(self, seat: int, can: int) -> float:
        """Chance that `seat` holds none of the cards `can` (its cards spread at random over the unknown).

        The one place the expert guesses at a hand it cannot see: a player who reads more overrides it.
        """
        return cached_p_lacks(self.pool_size, (self.unknown & can).bit_count(), self.sizes[seat])

    def seat_terms_of(self, seat: int) -> tuple[float, float]:
        """The threat terms of `seat` moving next: those before its chance to be stuck, and that
        chance's weight."""
        w = self.weights
        sizes = self.sizes
        others = added(1.0 / sizes[s] for s in range(1, len(sizes)) if s != seat and sizes[s])
        ahead = w.next_threat / sizes[seat] + w.other_threat * others + w.skipped * (seat != 1)
        return ahead, w.stuck + w.stuck_threat / sizes[seat]
