"""Huit américain: the rules engine (docs/RULES.md, part B, and C1-C2).

Pure game logic: an explicit `HuitState`, an injected `np.random.Generator`,
no gymnasium or PettingZoo. Each rule is implemented where its id is cited;
the rules and every decision the engine adds to them (the order of the cards
under a group's top, B5; Queens that never skip their layer, B8; a truncated
hand that breaks every streak, B12) are written in docs/RULES.md.

The engine always keeps the memory of the hand, `drew_on[seat]`: a 4-bit
suit mask with the current suit's bit set when the seat draws of its own
accord (not B7's penalty) and the bits of the suits it lays cleared. It is
public, not a rule of play; the observer shows it only with `memory`.

Action ids (`NUM_ACTIONS` = 354) are chained constants: `PLAY_GROUP` +
32*r + g lays group g (a set of suits and the suit laid last) of
`PLAIN_RANKS[r]`, `PLAY_EIGHTS` + 4*g + s lays 8s and announces suit s, then
`DRAW` and `PASS`. Their text form (``play 9S 9H``, ``play 8C 8D declare
S``, ``draw``, ``pass``) and the table in docs/envs.md come from here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.action_text import split_action_text
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import KIND, RANGE, option, refusal
from cardlab.envs.hand import END_KEYS, HandState
from cardlab.envs.options import MEMORY_DOC, RULE, RuleOptions
from cardlab.envs.rng import rng_state
from cardlab.envs.state_checks import (
    check_deal,
    check_keys,
    field_error,
    match_from_deal,
    refuse_empty_hands,
    saved_bool,
    saved_choice,
    saved_suit_masks,
    suit_letters,
)

# ---------------------------------------------------------------- cards and points
RANKS: tuple[int, ...] = (C.SEVEN, C.EIGHT, C.NINE, C.TEN, C.JACK, C.QUEEN, C.KING, C.ACE)
DECK_CARDS: tuple[int, ...] = tuple(C.make_card(r, s) for r in RANKS for s in range(C.NUM_SUITS))
DECK_RANKS: tuple[str, ...] = tuple(C.RANKS[r] for r in RANKS)
"""the rank names of the 32-card deck, as a bad card's error lists them"""
PLAIN_RANKS: tuple[int, ...] = tuple(r for r in RANKS if r != C.EIGHT)
_RANK_POINTS = {C.EIGHT: 32, C.ACE: 11, C.TEN: 10, C.NINE: 9, C.SEVEN: 7, C.KING: 4, C.QUEEN: 3, C.JACK: 2}
POINTS = np.zeros(C.NUM_KINDS, dtype=np.int64)
for _card in DECK_CARDS:
    POINTS[_card] = _RANK_POINTS[C.rank_of(_card)]

# ---------------------------------------------------------------- action table
# GROUPS[g] = (suit mask, top suit); GROUPS_PER_RANK = 32.
GROUPS: tuple[tuple[int, int], ...] = tuple(
    (mask, top) for mask in range(1, 1 << C.NUM_SUITS) for top in range(C.NUM_SUITS) if mask >> top & 1
)
GROUPS_PER_RANK = len(GROUPS)

PLAY_GROUP = 0
PLAY_EIGHTS = PLAY_GROUP + len(PLAIN_RANKS) * GROUPS_PER_RANK
DRAW = PLAY_EIGHTS + GROUPS_PER_RANK * C.NUM_SUITS
PASS = DRAW + 1
NUM_ACTIONS = PASS + 1

NO_RANK = C.NO_RANK
ACE_DRAW = 2
"""Cards a fresh Ace makes the next player draw unless they answer it (B7)."""
ACTION_RANK: list[int] = [NO_RANK] * NUM_ACTIONS
ACTION_MASK: list[int] = [0] * NUM_ACTIONS
ACTION_TOP: list[int] = [C.NO_SUIT] * NUM_ACTIONS
ACTION_DECLARE: list[int] = [C.NO_SUIT] * NUM_ACTIONS
ACTION_SIZE: list[int] = [0] * NUM_ACTIONS
_GROUP_ACTION: dict[tuple[int, int, int, int], int] = {}
for _r, _rank in enumerate(PLAIN_RANKS):
    for _g, (_mask, _top) in enumerate(GROUPS):
        _a = PLAY_GROUP + _r * GROUPS_PER_RANK + _g
        ACTION_RANK[_a], ACTION_MASK[_a], ACTION_TOP[_a] = _rank, _mask, _top
        _GROUP_ACTION[(_rank, _mask, _top, C.NO_SUIT)] = _a
