"""Action texts split into words, one grammar for every game (`draw`, `pass`, `declare S`, `play ...`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cardlab.envs.cards import NO_SUIT, parse_suit
from cardlab.envs.checked_json import excerpt


class ActionText(NamedTuple):
    """An action text split into its words: verb, card words and declared suit (or NO_SUIT)."""

    verb: str
    cards: list[str]
    declare: int


def split_action_text(text: str, grammar: str, verbs: Sequence[str]) -> ActionText:
    """Split ``draw`` / ``pass`` / ``declare X`` / ``play C1 .. Ck [declare X]`` for both games."""
    if not isinstance(text, str):
        raise ValueError(f"action text must be a string, got {excerpt(text)}: expected {grammar}")
    words = text.split()
    if not words:
        raise ValueError(f"empty action text: expected {grammar}")
    verb = words[0].lower()
    if verb not in verbs:
        raise ValueError(f"{excerpt(text)}: unknown action {excerpt(words[0])}, expected {grammar}")
    if verb in ("draw", "pass"):
        if len(words) != 1:
            raise ValueError(f"{excerpt(text)}: '{verb}' takes no arguments")
        return ActionText(verb, [], NO_SUIT)
    if verb == "declare":
        if len(words) != 2:
            raise ValueError(f"{excerpt(text)}: expected 'declare S' with one suit letter (S, H, D or C)")
        return ActionText(verb, [], parse_suit(words[1]))
    rest = words[1:]
    declare = NO_SUIT
    if rest and rest[-1].lower() == "declare":
        raise ValueError(f"{excerpt(text)}: 'declare' needs a suit letter (S, H, D or C)")
    if len(rest) >= 2 and rest[-2].lower() == "declare":
        declare = parse_suit(rest[-1])
        rest = rest[:-2]
    if not rest:
        raise ValueError(f"{excerpt(text)}: 'play' needs a card, e.g. 'play 9S'")
    return ActionText(verb, rest, declare)
