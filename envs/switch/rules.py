"""Switch: the rules engine (docs/RULES.md, part A, and C1-C2).

Pure game logic: an explicit `SwitchState`, an injected `np.random.Generator`,
no gymnasium or PettingZoo. Each rule is implemented where its id is cited;
the rules and every decision the engine adds to them (A9: the last player
holding cards may only draw a run, so some seat always keeps cards) are
written in docs/RULES.md, the options in its tables and in docs/envs.md.

The engine always keeps the memory of the hand, `drew_on[seat]`: a 4-bit
suit mask with bit s set when suit s was current as the seat drew of its own
accord (A8; drawing a run, A6, is a penalty and sets nothing), cleared when
the seat lays a card of suit s, reset at each deal. The `memory` option only
shows it in the observation.

Action ids and their text: `cardlab.envs.switch.actions` (re-exported here).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.declared import option
from cardlab.envs.hand import END_KEYS, HandState
from cardlab.envs.options import MEMORY_DOC, RuleOptions
from cardlab.envs.rng import rng_state
from cardlab.envs.state_checks import (
    check_deal,
    check_keys,
    field_error,
    match_from_deal,
    refuse_empty_hands,
    saved_card,
    saved_choice,
    saved_int,
    saved_seat_or_none,
    saved_suit_masks,
    shown,
    suit_letters,
)
from cardlab.envs.switch.actions import (
    ACTION_CARD,
    ACTION_DECLARE,
    DECLARE,
    DECLARE_IDS,
    DRAW,
    GRAMMAR,
    JACKS,
    NO_CARD,
    NUM_ACTIONS,
    PASS,
    PLAIN_CARDS,
    PLAY_IDS,
    PLAY_JACK,
    PLAY_PLAIN,
    action_to_str,
    str_to_action,
)


# ---------------------------------------------------------------- scoring
def card_points(card: int) -> int:
    """A11 values."""
    if card == C.JOKER:
        return 50
    rank = C.rank_of(card)
    if rank == C.TWO:
        return 20
    if rank == C.ACE:
        return 15
    if rank in (C.TEN, C.JACK, C.QUEEN, C.KING):
        return 10
    return 5


POINTS = np.array([card_points(c) for c in range(C.NUM_KINDS)], dtype=np.int64)

# Per card kind: goes on any card (A5: Jacks and Jokers); may join a draw run (A6: 2s and Jokers).
WILD: tuple[bool, ...] = tuple(c == C.JOKER or C.rank_of(c) == C.JACK for c in range(C.NUM_KINDS))
RUN_CARD: tuple[bool, ...] = tuple(c == C.JOKER or C.rank_of(c) == C.TWO for c in range(C.NUM_KINDS))

# Phases of a turn.
PLAY, AFTER_DRAW, DECLARE_START = 0, 1, 2
PHASE_NAMES = ("play", "after_draw", "declare")


MOST_HAND = (8 * 54 + 64 + 64 - 1) // 2
"""hand_size's bound: 2 players and the largest deck (8 decks, 64 extra Jokers and 2s) with its starter"""


@dataclasses.dataclass(frozen=True)
class SwitchRules(RuleOptions):
    """Switch rule options, defaults as in RULES.md."""

    GAME: ClassVar[str] = "switch"

    num_players: int = option(4, "players at the table (A1; 2 and 3 are a training extension)", 2, 10)
    num_decks: int = option(4, "full 52-card decks, each with its 2 Jokers (A2)", 1, 8)
    extra_jokers: int = option(0, "Jokers added to the decks (A2)", 0, 64)
    extra_twos: int = option(0, "2s added to the decks, suits in S H D C order (A2)", 0, 64)
    hand_size: int = option(
        7, "cards dealt to each player (A3); the deck must hold them all plus the starter", 1, MOST_HAND
    )
    match_rank: bool = option(True, "a card may follow the top card's rank as well as the suit (A5)")
    play_after_draw: bool = option(True, "a drawn card that can be played may be played at once (A8)")
    voluntary_draw: bool = option(False, "a player may draw although they could play (A8)")
    target_score: int = option(500, "a match ends after a hand in which a total reaches this (A12)", 1)
    max_turns: int = option(3000, "actions in a hand before it is truncated (C1)", 1)
    memory: bool = option(False, MEMORY_DOC)

    def validate(self) -> None:
        if self.hand_size * self.num_players >= self.deck_size():
            raise ValueError(
                f"hand_size={self.hand_size} for {self.num_players} players needs "
                f"{self.hand_size * self.num_players + 1} cards (with the starter) but the deck "
                f"holds {self.deck_size()}: lower hand_size or add decks"
            )

    def deck(self) -> list[int]:
        """Copies of each card kind (A2)."""
        counts = [self.num_decks] * C.NUM_SUITED + [2 * self.num_decks + self.extra_jokers]
        for i in range(self.extra_twos):
            counts[C.make_card(C.TWO, i % C.NUM_SUITS)] += 1
        return counts

    def deck_size(self) -> int:
        return sum(self.deck())

    def most_pending(self) -> int:
        """The largest draw run the deck allows: every 2 and every Joker in one run (A6)."""
        deck = self.deck()
        return 2 * sum(deck[C.make_card(C.TWO, s)] for s in range(C.NUM_SUITS)) + 5 * deck[C.JOKER]


