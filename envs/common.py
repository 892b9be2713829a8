"""Pieces both rules engines share: rule options, piles, match bookkeeping.

Nothing here knows about observations, PettingZoo or gymnasium.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from cardlab.envs.cards import (
    NO_SUIT,
    NUM_KINDS,
    card_str,
    cards_to_counts,
    counts_to_cards,
    parse_card_list,
    parse_suit,
)

R = TypeVar("R", bound="RuleOptions")


@dataclasses.dataclass(frozen=True)
class RuleOptions:
    """Base of each game's rule options: checked names, types and ranges."""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_options(cls: type[R], options: Mapping[str, Any] | None = None) -> R:
        """Build from a mapping, refusing unknown names with the list of accepted ones."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(cls.names()))
        if unknown:
            raise ValueError(
                f"unknown rule option(s) {', '.join(unknown)} for {cls.GAME}; "  # type: ignore[attr-defined]
                f"accepted: {', '.join(cls.names())}"
            )
        return cls(**options)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            expected = f.type if isinstance(f.type, type) else {"bool": bool, "int": int}.get(str(f.type))
            if expected is bool and not isinstance(value, bool):
                raise ValueError(f"rule option {f.name} must be true or false, got {value!r}")
            if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"rule option {f.name} must be a whole number, got {value!r}")
        self.validate()

    def validate(self) -> None:
        """Range checks of the concrete game."""

    def check_range(self, name: str, low: int, high: int | None = None) -> None:
        value = getattr(self, name)
        if value < low or (high is not None and value > high):
            accepted = f"{low} to {high}" if high is not None else f"at least {low}"
            raise ValueError(f"rule option {name}={value} is out of range: accepted {accepted}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def check_deal(
    hands: Sequence[Sequence[str]],
    piles: Mapping[str, Sequence[str]],
    num_players: int,
    deck: Sequence[int],
) -> tuple[list[list[int]], dict[str, list[int]]]:
    """Parse hands and piles of cards; refuse a card used more often than the deck holds."""
    if not isinstance(hands, (list, tuple)) or len(hands) != num_players:
        raise ValueError(
            f"'hands' must be a list of {num_players} lists of card strings (one per seat), "
            f"got {hands!r:.80}"
        )
    parsed_hands = [parse_card_list(h, f"hands[{i}]") for i, h in enumerate(hands)]
    parsed_piles = {name: parse_card_list(pile, name) for name, pile in piles.items()}
    used = cards_to_counts(
        [c for h in parsed_hands for c in h] + [c for p in parsed_piles.values() for c in p]
    )
    for kind in range(NUM_KINDS):
        if used[kind] > deck[kind]:
            raise ValueError(
                f"the cards use {card_str(kind)} {used[kind]} times but the deck holds "
                f"{deck[kind]}: remove the extra copies"
            )
    return parsed_hands, parsed_piles


def refuse_empty_hands(hands: Sequence[Sequence[int]]) -> None:
    """A stacked deal gives every seat a card or more: a seat without any would be out before play."""
    empty = [seat for seat, hand in enumerate(hands) if not hand]
    if empty:
        raise ValueError(f"the deal gives no cards to seat(s) {empty}: each hand needs a card or more")


def match_from_deal(deal: Mapping[str, Any], num_players: int) -> "Match":
    """The optional 'dealer' and 'scores' of a stacked deal."""
    n = num_players
    dealer = deal.get("dealer", n - 1)
    if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < n:
        raise ValueError(f"deal['dealer'] must be a seat index 0..{n - 1}, got {dealer!r}")
    match = Match.new(n, dealer)
    if "scores" in deal:
        scores = deal["scores"]
        if not isinstance(scores, (list, tuple)) or len(scores) != n or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in scores
        ):
            raise ValueError(f"deal['scores'] must be a list of {n} whole numbers, got {scores!r}")
        match.scores = list(scores)
    return match


def key_names(keys: Iterable[Any]) -> str:
    """Keys for a message, sorted; a key that is not a string is shown with its quotes or type."""
    return ", ".join(k if isinstance(k, str) else repr(k) for k in sorted(keys, key=repr))


def shown(value: Any) -> str:
    """A value in a message, cut short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_keys(data: Mapping[str, Any], required: Sequence[str], optional: Sequence[str], what: str) -> None:
    """Refuse unknown or missing keys of a deal or saved state, naming the accepted ones."""
    accepted = ", ".join([*required, *optional])
    if not isinstance(data, Mapping):
        got = "None" if data is None else f"{type(data).__name__} {shown(data)}"
        raise ValueError(f"{what} must be a dict with the keys {accepted}, got {got}")
    unknown = [k for k in data if not isinstance(k, str) or (k not in required and k not in optional)]
    if unknown:
        strings = "" if all(isinstance(k, str) for k in unknown) else " (keys are strings)"
        raise ValueError(f"unknown {what} key(s) {key_names(unknown)}: accepted {accepted}{strings}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{what} is missing {', '.join(missing)} (keys: {accepted})")