for _g, (_mask, _top) in enumerate(GROUPS):
    for _s in range(C.NUM_SUITS):
        _a = PLAY_EIGHTS + _g * C.NUM_SUITS + _s
        ACTION_RANK[_a], ACTION_MASK[_a], ACTION_TOP[_a], ACTION_DECLARE[_a] = C.EIGHT, _mask, _top, _s
        _GROUP_ACTION[(C.EIGHT, _mask, _top, _s)] = _a
for _a in range(DRAW):
    ACTION_SIZE[_a] = bin(ACTION_MASK[_a]).count("1")


def _candidates(rank: int, held: int) -> tuple[tuple[int, int, int, int], ...]:
    """(action, size, suit mask, top suit) of every group of `rank` within the held suits."""
    out = []
    for (rank_, mask, top, _declare), action in _GROUP_ACTION.items():
        if rank_ == rank and mask & held == mask:
            out.append((action, ACTION_SIZE[action], mask, top))
    return tuple(sorted(out))


# CANDIDATES[rank][held suit mask]: the groups a hand can lay, before the rules filter them.
CANDIDATES: dict[int, list[tuple[tuple[int, int, int, int], ...]]] = {
    r: [_candidates(r, held) for held in range(1 << C.NUM_SUITS)] for r in RANKS
}


def group_cards(action: int) -> list[int]:
    """Cards an action lays, in the canonical order: others by suit, then the top."""
    rank, mask, top = ACTION_RANK[action], ACTION_MASK[action], ACTION_TOP[action]
    below = [C.make_card(rank, s) for s in range(C.NUM_SUITS) if mask >> s & 1 and s != top]
    return [*below, C.make_card(rank, top)]