SAVED_KEYS = (
    "game", "rules", "hands", "stock", "discard", "current_player", "direction", "current_suit",
    "pending_draw", "phase", "drawn_card", "first_out", *END_KEYS, "rng",
)


class SwitchState(HandState):
    """One match of Switch: the current hand plus the match totals."""

    GAME = "switch"
    POINTS = POINTS
    SAVED_KEYS = SAVED_KEYS
    PILES = ('stock', 'discard')

    # ------------------------------------------------------------ dealing
    def _reset_hand(self) -> None:
        self._load_hands([[] for _ in range(self.n)])
        self.stock: list[int] = []
        self.discard: list[int] = []
        self.direction = 1
        self.current_suit: int | None = None
        self.pending = 0
        self.phase = PLAY
        self.drawn = NO_CARD
        self.first_out: int | None = None
        self.drew_on = [0] * self.n
        self._reset_end()

    def deal_shuffled(self) -> None:
        """A3: shuffle, deal one at a time from the dealer's next seat, turn up the starter."""
        self._reset_hand()
        pack = [c for c, k in enumerate(self.deck) for _ in range(k)]
        self.rng.shuffle(pack)
        dealt: list[list[int]] = [[] for _ in range(self.n)]
        for i in range(self.rules.hand_size * self.n):
            dealt[(self.match.dealer + 1 + i) % self.n].append(pack.pop())
        starter = pack.pop()
        self._set_cards(dealt, pack[::-1], [starter])
        self._apply_starter()

    def deal_stacked(self, deal: dict[str, Any]) -> None:
        """Start a hand from a given deal (keys: hands, stock, starter, dealer?, scores?)."""
        check_keys(deal, ["hands", "starter"], ["stock", "dealer", "scores"], "Switch deal")
        starter = deal["starter"]
        if not isinstance(starter, str):
            raise ValueError(f"deal['starter'] must be one card string such as '7H', got {shown(starter)}")
        hands, piles = check_deal(
            deal["hands"], {"stock": deal.get("stock", []), "starter": [deal["starter"]]}, self.n, self.deck
        )
        refuse_empty_hands(hands)
        self.match = match_from_deal(deal, self.n, self.rules.target_score)
        self._reset_hand()
        self._set_cards(hands, piles["stock"], piles["starter"])
        self._apply_starter()

    def _apply_starter(self) -> None:
        """A4: the starter counts as the first card played."""
        starter = self.discard[-1]
        self._start_record(True, self.sizes)
        self._note_starter(starter)
        dealer = self.match.dealer
        self.current = (dealer + 1) % self.n
        if starter == C.JOKER:
            self.pending = 5
            self.current_suit = None
            return
        self.current_suit = C.suit_of(starter)
        rank = C.rank_of(starter)
        if rank == C.KING and self.n > 2:
            self.direction = -1
            self.current = (dealer - 1) % self.n
        elif rank == C.EIGHT:
            self.current = (dealer + 2) % self.n
        elif rank == C.JACK:
            self.phase = DECLARE_START
        elif rank == C.TWO:
            self.pending = 2

    # ------------------------------------------------------------ queries
    @property
    def top(self) -> int:
        return self.discard[-1]

    def playable(self, card: int) -> bool:
        """A5 (no pending draw): can `card` go on the discard pile now?"""
        if WILD[card]:
            return True
        suit = self.current_suit
        if suit is None or C.suit_of(card) == suit:
            return True
        top = self.discard[-1]
        return self.rules.match_rank and top != C.JOKER and C.rank_of(card) == C.rank_of(top)

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids for the player to move (empty once the hand is over)."""
        if self.hand_over:
            return []
        if self.phase == DECLARE_START:
            return list(DECLARE_IDS)
        if self.phase == AFTER_DRAW:
            return [*PLAY_IDS[self.drawn], PASS]
        held = self.hands[self.current].nonzero()[0].tolist()
        actions: list[int] = []
        if self.pending:
            if self.first_out is not None and self._last_holder():
                return [DRAW]  # A9, decision added later: the last holder draws the run
            for card in held:
                if RUN_CARD[card]:
                    actions.extend(PLAY_IDS[card])
            actions.append(DRAW)
            return sorted(actions)
        # A5, inlined from `playable` for speed: wild cards, the current suit, the top card's rank.
        suit = self.current_suit
        top = self.discard[-1]
        top_rank = C.rank_of(top) if self.rules.match_rank and top != C.JOKER else C.NO_RANK
        for card in held:
            if WILD[card] or suit is None or C.suit_of(card) == suit or C.rank_of(card) == top_rank:
                actions.extend(PLAY_IDS[card])
        if not actions or self.rules.voluntary_draw:
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
            self._end_turn(seat)
        elif action >= DECLARE:
            self.current_suit = ACTION_DECLARE[action]
            self._note_call(seat, self.current_suit)
            self.phase = PLAY
        else:
            self._play(seat, ACTION_CARD[action], ACTION_DECLARE[action])
        self._count_turn()

    def _play(self, seat: int, card: int, declare: int) -> None:
        self.hands[seat][card] -= 1
        self.sizes[seat] -= 1
        self._lay((card,), seat, declare)
        if card != C.JOKER:
            self.drew_on[seat] &= ~(1 << C.suit_of(card))
        self.phase = PLAY
        self.drawn = NO_CARD
        rank = C.rank_of(card)
        skip = 0
        if card == C.JOKER:
            self.pending += 5
        elif rank == C.TWO:
            self.pending += 2
            self.current_suit = C.suit_of(card)
        elif rank == C.JACK:
            self.current_suit = declare
        else:
            self.current_suit = C.suit_of(card)
            if rank == C.KING and self.n > 2:
                self.direction = -self.direction
            elif rank == C.EIGHT:
                skip = 1
        if self.sizes[seat] == 0:
            if not self.pending:
                self._finish(seat)
                return
            if self.first_out is None:
                self.first_out = seat
        # Some seat still holds cards: the last holder cannot add to a run (A9), so never all go out.
        self.current = self._next_seat(seat, 1 + skip)

    def _draw(self, seat: int) -> None:
        if self.pending:
            self._draw_cards(seat, self.pending, True)
            self.pending = 0
            if self.first_out is not None:
                self._finish(self.first_out)
                return
            self._end_turn(seat)
            return
        if self.current_suit is not None:
            self.drew_on[seat] |= 1 << self.current_suit
        card = self._draw_cards(seat, 1)
        if card is not None and self.rules.play_after_draw and self.playable(card):
            self.phase = AFTER_DRAW
            self.drawn = card
            self._note_offered()
        else:
            self._end_turn(seat)

    def _refill(self, cards: list[int]) -> list[int]:
        """A10: the discard pile but its top card, shuffled."""
        out = list(cards)
        self.rng.shuffle(out)
        return out

    def _end_turn(self, seat: int) -> None:
        self.phase = PLAY
        self.drawn = NO_CARD
        self.current = self._next_seat(seat, 1)

    def _last_holder(self) -> bool:
        """Only the player to move still holds cards."""
        return sum(1 for size in self.sizes if size) == 1

    def _next_seat(self, seat: int, steps: int) -> int:
        """The seat `steps` turns on, passing over seats with no cards (A9)."""
        for _ in range(steps):
            seat = (seat + self.direction) % self.n
            while self.sizes[seat] == 0:
                seat = (seat + self.direction) % self.n
        return seat

    # ------------------------------------------------------------ saved states
    def state_dict(self) -> dict[str, Any]:
        """The full state as JSON-serialisable data (keys documented in `switch_v1`)."""
        return {
            **self._saved_cards(),
            "current_player": self.current,
            "direction": self.direction,
            "current_suit": None if self.current_suit is None else C.suit_str(self.current_suit),
            "pending_draw": self.pending,
            "phase": PHASE_NAMES[self.phase],
            "drawn_card": None if self.drawn == NO_CARD else C.card_str(self.drawn),
            "first_out": self.first_out,
            "drew_on": [suit_letters(mask) for mask in self.drew_on],
            **self._end_fields(),
            "rng": rng_state(self.rng),
        }

    @classmethod
    def from_state_dict(cls, data: dict[str, Any], rules: SwitchRules) -> SwitchState:
        """Restore a state saved by `state_dict` (the rules must be the saved ones).

        Every field is checked, alone and against the others; a `ValueError` names
        the field, what was wrong and what is accepted.
        """
        self = cls._restored(data, rules)
        self.direction = saved_choice(data, "direction", (1, -1))
        self.pending = saved_int(data, "pending_draw", 0, rules.most_pending())
        if self.pending in (1, 3):
            raise field_error("pending_draw", "0 or a sum of 2s and 5s (A6)", self.pending)
        self.phase = PHASE_NAMES.index(saved_choice(data, "phase", PHASE_NAMES))
        drawn = saved_card(data, "drawn_card")
        self.drawn = NO_CARD if drawn is None else drawn
        self.first_out = saved_seat_or_none(data, "first_out", self.n)
        self.drew_on = saved_suit_masks(data, "drew_on", self.n)
        self._check_play()
        return self

    def _check_play(self) -> None:
        """The restored fields describe a position the rules can reach."""
        if not self.discard:
            raise field_error("discard", "a list holding at least the top card (A3)", self.discard)
        top, suit = self.discard[-1], self.current_suit
        name = C.card_str(top)
        if suit is None and top != C.JOKER:
            raise ValueError(
                "saved state field 'current_suit' is None (a free suit, A4), which needs a Joker on top; "
                f"the top card is {name}"
            )
        if top != C.JOKER and C.rank_of(top) != C.JACK and suit != C.suit_of(top):
            raise field_error(
                "current_suit", f"{C.suit_str(C.suit_of(top))!r}, the suit of the top card {name} (A5)",
                None if suit is None else C.suit_str(suit),
            )
        if self.pending and not RUN_CARD[top]:
            raise ValueError(
                f"saved state field 'pending_draw' is {self.pending}, but a draw run needs a 2 or a Joker "
                f"on top (A6); the top card is {name}"
            )
        if self.pending and self.phase != PLAY:
            raise ValueError(
                "saved state field 'pending_draw' must be 0 outside phase 'play': "
                "a run is added to or drawn (A6)"
            )
        if self.phase == DECLARE_START and C.rank_of(top) != C.JACK:
            raise ValueError(
                "saved state field 'phase' is 'declare', the suit choice after a Jack starter (A4), "
                f"but the top card is {name}"
            )
        self._check_drawn()
        self._check_first_out()

    def _check_drawn(self) -> None:
        """A8: 'after_draw' keeps a playable drawn card in the mover's hand; no drawn card otherwise."""
        drawn = None if self.drawn == NO_CARD else C.card_str(self.drawn)
        if self.phase != AFTER_DRAW:
            if drawn is not None:
                raise field_error("drawn_card", "None outside phase 'after_draw'", drawn)
            return
        if drawn is None:
            raise field_error("drawn_card", "the card drawn in phase 'after_draw' (A8)", drawn)
        if not self.rules.play_after_draw:
            raise ValueError(
                "saved state field 'phase' is 'after_draw', which play_after_draw=False rules out (A8)"
            )
        if not self.hands[self.current][self.drawn]:
            raise ValueError(
                f"saved state field 'drawn_card' is {drawn}, which current_player {self.current} "
                "does not hold"
            )
        if not self.playable(self.drawn):
            raise ValueError(
                f"saved state field 'drawn_card' is {drawn}, which cannot be played on "
                f"{C.card_str(self.top)}: only a playable drawn card is kept (A8)"
            )

    def _check_first_out(self) -> None:
        """A9: seats without cards only while the run of the first player out is pending."""
        out = self.first_out
        if out is not None and self.sizes[out]:
            raise field_error("first_out", "None or a seat that went out (holds no cards)", out)
        if self.hand_over:
            if out is not None and not self.truncated and self.winner != out:
                raise field_error("winner", f"{out}, the first player out (A9)", self.winner)
            return
        empty = [seat for seat, size in enumerate(self.sizes) if not size]
        if empty and out is None:
            raise ValueError(
                f"seat(s) {empty} hold no cards while the hand goes on, which only happens during the run "
                "of A9: saved state field 'first_out' must then be set"
            )
        if out is not None and not self.pending:
            raise ValueError(
                f"saved state field 'first_out' is {out} but 'pending_draw' is 0: the hand goes on after a "
                "player is out only until the run is drawn (A9)"
            )

# The engine's names and its actions' (from `actions`), so `rules` stays the one module to import.
__all__ = [
    "ACTION_CARD", "ACTION_DECLARE", "DECLARE", "DECLARE_IDS", "DRAW", "GRAMMAR", "JACKS",
    "NO_CARD", "NUM_ACTIONS", "PASS", "PHASE_NAMES", "PLAIN_CARDS", "PLAY_IDS", "PLAY_JACK", "PLAY_PLAIN",
    "POINTS", "RUN_CARD", "SAVED_KEYS", "WILD", "SwitchRules", "SwitchState", "action_to_str", "card_points",
    "str_to_action",
]
