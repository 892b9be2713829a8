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
    SUITS,
    card_str,
    cards_to_counts,
    counts_to_cards,
    parse_card,
    parse_card_list,
    parse_suit,
)

R = TypeVar("R", bound="RuleOptions")


def option(
    default: Any, doc: str, low: int | None = None, high: int | None = None, accepted: str = ""
) -> Any:
    """A rule option field: its default, what it means and its range, written once.

    `low`/`high` bound a whole number (checked on construction); `accepted`
    describes other values for the docs (its checks then live in `validate`).
    """
    meta = {"doc": doc, "low": low, "high": high, "accepted": accepted}
    return dataclasses.field(default=default, metadata=meta)


class OptionDoc(NamedTuple):
    """One rule option as the docs and `cardlab rules` show it."""

    name: str
    default: Any
    accepted: str
    doc: str


@dataclasses.dataclass(frozen=True)
class RuleOptions:
    """Base of each game's rule options: checked names, types and ranges."""

    GAME: ClassVar[str] = ""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def describe(cls) -> list[OptionDoc]:
        """Name, default, accepted values and meaning of every option (from the `option` fields)."""
        out = []
        for f in dataclasses.fields(cls):
            meta = f.metadata
            accepted = meta.get("accepted") or _range_text(meta.get("low"), meta.get("high"))
            if not accepted:
                accepted = "true or false" if f.default in (True, False) else "any"
            out.append(OptionDoc(f.name, f.default, accepted, meta.get("doc", "")))
        return out

    @classmethod
    def limits(cls, name: str) -> tuple[int | None, int | None]:
        """The (low, high) bounds of a whole-number option (None: unbounded, or checked in `validate`)."""
        meta = next(f.metadata for f in dataclasses.fields(cls) if f.name == name)
        return meta.get("low"), meta.get("high")

    @classmethod
    def from_options(cls: type[R], options: Mapping[str, Any] | None = None) -> R:
        """Build from a mapping, refusing unknown names with the list of accepted ones."""
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"rule options must be a mapping of name to value, got {type(options).__name__}")
        options = dict(options or {})
        bad_keys = [k for k in options if not isinstance(k, str)]
        unknown = sorted(str(k) for k in set(options) - set(cls.names()))
        if unknown or bad_keys:
            raise ValueError(
                f"unknown rule option(s) {', '.join(unknown)} for {cls.GAME}; "
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
            low, high = f.metadata.get("low"), f.metadata.get("high")
            if expected is int and low is not None:
                self.check_range(f.name, low, high)
        self.validate()

    def validate(self) -> None:
        """Checks of the concrete game beyond each option's own range."""

    def check_range(self, name: str, low: int, high: int | None = None) -> None:
        value = getattr(self, name)
        if value < low or (high is not None and value > high):
            raise ValueError(f"rule option {name}={value} is out of range: accepted {_range_text(low, high)}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _range_text(low: int | None, high: int | None) -> str:
    if low is None:
        return ""
    return f"{low} to {high}" if high is not None else f"at least {low}"


def check_deal(
    hands: Sequence[Sequence[str]],
    piles: Mapping[str, Sequence[str]],
    num_players: int,
    deck: Sequence[int],
    prefix: str = "",
    context: str = "",
) -> tuple[list[list[int]], dict[str, list[int]]]:
    """Parse hands and piles of cards; refuse a card used more often than the deck holds.

    `prefix` goes before the name of a list in messages (``"saved state field "``),
    `context` before the message about extra copies (``"saved state: "``).
    """
    if not isinstance(hands, (list, tuple)) or len(hands) != num_players:
        raise ValueError(
            f"{prefix}'hands' must be a list of {num_players} lists of card strings (one per seat), "
            f"got {hands!r:.80}"
        )
    parsed_hands = [parse_card_list(h, f"{prefix}hands[{i}]") for i, h in enumerate(hands)]
    parsed_piles = {name: parse_card_list(pile, f"{prefix}{name}") for name, pile in piles.items()}
    places = {f"hands[{i}]": h for i, h in enumerate(parsed_hands)} | parsed_piles
    used = cards_to_counts(c for cards in places.values() for c in cards)
    for kind in range(NUM_KINDS):
        if used[kind] > deck[kind]:
            where = ", ".join(name for name, cards in places.items() if kind in cards)
            raise ValueError(
                f"{context}the cards use {card_str(kind)} {used[kind]} times (in {where}) but the deck "
                f"holds {deck[kind]}: remove the extra copies"
            )
    return parsed_hands, parsed_piles


def refuse_empty_hands(hands: Sequence[Sequence[int]]) -> None:
    """A stacked deal gives every seat a card or more: a seat without any would be out before play."""
    empty = [seat for seat, hand in enumerate(hands) if not hand]
    if empty:
        raise ValueError(f"the deal gives no cards to seat(s) {empty}: each hand needs a card or more")


def match_from_deal(deal: Mapping[str, Any], num_players: int) -> Match:
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
    def new(cls, num_players: int, dealer: int | None = None) -> Match:
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


POINTS_PER_REWARD = 100.0
"""``reward="points"``: a seat's reward at the end of a hand is minus its score change over this"""


def points_reward(score_change: Any) -> Any:
    """The ``reward="points"`` reward of a score change (a number, or an array of them)."""
    return -score_change / POINTS_PER_REWARD


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's state as JSON-ready data (Philox, SFC64 and MT19937 hold numpy arrays)."""
    return _plain(rng.bit_generator.state)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value.tolist() if isinstance(value, np.ndarray) else value


BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")
# Ranges of the whole-number entries of those generators' states, by key (arrays: their dtype's range).
# numpy accepts some values out of these ranges and then reads past its buffers (MT19937 `pos`,
# Philox `buffer_pos`), so they are checked here rather than left to numpy.
_RNG_INT_RANGES = {
    "has_uint32": (0, 1), "uinteger": (0, 2**32 - 1), "pos": (0, 624), "buffer_pos": (0, 4),
    "state": (0, 2**128 - 1), "inc": (0, 2**128 - 1),
}


def rng_from_state(state: Any, where: str = "state['rng']") -> np.random.Generator:
    """A generator from a saved `Generator.bit_generator.state`; a `ValueError` names what is wrong.

    The state must have exactly the layout of a fresh generator of the same kind
    (keys, whole numbers in range, arrays of the right length).
    """
    if not isinstance(state, Mapping):
        raise ValueError(f"{where} must be a dict from Generator.bit_generator.state, got {shown(state)}")
    name = state.get("bit_generator")
    if not isinstance(name, str) or name not in BIT_GENERATORS:
        raise ValueError(
            f"{where} names the bit generator {shown(name)}: accepted {', '.join(BIT_GENERATORS)}"
        )
    bitgen = getattr(np.random, name)()
    _check_rng_layout(state, bitgen.state, where)
    try:
        bitgen.state = dict(state)
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as err:
        raise ValueError(f"{where}: numpy refused this {name} state: {err}") from None
    return np.random.Generator(bitgen)


def _check_rng_layout(given: Mapping[str, Any], model: Mapping[str, Any], where: str) -> None:
    """`given` has the keys of `model` (a fresh generator's state) with values of the same kind."""
    if set(given) != set(model):
        raise ValueError(f"{where} must have the keys {key_names(model)}, got {key_names(given)}")
    for key, example in model.items():
        value, path = given[key], f"{where}[{key!r}]"
        if isinstance(example, str):
            continue
        if isinstance(example, Mapping):
            if not isinstance(value, Mapping):
                raise ValueError(
                    f"{path} must be a dict with the keys {key_names(example)}, got {shown(value)}"
                )
            _check_rng_layout(value, example, path)
        elif isinstance(example, np.ndarray):
            high = int(np.iinfo(example.dtype).max)
            if not _whole_array(value, len(example), high):
                raise ValueError(
                    f"{path} must be a list of {len(example)} whole numbers 0..{high}, got {shown(value)}"
                )
        else:
            low, high = _RNG_INT_RANGES.get(key, (0, 2**64 - 1))
            if not is_whole(value) or not low <= value <= high:
                raise ValueError(f"{path} must be a whole number {low}..{high}, got {shown(value)}")


def _whole_array(value: Any, size: int, high: int) -> bool:
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return False
    elif not isinstance(value, (list, tuple)):
        return False
    return len(value) == size and all(is_whole(v) and 0 <= v <= high for v in value)


def check_saved(
    data: Mapping[str, Any], game: str, rules: RuleOptions, keys: Sequence[str], optional: Sequence[str] = ()
) -> None:
    """Refuse a saved state of another game, other rule options, or with missing or unknown keys."""
    # The game first: another game's state also has other keys, and that error would hide the cause.
    if isinstance(data, Mapping) and isinstance(data.get("game"), str) and data["game"] != game:
        raise ValueError(f"this saved state is for game {data['game']!r}, not {game!r}")
    check_keys(data, keys, optional, "saved state")
    saved_choice(data, "game", (game,))
    saved, wanted = data["rules"], rules.to_dict()
    if not isinstance(saved, Mapping):
        raise field_error("rules", "a dict of rule options, as state_dict() writes it", saved)
    differ = [k for k in {*saved, *wanted} if not (k in saved and k in wanted and _same(saved[k], wanted[k]))]
    if differ:
        listed = ", ".join(
            f"{k}={shown(saved.get(k))} (env: {wanted.get(k)!r})" for k in sorted(differ, key=repr)
        )
        raise ValueError(
            f"this saved state was made with other rule options: {listed}; "
            "create the env with the saved options"
        )


def _same(saved: Any, wanted: Any) -> bool:
    """A saved rule option equals the env's: same type (True is not 1) and value."""
    return type(saved) is type(wanted) and saved == wanted


# ---------------------------------------------------------------- saved-state fields
def field_error(key: str, wanted: str, value: Any) -> ValueError:
    """The one message shape of a bad saved field: which field, what is accepted, what was given."""
    return ValueError(f"saved state field {key!r} must be {wanted}, got {shown(value)}")


def is_whole(value: Any) -> bool:
    """A whole number: a Python or numpy int, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _saved_range_text(low: int | None, high: int | None) -> str:
    if low is not None and low == high:
        return str(low)
    if low is not None and high is not None:
        return f"a whole number {low}..{high}"
    return "a whole number" if low is None else f"a whole number >= {low}"


def _in_range(value: Any, low: int | None, high: int | None) -> bool:
    return is_whole(value) and (low is None or value >= low) and (high is None or value <= high)


def saved_int(data: Mapping[str, Any], key: str, low: int | None = None, high: int | None = None) -> int:
    value = data[key]
    if not _in_range(value, low, high):
        raise field_error(key, _saved_range_text(low, high), value)
    return int(value)


def saved_seat(data: Mapping[str, Any], key: str, n: int) -> int:
    value = data[key]
    if not _in_range(value, 0, n - 1):
        raise field_error(key, f"a seat index 0..{n - 1}", value)
    return int(value)


def saved_seat_or_none(data: Mapping[str, Any], key: str, n: int) -> int | None:
    value = data[key]
    if value is not None and not _in_range(value, 0, n - 1):
        raise field_error(key, f"a seat index 0..{n - 1} or None", value)
    return None if value is None else int(value)


def saved_bool(data: Mapping[str, Any], key: str) -> bool:
    """A real bool: 0, 1 or "true" are refused, they are what a damaged file would hold."""
    value = data[key]
    if not isinstance(value, bool):
        raise field_error(key, "true or false (a bool)", value)
    return value


def saved_choice(data: Mapping[str, Any], key: str, accepted: Sequence[Any]) -> Any:
    """One of `accepted` (strings, ints or None), compared without letting True stand for 1."""
    value = data[key]
    if value is None or isinstance(value, bool):
        found = any(a is value for a in accepted)
    elif isinstance(value, str):
        found = any(isinstance(a, str) and a == value for a in accepted)
    elif is_whole(value):
        found = any(is_whole(a) and a == value for a in accepted)
    else:
        found = False
    if not found:
        raise field_error(key, "one of " + ", ".join(repr(a) for a in accepted), value)
    return int(value) if is_whole(value) else value


def saved_int_list(
    data: Mapping[str, Any], key: str, n: int, low: int | None = None, high: int | None = None
) -> list[int]:
    """A list of `n` whole numbers, one per seat."""
    value = data[key]
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise field_error(key, f"a list of {n} whole numbers (one per seat)", value)
    for seat, item in enumerate(value):
        if not _in_range(item, low, high):
            raise ValueError(
                f"saved state field {key!r}[{seat}] must be {_saved_range_text(low, high)}, got {shown(item)}"
            )
    return [int(v) for v in value]


def saved_suit(data: Mapping[str, Any], key: str) -> int | None:
    """None or a suit letter S H D C."""
    suit = saved_choice(data, key, (None, *SUITS))
    return None if suit is None else parse_suit(suit)


def saved_card(data: Mapping[str, Any], key: str) -> int | None:
    """None or one card string."""
    value = data[key]
    if value is None:
        return None
    if not isinstance(value, str):
        raise field_error(key, "None or a card string such as '9S'", value)
    try:
        return parse_card(value)
    except ValueError as err:
        raise ValueError(f"saved state field {key!r}: {err}") from None


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

    Every card of the deck is somewhere: in a hand, in one of the two piles, or in
    `left_out`, the cards a stacked deal did not use (empty after a shuffled deal).
    A saved state must account for each card the same way.
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
            "left_out": [card_str(c) for c in self.left_out],
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
        self.current = saved_seat(data, "current_player", self.n)
        self.current_suit = saved_suit(data, "current_suit")
        self._check_end()
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
            saved_int_list(data, "scores", n),
            saved_seat(data, "dealer", n),
            saved_int_list(data, "streaks", n, 0, most_streak),
            saved_int(data, "hands_played", 0),
        )
        self.turn = saved_int(data, "turn", 0, self.rules.max_turns)
        self.hand_over = saved_bool(data, "hand_over")
        self.truncated = saved_bool(data, "truncated")
        self.winner = saved_seat_or_none(data, "winner", n)
        self.hand_points = saved_int_list(data, "hand_points", n, 0)
        self.score_changes = saved_int_list(data, "score_changes", n)
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

    def _check_zero_fields(self, when: str) -> None:
        """No winner and no points (a hand in play, or one cut short by C1)."""
        if self.winner is not None:
            raise field_error("winner", f"None {when}", self.winner)
        for key in ("hand_points", "score_changes"):
            if getattr(self, key) != [0] * self.n:
                raise field_error(key, f"all 0 {when}", getattr(self, key))


END_KEYS = (
    "turn", "hand_over", "truncated", "winner", "hand_points", "score_changes", "match_over",
    "scores", "streaks", "dealer", "hands_played",
)
# Saved-state keys a state may lack: `left_out` came later; without it the state used the whole deck.
OPTIONAL_KEYS = ("left_out",)