@dataclasses.dataclass
class Match:
    """Cumulative totals, dealer rotation and win streaks over the hands of a match."""

    num_players: int
    scores: list[int]
    dealer: int
    streaks: list[int]
    hands_played: int = 0

    @classmethod
    def new(cls, num_players: int, dealer: int | None = None) -> "Match":
        return cls(
            num_players,
            [0] * num_players,
            num_players - 1 if dealer is None else dealer,
            [0] * num_players,
        )

    def record(self, winner: int | None, points: Sequence[int], streak: tuple[int, int] | None) -> list[int]:
        """Add a hand's points (and, with `streak=(length, bonus)`, B12's bonus); returns score changes."""
        delta = list(points)
        self.hands_played += 1
        if streak is not None and winner is not None:
            length, bonus = streak
            for seat in range(self.num_players):
                self.streaks[seat] = self.streaks[seat] + 1 if seat == winner else 0
            if self.streaks[winner] >= length:
                delta[winner] -= bonus
                self.streaks[winner] = 0
        elif streak is not None:
            self.streaks = [0] * self.num_players
        for seat in range(self.num_players):
            self.scores[seat] += delta[seat]
        return delta

    def is_over(self, target: int) -> bool:
        return max(self.scores) >= target

    def winners(self) -> list[int]:
        """Seats with the lowest total (ties share the win)."""
        low = min(self.scores)
        return [seat for seat, s in enumerate(self.scores) if s == low]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def win_rewards(num_players: int, winners: Sequence[int]) -> list[float]:
    """Zero-sum win rewards: winners share +1, the others share -1."""
    if not winners or len(winners) == num_players:
        return [0.0] * num_players
    up, down = 1.0 / len(winners), -1.0 / (num_players - len(winners))
    return [up if seat in winners else down for seat in range(num_players)]


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    return rng.bit_generator.state


def rng_from_state(state: Mapping[str, Any]) -> np.random.Generator:
    name = state.get("bit_generator")
    bitgen_cls = getattr(np.random, str(name), None)
    if bitgen_cls is None or not isinstance(bitgen_cls, type):
        raise ValueError(f"state['rng'] names an unknown bit generator {name!r}")
    bitgen = bitgen_cls()
    bitgen.state = dict(state)
    return np.random.Generator(bitgen)


def check_saved(data: Mapping[str, Any], game: str, rules: RuleOptions, keys: Sequence[str]) -> None:
    """Refuse a saved state of another game, other rule options, or with missing keys."""
    # The game first: another game's state also has other keys, and that error would hide the cause.
    if isinstance(data, Mapping) and "game" in data and data["game"] != game:
        raise ValueError(f"this saved state is for game {data['game']!r}, not {game!r}")
    check_keys(data, keys, [], "saved state")
    saved, wanted = data["rules"], rules.to_dict()
    if saved != wanted:
        differ = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
        shown = ", ".join(f"{k}={saved.get(k)!r} (env: {wanted.get(k)!r})" for k in differ)
        raise ValueError(
            f"this saved state was made with other rule options: {shown}; "
            "create the env with the saved options"
        )


class ActionText(NamedTuple):
    """An action text split into its words: verb, card words and declared suit (or NO_SUIT)."""

    verb: str
    cards: list[str]
    declare: int


def split_action_text(text: str, grammar: str, verbs: Sequence[str]) -> ActionText:
    """Split ``draw`` / ``pass`` / ``declare X`` / ``play C1 .. Ck [declare X]`` for both games."""
    if not isinstance(text, str):
        raise ValueError(f"action text must be a string, got {text!r}: expected {grammar}")
    words = text.split()
    if not words:
        raise ValueError(f"empty action text: expected {grammar}")
    verb = words[0].lower()
    if verb not in verbs:
        raise ValueError(f"{text!r}: unknown action {words[0]!r}, expected {grammar}")
    if verb in ("draw", "pass"):
        if len(words) != 1:
            raise ValueError(f"{text!r}: '{verb}' takes no arguments")
        return ActionText(verb, [], NO_SUIT)
    if verb == "declare":
        if len(words) != 2:
            raise ValueError(f"{text!r}: expected 'declare S' with one suit letter (S, H, D or C)")
        return ActionText(verb, [], parse_suit(words[1]))
    rest = words[1:]
    declare = NO_SUIT
    if rest and rest[-1].lower() == "declare":
        raise ValueError(f"{text!r}: 'declare' needs a suit letter (S, H, D or C)")
    if len(rest) >= 2 and rest[-2].lower() == "declare":
        declare = parse_suit(rest[-1])
        rest = rest[:-2]
    if not rest:
        raise ValueError(f"{text!r}: 'play' needs a card, e.g. 'play 9S'")
    return ActionText(verb, rest, declare)


