"""Toy shedding: the engine (explicit state, injected generator), on the shared `HandState`."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.declared import option
from cardlab.envs.hand import END_KEYS, HandState
from cardlab.envs.options import RuleOptions
from cardlab.envs.rng import rng_state
from cardlab.envs.state_checks import check_deal, check_keys, match_from_deal

RANKS = (C.TEN, C.JACK, C.QUEEN)
DECK_CARDS: tuple[int, ...] = tuple(C.make_card(r, s) for r in RANKS for s in range(C.NUM_SUITS))
PLAY = 0
DRAW = PLAY + len(DECK_CARDS)
NUM_ACTIONS = DRAW + 1
POINTS = np.zeros(C.NUM_KINDS, dtype=np.int64)
POINTS[list(DECK_CARDS)] = 1


def action_to_str(action: int) -> str:
    return "draw" if action == DRAW else f"play {C.card_str(DECK_CARDS[action - PLAY])}"


def str_to_action(text: str) -> int:
    words = text.split() if isinstance(text, str) else []
    if words == ["draw"]:
        return DRAW
    if len(words) == 2 and words[0] == "play" and C.parse_card(words[1]) in DECK_CARDS:
        return PLAY + DECK_CARDS.index(C.parse_card(words[1]))
    raise ValueError(f"{text!r}: expected 'draw' or 'play CARD' with a 10, J or Q")


@dataclasses.dataclass(frozen=True)
class ToyRules(RuleOptions):
    GAME: ClassVar[str] = "toy"

    num_players: int = option(2, "players at the table", 2, 3)
    target_score: int = option(10, "a match ends after a hand in which a total reaches this", 1)
    max_turns: int = option(200, "actions in a hand before it is truncated (C1)", 1)

    def deck(self) -> list[int]:
        counts = [0] * C.NUM_KINDS
        for card in DECK_CARDS:
            counts[card] = 1
        return counts


class ToyState(HandState):
    GAME = "toy"
    POINTS = POINTS
    PILES = ("stock", "table")
    SAVED_KEYS = (
        "game", "rules", "hands", "stock", "table", "current_player", "current_suit", *END_KEYS, "rng"
    )

    def _reset_hand(self) -> None:
        self._load_hands([[] for _ in range(self.n)])
        self.stock: list[int] = []
        self.table: list[int] = []
        self.current_suit: int | None = None
        self._reset_end()

    def deal_shuffled(self) -> None:
        self._reset_hand()
        pack = list(DECK_CARDS)
        self.rng.shuffle(pack)
        hands = [[pack.pop() for _ in range(3)] for _ in range(self.n)]
        starter = pack.pop()
        self._set_cards(hands, pack[::-1], [starter])
        self._start()

    def deal_stacked(self, deal: dict[str, Any]) -> None:
        check_keys(deal, ["hands", "starter"], ["stock", "dealer", "scores"], "toy deal")
        given = {"stock": deal.get("stock", []), "starter": [deal["starter"]]}
        hands, piles = check_deal(deal["hands"], given, self.n, self.deck)
        self.match = match_from_deal(deal, self.n, self.rules.target_score)
        self._reset_hand()
        self._set_cards(hands, piles["stock"], piles["starter"])
        self._start()

    def _start(self) -> None:
        self.current = (self.match.dealer + 1) % self.n
        self.current_suit = C.suit_of(self.table[-1])

    def legal_actions(self) -> list[int]:
        if self.hand_over:
            return []
        top = self.table[-1]
        held = np.flatnonzero(self.hands[self.current]).tolist()
        plays = [PLAY + DECK_CARDS.index(c) for c in held
                 if C.suit_of(c) == self.current_suit or C.rank_of(c) == C.rank_of(top)]
        return [*sorted(plays), DRAW]

    def apply(self, action: int) -> None:
        seat = self.current
        if action == DRAW:
            self._draw_cards(seat, 1)
        else:
            card = DECK_CARDS[action - PLAY]
            self.hands[seat][card] -= 1
            self.sizes[seat] -= 1
            self._lay((card,))
            self.current_suit = C.suit_of(card)
            if self.sizes[seat] == 0:
                self._finish(seat)
        self.current = (seat + 1) % self.n
        self._count_turn()

    def _refill(self, cards: list[int]) -> list[int]:
        return list(reversed(cards))

    def state_dict(self) -> dict[str, Any]:
        return {
            **self._saved_cards(),
            "current_player": self.current,
            "current_suit": C.suit_str(self.current_suit) if self.current_suit is not None else None,
            **self._end_fields(),
            "rng": rng_state(self.rng),
        }

    @classmethod
    def from_state_dict(cls, data: dict[str, Any], rules: ToyRules) -> ToyState:
        return cls._restored(data, rules)
