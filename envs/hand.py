"""The hand engine base: what every game's engine does the same way around a hand.

Scoring, truncation, the next deal, saving and restoring the cards and the end-of-hand fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from cardlab.envs.cards import NO_SUIT, NUM_KINDS, card_str, cards_to_counts, counts_to_cards
from cardlab.envs.match import Match
from cardlab.envs.options import TOTAL_HIGH
from cardlab.envs.record import DRAW, LAY, REFILL, Event, RecordKeeper, record_from_saved
from cardlab.envs.rng import rng_from_state
from cardlab.envs.state_checks import (
    check_deal,
    check_live_totals,
    check_saved,
    field_error,
    saved_bool,
    saved_int,
    saved_int_list,
    saved_seat,
    saved_seat_or_none,
    saved_suit,
)


class HandState(RecordKeeper):
    """What both engines do the same way around a hand: scoring, truncation, the next deal.

    A subclass sets `POINTS` (card values), `STREAK` (B12 or not) and provides
    `deal_shuffled()`; its state has `n`, `rules`, `hands`, `sizes`, `match` and
    the end-of-hand fields set by `_reset_end()`.

    Every card of the deck is somewhere: in a hand, in one of the two piles, or in
    `left_out`, the cards a stacked deal did not use (empty after a shuffled deal).
    A saved state must account for each card the same way.

    Each hand keeps its public record (`cardlab.envs.record`): a deal starts it
    (`_start_record`), `_lay` and `_draw_cards` note the lays, draws and refills,
    the subclass its own events.
    """

    GAME: ClassVar[str]
    POINTS: ClassVar[np.ndarray]
    STREAK: ClassVar[bool] = False
    # Attribute names of the face-down pile (top = last) and of the played cards (top = last).
    PILES: ClassVar[tuple[str, str]]
    SAVED_KEYS: ClassVar[tuple[str, ...]]
    n: int
    rules: Any
    hands: list[np.ndarray]
    sizes: list[int]
    match: Match
    current: int
    current_suit: int | None
    left_out: list[int]

    def __init__(self, rules: Any, rng: np.random.Generator) -> None:
        self.rules = rules
        self.n = rules.num_players
        self.rng = rng
        self.deck = rules.deck()
        self.match = Match.new(self.n)
        self.deal_shuffled()

    @classmethod
    def assembled(cls, rules: Any, rng: np.random.Generator, hands: list[list[int]], face_down: list[int],
                  played: list[int], match: Match, current: int) -> Any:
        """A hand in play put together from its cards (a determinization, `cardlab.envs.world_sampling`).

        `face_down` is given top first, `played` bottom first; the turn counter
        and the end-of-hand fields start as at a deal, the game's own fields
        (suit, flags, phase) as `_reset_hand` sets them, for the caller to set.
        """
        self = cls.__new__(cls)
        self.rules, self.n, self.deck, self.rng = rules, rules.num_players, rules.deck(), rng
        self._reset_hand()
        self._set_cards(hands, face_down, played)
        self.match, self.current = match, current
        return self

    def _reset_hand(self) -> None:
        raise NotImplementedError

    def _set_cards(self, hands: list[list[int]], face_down: list[int], played: list[int]) -> None:
        """Hands, the face-down pile (given top first) and the played cards (bottom first)."""
        self._load_hands(hands)
        setattr(self, self.PILES[0], face_down[::-1])
        setattr(self, self.PILES[1], played)
        # Copies of each kind among the played cards, kept up to date for the observers.
        self.played_counts = np.bincount(np.asarray(played, dtype=np.int64), minlength=NUM_KINDS)
        in_play = sum(self.hands) + self.played_counts + np.bincount(
            np.asarray(face_down, dtype=np.int64), minlength=NUM_KINDS
        )
        self.left_out = counts_to_cards((np.asarray(self.deck) - in_play).tolist())

    def _lay(self, cards: Sequence[int], seat: int | None = None, call: int = NO_SUIT) -> None:
        """Put cards on the played pile, the last on top; with `seat`, noted in the record (with its call)."""
        if seat is not None:
            self._note(Event(LAY, seat, tuple(cards), suit=call))
        getattr(self, self.PILES[1]).extend(cards)
        for card in cards:
            self.played_counts[card] += 1

    def _draw_cards(self, seat: int, count: int, penalty: bool = False) -> int | None:
        """Move up to `count` cards from the face-down pile into the seat's hand.

        When the pile runs out, every played card but the top one becomes the new
        pile through `_refill` (shuffled for A10, turned over for B10). Returns the
        last card drawn, or None when nothing could be drawn. The record gets the
        refills and the draw (how many, whether a `penalty`, the suit to follow).
        """
        stock, played = getattr(self, self.PILES[0]), getattr(self, self.PILES[1])
        hand = self.hands[seat]
        last, before = None, self.sizes[seat]
        for _ in range(count):
            if not stock:
                if len(played) <= 1:
                    break
                self._note(Event(REFILL, number=len(played) - 1))
                stock.extend(self._refill(played[:-1]))
                del played[:-1]
                self.played_counts[:] = 0
                self.played_counts[played[0]] = 1
            last = stock.pop()
            hand[last] += 1
            self.sizes[seat] += 1
        suit = NO_SUIT if self.current_suit is None else self.current_suit
        self._note(Event(DRAW, seat, number=self.sizes[seat] - before, suit=suit, penalty=penalty))
        return last

    def _refill(self, cards: list[int]) -> list[int]:
        """The new face-down pile (top = last) made of the played cards but the top one."""
        raise NotImplementedError

    def _saved_cards(self) -> dict[str, Any]:
        """The first keys of `state_dict`: game, rules, hands and the two piles as card strings."""
        down, played = self.PILES
        return {
            "game": self.GAME,
            "rules": self.rules.to_dict(),
            "hands": [[card_str(c) for c in counts_to_cards(h.tolist())] for h in self.hands],
            down: [card_str(c) for c in reversed(getattr(self, down))],
            played: [card_str(c) for c in getattr(self, played)],
            "left_out": [card_str(c) for c in self.left_out],
            "record": self.public_record().to_saved(),
        }

    @classmethod
    def _restored(cls, data: Mapping[str, Any], rules: Any) -> Any:
        """A state with the saved cards, rng, player to move and end-of-hand fields, all checked.

        The subclass restores and checks the rest. Nothing is taken on trust: a
        wrong type, range or combination raises a `ValueError` naming the field.
        """
        self = cls.__new__(cls)
        self.rules, self.n, self.deck = rules, rules.num_players, rules.deck()
        check_saved(data, cls.GAME, rules, cls.SAVED_KEYS, OPTIONAL_KEYS)
        self.rng = rng_from_state(data["rng"], "saved state field 'rng'")
        self._reset_hand()
        down, played = cls.PILES
        # Saved before left_out existed: a state without the key used the whole deck.
        saved_piles = {down: data[down], played: data[played], "left_out": data.get("left_out", [])}
        hands, piles = check_deal(
            data["hands"], saved_piles, self.n, self.deck, "saved state field ", "saved state: "
        )
        self._set_cards(hands, piles[down], piles[played])
        self._check_whole_deck(piles["left_out"])
        self._load_end_fields(data)
        record = record_from_saved(data.get("record"), self.n, rules.max_turns, self.deck)
        self.events, self.record_complete = list(record.events), record.complete
        self.current = saved_seat(data, "current_player", self.n)
        self.current_suit = saved_suit(data, "current_suit")
        self._check_end()
        self._check_streaks()
        return self

    def _reset_end(self) -> None:
        self._start_record(False)
        self.turn = 0
        self.hand_over = False
        self.truncated = False
        self.winner: int | None = None
        self.hand_points: list[int] = [0] * self.n
        self.score_changes: list[int] = [0] * self.n
        self.match_over = False

    def _load_hands(self, hands: Sequence[Sequence[int]]) -> None:
        self.hands = [np.zeros(NUM_KINDS, dtype=np.int64) for _ in range(self.n)]
        for seat, hand in enumerate(hands):
            for card in hand:
                self.hands[seat][card] += 1
        self.sizes = [len(h) for h in hands]

    def hand_value(self, seat: int) -> int:
        return int(self.hands[seat] @ self.POINTS)

    def _streak(self) -> tuple[int, int] | None:
        return (self.rules.streak_length, self.rules.streak_bonus) if self.STREAK else None

    def _finish(self, winner: int) -> None:
        """End the hand: score it (A11/B11), streak bonus (B12), match end (A12/B13)."""
        self.hand_over = True
        self.winner = winner
        self.hand_points = [0 if s == winner else self.hand_value(s) for s in range(self.n)]
        self.score_changes = self.match.record(winner, self.hand_points, self._streak())
        self.match_over = self.match.is_over(self.rules.target_score)

    def _count_turn(self) -> None:
        """C1: after `max_turns` actions the hand is truncated: no winner, no points."""
        self.turn += 1
        if not self.hand_over and self.turn >= self.rules.max_turns:
            self.hand_over = True
            self.truncated = True
            self.match.record(None, [0] * self.n, self._streak())

    def next_hand(self) -> None:
        """A3/B3: the dealer moves one seat on and deals the next hand of the match."""
        if not self.hand_over or self.match_over:
            raise RuntimeError("next_hand() is only for a finished hand of an unfinished match")
        self.match.dealer = (self.match.dealer + 1) % self.n
        self.deal_shuffled()

    def deal_shuffled(self) -> None:
        raise NotImplementedError

    def _end_fields(self) -> dict[str, Any]:
        """The end-of-hand and match fields of `state_dict`, by the names of `END_KEYS`."""
        return {key: read(self) for key, read in _END_FIELDS.items()}

    def _check_whole_deck(self, saved_left_out: list[int]) -> None:
        """The saved cards are the deck exactly (`check_deal` already refused extra copies)."""
        short = np.subtract(cards_to_counts(self.left_out), cards_to_counts(saved_left_out))
        missing = [(card, int(count)) for card, count in enumerate(short) if count]
        if missing:
            listed = ", ".join(card_str(c) + (f" ({k} copies)" if k > 1 else "") for c, k in missing[:8])
            if len(missing) > 8:
                listed += f" and {len(missing) - 8} more kinds"
            raise ValueError(
                f"saved state: the cards miss {listed} of the deck: every card must be in a hand, a pile or "
                "'left_out' (the cards a stacked deal did not use)"
            )

    def _load_end_fields(self, data: Mapping[str, Any]) -> None:
        """The match and end-of-hand fields, each checked for its type and range."""
        n = self.n
        # B12 restarts a streak when it reaches streak_length; a game without B12 keeps none.
        most_streak = self.rules.streak_length - 1 if self.STREAK else 0
        self.match = Match(
            n,
            saved_int_list(data, "scores", n, -TOTAL_HIGH, TOTAL_HIGH),
            saved_seat(data, "dealer", n),
            saved_int_list(data, "streaks", n, 0, most_streak),
            saved_int(data, "hands_played", 0, TOTAL_HIGH),
        )
        self.turn = saved_int(data, "turn", 0, self.rules.max_turns)
        self.hand_over = saved_bool(data, "hand_over")
        self.truncated = saved_bool(data, "truncated")
        self.winner = saved_seat_or_none(data, "winner", n)
        self.hand_points = saved_int_list(data, "hand_points", n, 0, TOTAL_HIGH)
        self.score_changes = saved_int_list(data, "score_changes", n, -TOTAL_HIGH, TOTAL_HIGH)
        self.match_over = saved_bool(data, "match_over")

    def _check_end(self) -> None:
        """The end-of-hand fields agree with each other, with `turn` and with the cards held."""
        max_turns = self.rules.max_turns
        if self.truncated and not self.hand_over:
            raise ValueError("saved state field 'truncated' is true but 'hand_over' is false: "
                             "a truncated hand is over (C1)")
        if self.match_over and not self.hand_over:
            raise ValueError("saved state field 'match_over' is true but 'hand_over' is false: "
                             "a match ends with a finished hand")
        if not self.hand_over or self.truncated:  # no points added: the totals the hand was dealt at
            check_live_totals(self.match.scores, self.rules.target_score, "saved state field 'scores'")
        if not self.hand_over:
            self._check_zero_fields("while the hand is not over")
            if self.turn >= max_turns:
                raise field_error("turn", f"below max_turns={max_turns} while the hand is not over "
                                  "(C1 ends the hand at max_turns)", self.turn)
            if self.sizes[self.current] == 0:
                raise ValueError(f"saved state field 'current_player' is seat {self.current}, who holds no "
                                 "cards: the player to move must hold cards while the hand is not over")
            return
        if self.match.hands_played < 1:
            raise field_error("hands_played", "at least 1 once a hand is over (it counts that hand)",
                              self.match.hands_played)
        if self.truncated:
            self._check_zero_fields("for a truncated hand (C1)")
            if self.turn != max_turns:
                raise field_error("turn", f"max_turns={max_turns} for a truncated hand (C1)", self.turn)
            if self.match_over:
                raise ValueError("saved state field 'match_over' must be false for a truncated hand (C1)")
            return
        winner = self.winner
        if winner is None or self.sizes[winner]:
            raise field_error("winner", "the seat that went out (it holds no cards) when the hand is over "
                              "and not truncated", winner)
        points = [0 if seat == winner else self.hand_value(seat) for seat in range(self.n)]
        if self.hand_points != points:
            raise field_error("hand_points", f"{points}, the points of the cards left in each hand",
                              self.hand_points)
        bonus = [0, -self.rules.streak_bonus] if self.STREAK else [0]
        others_match = all(self.score_changes[s] == points[s] for s in range(self.n) if s != winner)
        if not others_match or self.score_changes[winner] not in bonus:
            wanted = str(points)
            if self.STREAK:
                wanted += f" (or {-self.rules.streak_bonus} for the winner, B12)"
            raise field_error("score_changes", wanted, self.score_changes)
        reached = self.match.is_over(self.rules.target_score)
        if self.match_over != reached:
            raise field_error("match_over", f"{reached} after a won hand with totals {self.match.scores} and "
                              f"target_score={self.rules.target_score}", self.match_over)

    def _check_streaks(self) -> None:
        """B12's streaks agree with the hands (`_check_end` has checked those): a won hand sets every other
        seat's streak to 0 and a hand C1 cut sets them all, so one seat at most is on a streak, the last
        winner; and a won hand's winner is on one exactly when it took no bonus (reaching streak_length
        takes it and starts the streak again). A game without B12 keeps none (`_load_end_fields`)."""
        streaks = self.match.streaks
        on = [seat for seat, run in enumerate(streaks) if run]
        if len(on) > 1:
            raise field_error("streaks", "0 for every seat but one at most, the last hand's winner (B12)",
                              streaks)
        if not self.hand_over:
            return
        if self.truncated or self.winner is None:
            if on:
                raise field_error("streaks", "all 0 after a truncated hand (C1 ends every streak, B12)",
                                  streaks)
            return
        winner = self.winner
        if on and on != [winner]:
            raise field_error("streaks", f"0 for every seat but the winner, seat {winner} (B12)", streaks)
        bonus = self.rules.streak_bonus if self.STREAK else 0
        if bonus and (self.score_changes[winner] == -bonus) != (streaks[winner] == 0):
            wanted = ("0 for the winner, whose bonus restarted its streak" if streaks[winner] else
                      "above 0 for the winner, who took no bonus")
            raise field_error("streaks", f"{wanted} (B12)", streaks)

    def _check_zero_fields(self, when: str) -> None:
        """No winner and no points (a hand in play, or one cut short by C1)."""
        if self.winner is not None:
            raise field_error("winner", f"None {when}", self.winner)
        for key in ("hand_points", "score_changes"):
            if getattr(self, key) != [0] * self.n:
                raise field_error(key, f"all 0 {when}", getattr(self, key))


# The end-of-hand and match fields of a saved state, with how each is read: the one list of them.
_END_FIELDS: dict[str, Callable[[HandState], Any]] = {
    "turn": lambda s: s.turn,
    "hand_over": lambda s: s.hand_over,
    "truncated": lambda s: s.truncated,
    "winner": lambda s: s.winner,
    "hand_points": lambda s: list(s.hand_points),
    "score_changes": lambda s: list(s.score_changes),
    "match_over": lambda s: s.match_over,
    "scores": lambda s: list(s.match.scores),
    "streaks": lambda s: list(s.match.streaks),
    "dealer": lambda s: s.match.dealer,
    "hands_played": lambda s: s.match.hands_played,
}
END_KEYS = tuple(_END_FIELDS)
# Saved-state keys a state may lack, all added later: without `left_out` the state used the whole deck,
# without `drew_on` (the memory of the hand) no seat has drawn on a suit, without `record` the hand's
# past is unknown (an empty record, marked incomplete).
OPTIONAL_KEYS = ("left_out", "drew_on", "record")