class HandState:
    """What both engines do the same way around a hand: scoring, truncation, the next deal.

    A subclass sets `POINTS` (card values), `STREAK` (B12 or not) and provides
    `deal_shuffled()`; its state has `n`, `rules`, `hands`, `sizes`, `match` and
    the end-of-hand fields set by `_reset_end()`.
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

    def __init__(self, rules: Any, rng: np.random.Generator) -> None:
        self.rules = rules
        self.n = rules.num_players
        self.rng = rng
        self.deck = rules.deck()
        self.match = Match.new(self.n)
        self.deal_shuffled()

    def _reset_hand(self) -> None:
        raise NotImplementedError

    def _set_cards(self, hands: list[list[int]], face_down: list[int], played: list[int]) -> None:
        """Hands, the face-down pile (given top first) and the played cards (bottom first)."""
        self._load_hands(hands)
        setattr(self, self.PILES[0], face_down[::-1])
        setattr(self, self.PILES[1], played)
        # Copies of each kind among the played cards, kept up to date for the observers.
        self.played_counts = np.bincount(np.asarray(played, dtype=np.int64), minlength=NUM_KINDS)

    def _lay(self, cards: Sequence[int]) -> None:
        """Put cards on the played pile, the last on top."""
        getattr(self, self.PILES[1]).extend(cards)
        for card in cards:
            self.played_counts[card] += 1

    def _draw_cards(self, seat: int, count: int) -> int | None:
        """Move up to `count` cards from the face-down pile into the seat's hand.

        When the pile runs out, every played card but the top one becomes the new
        pile through `_refill` (shuffled for A10, turned over for B10). Returns the
        last card drawn, or None when nothing could be drawn.
        """
        stock, played = getattr(self, self.PILES[0]), getattr(self, self.PILES[1])
        hand = self.hands[seat]
        last = None
        for _ in range(count):
            if not stock:
                if len(played) <= 1:
                    break
                stock.extend(self._refill(played[:-1]))
                del played[:-1]
                self.played_counts[:] = 0
                self.played_counts[played[0]] = 1
            last = stock.pop()
            hand[last] += 1
            self.sizes[seat] += 1
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
        }

    @classmethod
    def _restored(cls, data: Mapping[str, Any], rules: Any) -> Any:
        """A state with the saved cards, rng and end-of-hand fields; the subclass restores the rest."""
        self = cls.__new__(cls)
        self.rules, self.n, self.deck = rules, rules.num_players, rules.deck()
        check_saved(data, cls.GAME, rules, cls.SAVED_KEYS)
        self.rng = rng_from_state(data["rng"])
        self._reset_hand()
        self._load_end_fields(data)
        down, played = cls.PILES
        hands, piles = check_deal(data["hands"], {down: data[down], played: data[played]}, self.n, self.deck)
        self._set_cards(hands, piles[down], piles[played])
        self.current = int(data["current_player"])
        suit = data["current_suit"]
        self.current_suit = None if suit is None else parse_suit(suit)
        return self

    def _reset_end(self) -> None:
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
        return {
            "turn": self.turn,
            "hand_over": self.hand_over,
            "truncated": self.truncated,
            "winner": self.winner,
            "hand_points": list(self.hand_points),
            "score_changes": list(self.score_changes),
            "match_over": self.match_over,
            "scores": list(self.match.scores),
            "streaks": list(self.match.streaks),
            "dealer": self.match.dealer,
            "hands_played": self.match.hands_played,
        }

    def _load_end_fields(self, data: Mapping[str, Any]) -> None:
        self.match = Match(self.n, list(data["scores"]), int(data["dealer"]), list(data["streaks"]),
                           int(data["hands_played"]))
        self.turn = int(data["turn"])
        self.hand_over = bool(data["hand_over"])
        self.truncated = bool(data["truncated"])
        self.winner = data["winner"]
        self.hand_points = list(data["hand_points"])
        self.score_changes = list(data["score_changes"])
        self.match_over = bool(data["match_over"])


END_KEYS = (
    "turn", "hand_over", "truncated", "winner", "hand_points", "score_changes", "match_over",
    "scores", "streaks", "dealer", "hands_played",
)