def action_to_str(action: int) -> str:
    """Text of an action id, e.g. ``play 9S 9H`` or ``play 8C 8D declare S``."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action id {excerpt(action)} is out of range: Huit ids are 0..{NUM_ACTIONS - 1}")
    if action == DRAW:
        return "draw"
    if action == PASS:
        return "pass"
    text = "play " + C.format_cards(group_cards(action))
    if ACTION_DECLARE[action] != C.NO_SUIT:
        text += f" declare {C.suit_str(ACTION_DECLARE[action])}"
    return text


GRAMMAR = "'draw', 'pass', 'play C1 ... Ck' (cards of one rank, last on top) or 'play 8X ... declare S'"


def str_to_action(text: str) -> int:
    """Action id of a text such as ``play 9S 9H``; a `ValueError` says what is wrong."""
    parsed = split_action_text(text, GRAMMAR, ("draw", "pass", "play"))
    if parsed.verb == "draw":
        return DRAW
    if parsed.verb == "pass":
        return PASS
    declare = parsed.declare
    cards = [C.parse_card(t, DECK_RANKS) for t in parsed.cards]
    for card in cards:
        if card not in DECK_CARDS:
            raise ValueError(f"{excerpt(text)}: {C.card_str(card)} is not in the 32-card deck (B1: 7 to A)")
    rank = C.rank_of(cards[0])
    if any(C.rank_of(c) != rank for c in cards):
        raise ValueError(f"{excerpt(text)}: the cards laid together must share one rank (B5)")
    mask = 0
    for card in cards:
        bit = 1 << C.suit_of(card)
        if mask & bit:
            raise ValueError(f"{excerpt(text)}: {C.card_str(card)} appears twice")
        mask |= bit
    if rank == C.EIGHT and declare == C.NO_SUIT:
        raise ValueError(f"{excerpt(text)}: 8s announce a suit (B6): add 'declare S' (S, H, D or C)")
    if rank != C.EIGHT and declare != C.NO_SUIT:
        raise ValueError(f"{excerpt(text)}: only 8s announce a suit (B6)")
    return _GROUP_ACTION[(rank, mask, C.suit_of(cards[-1]), declare)]


# Card ids by (rank in RANKS order, suit), and suit bits, to read held suit masks in one product.
_RANK_SUIT_IDS = np.array([[C.make_card(r, s) for s in range(C.NUM_SUITS)] for r in RANKS], dtype=np.int64)
_SUIT_BITS = np.array([1 << s for s in range(C.NUM_SUITS)], dtype=np.int64)

# Phases of a turn.
PLAY, AFTER_DRAW = 0, 1
PHASE_NAMES = ("play", "after_draw")


@dataclasses.dataclass(frozen=True)
class HuitRules(RuleOptions):
    """Huit américain rule options, defaults as in RULES.md."""

    GAME: ClassVar[str] = "huit"

    num_players: int = option(4, "players at the table (B2)", 2, 6)
    hand_size: int | str = option(5, "cards dealt to each player, or 'all' for every card that divides "
                                  "equally (B2)", words="1 to 32 // num_players, or 'all'")
    queen_skips_each: bool = option(True, "several Queens skip one player each; false: one skip however "
                                    "many (B8)")
    shuffle_on_refill: bool = option(False, "shuffle the table into the new bank instead of turning it "
                                     "over (B10)")
    target_score: int = option(151, "a match ends after a hand in which a total reaches this (B13)", 1)
    streak_length: int = option(3, "hand wins in a row that earn the bonus (B12)", 1)
    streak_bonus: int = option(10, "points taken off the total for a streak (B12)", 0)
    max_turns: int = option(1000, "actions in a hand before it is truncated (C1)", 1)
    memory: bool = option(False, MEMORY_DOC)

    def validate(self) -> None:
        if self.hand_size == "all":
            return
        if isinstance(self.hand_size, bool) or not isinstance(self.hand_size, int):
            raise ValueError(refusal("hand_size", self.hand_size, KIND, "a whole number or 'all'", RULE))
        most = len(DECK_CARDS) // self.num_players
        if not 1 <= self.hand_size <= most:
            raise ValueError(refusal("hand_size", self.hand_size, RANGE,
                                     f"1 to {most} for {self.num_players} players, or 'all'", RULE))

    def cards_each(self) -> int:
        return len(DECK_CARDS) // self.num_players if self.hand_size == "all" else int(self.hand_size)

    def deck(self) -> list[int]:
        counts = [0] * C.NUM_KINDS
        for card in DECK_CARDS:
            counts[card] = 1
        return counts


SAVED_KEYS = (
    "game", "rules", "hands", "bank", "table", "current_player", "current_suit", "announced",
    "ace_penalty", "phase", *END_KEYS, "rng",
)


class HuitState(HandState):
    """One match of Huit américain: the current hand plus the match totals."""

    GAME = "huit"
    POINTS = POINTS
    SAVED_KEYS = SAVED_KEYS
    PILES = ('bank', 'table')
    STREAK = True

    # ------------------------------------------------------------ dealing
    def _reset_hand(self) -> None:
        self._load_hands([[] for _ in range(self.n)])
        self.bank: list[int] = []
        self.table: list[int] = []
        self.current_suit: int | None = None
        self.announced = False
        self.ace_penalty = False
        self.phase = PLAY
        self.drew_on: list[int] = [0] * self.n
        self._reset_end()

    def deal_shuffled(self) -> None:
        """B2: shuffle, deal one at a time from the dealer's next seat; the rest is the bank."""
        self._reset_hand()
        pack = list(DECK_CARDS)
        self.rng.shuffle(pack)
        each = self.rules.cards_each()
        dealt: list[list[int]] = [[] for _ in range(self.n)]
        for i in range(each * self.n):
            dealt[(self.match.dealer + 1 + i) % self.n].append(pack.pop())
        self._set_cards(dealt, pack[::-1], [])
        self._start_record(True, self.sizes)
        self.current = (self.match.dealer + 1) % self.n

    def deal_stacked(self, deal: dict[str, Any]) -> None:
        """Start a hand from a given deal (keys: hands, bank, dealer?, scores?)."""
        check_keys(deal, ["hands"], ["bank", "dealer", "scores"], "Huit deal")
        hands, piles = check_deal(deal["hands"], {"bank": deal.get("bank", [])}, self.n, self.deck)
        refuse_empty_hands(hands)  # B11 would end the hand before it starts
        self.match = match_from_deal(deal, self.n, self.rules.target_score)
        self._reset_hand()
        self._set_cards(hands, piles["bank"], [])
        self._start_record(True, self.sizes)
        self.current = (self.match.dealer + 1) % self.n

    # ------------------------------------------------------------ queries
    @property
    def top(self) -> int | None:
        return self.table[-1] if self.table else None

    def held_masks(self, seat: int) -> list[tuple[int, int]]:
        """(rank, suit bitmask held) for each rank the seat holds, in `RANKS` order."""
        masks = (self.hands[seat][_RANK_SUIT_IDS] @ _SUIT_BITS).tolist()
        return [(rank, held) for rank, held in zip(RANKS, masks, strict=True) if held]

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids for the player to move (empty once the hand is over)."""
        if self.hand_over:
            return []
        actions: list[int] = []
        top = self.table[-1] if self.table else None
        top_rank = C.NO_RANK if top is None else C.rank_of(top)
        suit = self.current_suit
        for rank, held in self.held_masks(self.current):
            candidates = CANDIDATES[rank][held]
            if top is None:  # B4
                actions.extend(a for a, size, _m, _t in candidates if size == 1 or rank == C.EIGHT)
            elif rank == C.EIGHT or rank == top_rank:  # B6, B5 by rank
                actions.extend(a for a, _s, _m, _t in candidates)
            elif top_rank == C.ACE:  # B7
                continue
            else:  # B5 by suit: the first card laid has the current suit
                bit = 1 << suit  # type: ignore[operator]
                actions.extend(
                    a for a, size, mask, t in candidates
                    if mask & bit and (t == suit if size == 1 else t != suit)
                )
        if self.phase == AFTER_DRAW:
            actions.append(PASS)
        else:
            actions.append(DRAW)
        return sorted(actions)

    # ------------------------------------------------------------ moves
    def apply(self, action: int) -> None:
        """Apply a legal action id (the caller checks legality; see `legal_actions`)."""
        seat = self.current
        if action == DRAW:
            self._draw(seat)
        elif action == PASS:
            self._note_pass(seat)
            self._end_turn(seat, 0)
        else:
            self._play(seat, action)
        self._count_turn()

    def _play(self, seat: int, action: int) -> None:
        cards = group_cards(action)
        if self.table and ACTION_SIZE[action] > 1:
            cards = self._first_matching(cards)
        hand = self.hands[seat]
        for card in cards:
            hand[card] -= 1
        self.sizes[seat] -= len(cards)
        self.drew_on[seat] &= ~ACTION_MASK[action]
        self._lay(cards, seat, ACTION_DECLARE[action])
        if self.sizes[seat] == 0:  # B11
            self._finish(seat)
            return
        rank = ACTION_RANK[action]
        if rank == C.EIGHT:
            self.current_suit = ACTION_DECLARE[action]
            self.announced = True
        else:
            self.current_suit = ACTION_TOP[action]
            self.announced = False
        skips = 0
        if rank == C.QUEEN:
            # B8: one skip per Queen (or one in all), never round to the player who laid them.
            skips = min(ACTION_SIZE[action] if self.rules.queen_skips_each else 1, self.n - 1)
        self._end_turn(seat, skips)
        self.ace_penalty = rank == C.ACE

    def _first_matching(self, cards: list[int]) -> list[int]:
        """Order a group so that its first card matches the top card (B5).

        `cards` come in `group_cards` order (the others by suit, then the top); the
        matching card moves to the front and the others keep their suit order.
        """
        top_rank = C.rank_of(self.table[-1])
        if C.rank_of(cards[0]) in (top_rank, C.EIGHT):
            return cards
        first = next(c for c in cards[:-1] if C.suit_of(c) == self.current_suit)
        return [first, *(c for c in cards if c != first)]

    def _draw(self, seat: int) -> None:
        if not self.ace_penalty and self.current_suit is not None:  # a draw of its own accord
            self.drew_on[seat] |= 1 << self.current_suit
        count = ACE_DRAW if self.ace_penalty else 1
        self._draw_cards(seat, count, self.ace_penalty)
        if self.ace_penalty:  # B7: the 2-card penalty ends the turn
            self._end_turn(seat, 0)
        else:
            self.phase = AFTER_DRAW

    def _refill(self, cards: list[int]) -> list[int]:
        """B10: the played cards become the bank, turned over (or shuffled)."""
        if self.rules.shuffle_on_refill:
            out = list(cards)
            self.rng.shuffle(out)
            return out
        # Turned over: the bottom played card ends on top, i.e. at the end of the list.
        return list(reversed(cards))

    def _end_turn(self, seat: int, skips: int) -> None:
        self.phase = PLAY
        self.ace_penalty = False
        self.current = (seat + 1 + skips) % self.n

    # ------------------------------------------------------------ saved states
    def state_dict(self) -> dict[str, Any]:
        """The full state as JSON-serialisable data (keys documented in `huit_v1`)."""
        return {
            **self._saved_cards(),
            "current_player": self.current,
            "current_suit": None if self.current_suit is None else C.suit_str(self.current_suit),
            "announced": self.announced,
            "ace_penalty": self.ace_penalty,
            "phase": PHASE_NAMES[self.phase],
            "drew_on": [suit_letters(mask) for mask in self.drew_on],
            **self._end_fields(),
            "rng": rng_state(self.rng),
        }

    @classmethod
    def from_state_dict(cls, data: dict[str, Any], rules: HuitRules) -> HuitState:
        """Restore a state saved by `state_dict` (the rules must be the saved ones).

        Every field is checked, alone and against the others; a `ValueError` names
        the field, what was wrong and what is accepted.
        """
        self = cls._restored(data, rules)
        self.announced = saved_bool(data, "announced")
        self.ace_penalty = saved_bool(data, "ace_penalty")
        self.phase = PHASE_NAMES.index(saved_choice(data, "phase", PHASE_NAMES))
        self.drew_on = saved_suit_masks(data, "drew_on", self.n)
        if self.ace_penalty and not self.table:
            raise ValueError("saved state field 'ace_penalty' is true on an empty table: "
                             "it needs an Ace (B7)")
        if not self.hand_over:
            self._check_play()
        return self

    def _check_play(self) -> None:
        """A hand in play: the table fields agree with the top card.

        Not for a finished hand: the last lay ends the hand before the suit and
        flags are updated, so they may still describe the card under it.
        """
        empty = [seat for seat, size in enumerate(self.sizes) if not size]
        if empty:
            raise ValueError(f"seat(s) {empty} hold no cards but 'hand_over' is false: a hand ends as soon "
                             "as a player has no cards (B11)")
        top, suit = self.top, self.current_suit
        shown_suit = None if suit is None else C.suit_str(suit)
        if top is None:
            if suit is not None:
                raise field_error("current_suit", "None while the table is empty (B4)", shown_suit)
            if self.announced:
                raise ValueError("saved state field 'announced' is true on an empty table: it needs 8s (B6)")
            return
        name = C.card_str(top)
        if suit is None:
            raise field_error("current_suit", f"a suit letter S, H, D or C once a card is on the table "
                              f"(top card {name})", shown_suit)
        eight = C.rank_of(top) == C.EIGHT
        if self.announced != eight:
            raise field_error("announced", f"{eight}: it is true exactly when 8s are on top (B6), and the "
                              f"top card is {name}", self.announced)
        if not eight and suit != C.suit_of(top):
            raise field_error("current_suit", f"{C.suit_str(C.suit_of(top))!r}, the suit of the top card "
                              f"{name} (B5)", shown_suit)
        if self.ace_penalty and C.rank_of(top) != C.ACE:
            raise ValueError(f"saved state field 'ace_penalty' is true but the top card is {name}: the "
                             "penalty needs an Ace on top (B7)")
        if self.ace_penalty and self.phase == AFTER_DRAW:
            raise ValueError("saved state field 'ace_penalty' must be false in phase 'after_draw': drawing "
                             "the 2-card penalty ends the turn (B7)")
