"""Checks of what crosses into an engine: stacked deals and saved states, field by field.

Each refusal is a `ValueError` that names the field, what is accepted and an excerpt of the input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cardlab.envs.cards import (
    NUM_KINDS,
    SUITS,
    card_str,
    cards_to_counts,
    parse_card,
    parse_card_list,
    parse_suit,
)
from cardlab.envs.checked_json import excerpt, key_names
from cardlab.envs.declared import unknown
from cardlab.envs.match import Match
from cardlab.envs.options import TOTAL_HIGH, RuleOptions


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
            f"got {excerpt(hands)}"
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


def check_live_totals(scores: Sequence[int], target: int, field: str) -> None:
    """Refuse a total at or past `target` in a hand in play (a stacked deal, a saved state before the hand's
    end or of a hand C1 cut): a hand is dealt only while every total is below it, since the hand after which
    one reached it ended the match (A12/B13). `field` names the scores as the refusal says them."""
    if max(scores) >= target:
        raise ValueError(f"{field} must all be below target_score={target:,} while a hand is in play (the "
                         f"hand that takes a total to it ends the match, A12/B13), got {shown(list(scores))}")


def match_from_deal(deal: Mapping[str, Any], num_players: int, target: int) -> Match:
    """A stacked deal's optional 'dealer' and 'scores', the scores below `target` (`check_live_totals`)."""
    n = num_players
    dealer = deal.get("dealer", n - 1)
    if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < n:
        raise ValueError(f"deal['dealer'] must be a seat index 0..{n - 1}, got {excerpt(dealer)}")
    match = Match.new(n, dealer)
    if "scores" in deal:
        scores = deal["scores"]
        if not isinstance(scores, (list, tuple)) or len(scores) != n or not all(
            isinstance(s, int) and not isinstance(s, bool) and -TOTAL_HIGH <= s <= TOTAL_HIGH for s in scores
        ):
            raise ValueError(f"deal['scores'] must be a list of {n} whole numbers from {-TOTAL_HIGH:,} to "
                             f"{TOTAL_HIGH:,}, got {excerpt(scores)}")
        check_live_totals(scores, target, "deal['scores']")
        match.scores = list(scores)
    return match


def shown(value: Any) -> str:
    """A value in a message, cut short (`excerpt`: never a whole deal, never a deep repr)."""
    return excerpt(value)


def check_keys(data: Mapping[str, Any], required: Sequence[str], optional: Sequence[str], what: str) -> None:
    """Refuse unknown or missing keys of a deal or saved state, naming the accepted ones."""
    accepted = ", ".join([*required, *optional])
    if not isinstance(data, Mapping):
        got = "None" if data is None else f"{type(data).__name__} {shown(data)}"
        raise ValueError(f"{what} must be a dict with the keys {accepted}, got {got}")
    given = [k for k in data if not isinstance(k, str) or (k not in required and k not in optional)]
    if given:
        strings = "" if all(isinstance(k, str) for k in given) else " (keys are strings)"
        raise unknown(f"{what} key", given, accepted + strings)
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{what} is missing {', '.join(missing)} (keys: {accepted})")


def check_saved(
    data: Mapping[str, Any], game: str, rules: RuleOptions, keys: Sequence[str], optional: Sequence[str] = ()
) -> None:
    """Refuse a saved state of another game, other rule options, or with missing or unknown keys."""
    # The game first: another game's state also has other keys, and that error would hide the cause.
    if isinstance(data, Mapping) and isinstance(data.get("game"), str) and data["game"] != game:
        raise ValueError(f"this saved state is for game {excerpt(data['game'])}, not {excerpt(game)}")
    check_keys(data, keys, optional, "saved state")
    saved_choice(data, "game", (game,))
    saved, wanted = data["rules"], rules.to_dict()
    if not isinstance(saved, Mapping):
        raise field_error("rules", "a dict of rule options, as state_dict() writes it", saved)
    saved = type(rules).completed(saved)
    differ = [k for k in {*saved, *wanted} if not (k in saved and k in wanted and _same(saved[k], wanted[k]))]
    if differ:
        listed = ", ".join(
            f"{key_names([k])}={shown(saved.get(k))} (env: {excerpt(getattr(rules, k, None))})"
            for k in sorted(differ, key=excerpt)[:5]
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
    return ValueError(f"saved state field {excerpt(key)} must be {wanted}, got {shown(value)}")


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
                f"saved state field {excerpt(key)}[{seat}] must be {_saved_range_text(low, high)}, got "
                f"{shown(item)}"
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
        raise ValueError(f"saved state field {excerpt(key)}: {err}") from None


def suit_letters(mask: int) -> list[str]:
    """A 4-bit suit mask (bit s: suit s, S H D C order) as its suit letters, in that order."""
    return [letter for s, letter in enumerate(SUITS) if mask >> s & 1]


def saved_suit_masks(data: Mapping[str, Any], key: str, n: int) -> list[int]:
    """Per seat a list of distinct suit letters (`suit_letters`), as masks; a state without the key: all 0.

    The key came later than the others (the `memory` of the hand): older saved states lack it.
    """
    if key not in data:
        return [0] * n
    value = data[key]
    wanted = f"a list of {n} lists of distinct suit letters S, H, D, C (one list per seat)"
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise field_error(key, wanted, value)
    masks = []
    for seat, letters in enumerate(value):
        suits = isinstance(letters, (list, tuple)) and all(isinstance(x, str) and x in SUITS for x in letters)
        if not suits or len(set(letters)) != len(letters):
            raise field_error(f"{key}[{seat}]", "a list of distinct suit letters S, H, D, C", letters)
        masks.append(sum(1 << parse_suit(x) for x in letters))
    return masks
