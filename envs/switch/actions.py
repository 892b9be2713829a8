"""Switch's actions: the id table and the text of each action, both ways.

Action ids (`NUM_ACTIONS` = 71), chained constants:

- `PLAY_PLAIN` + i: play `PLAIN_CARDS[i]`, the 49 kinds that are not Jacks
  (48 suited cards and the Joker);
- `PLAY_JACK` + 4*j + s: play the Jack of suit j and declare suit s (16);
- `DRAW`: draw one card, or draw the pending run;
- `PASS`: end the turn after drawing a playable card (A8);
- `DECLARE` + s: the first player's suit choice after a Jack starter (A4).

Text form: ``play 9S``, ``play JS declare H``, ``draw``, ``pass``, ``declare H``.
"""

from __future__ import annotations

from cardlab.envs import cards as C
from cardlab.envs.action_text import split_action_text
from cardlab.envs.checked_json import excerpt

# ---------------------------------------------------------------- action table
PLAIN_CARDS: tuple[int, ...] = tuple(c for c in range(C.NUM_KINDS) if C.rank_of(c) != C.JACK)
JACKS: tuple[int, ...] = tuple(C.make_card(C.JACK, s) for s in range(C.NUM_SUITS))

PLAY_PLAIN = 0
PLAY_JACK = PLAY_PLAIN + len(PLAIN_CARDS)
DRAW = PLAY_JACK + len(JACKS) * C.NUM_SUITS
PASS = DRAW + 1
DECLARE = PASS + 1
NUM_ACTIONS = DECLARE + C.NUM_SUITS

NO_CARD = -1
ACTION_CARD: list[int] = [NO_CARD] * NUM_ACTIONS
ACTION_DECLARE: list[int] = [C.NO_SUIT] * NUM_ACTIONS
PLAY_IDS: list[tuple[int, ...]] = [()] * C.NUM_KINDS
for _i, _card in enumerate(PLAIN_CARDS):
    ACTION_CARD[PLAY_PLAIN + _i] = _card
    PLAY_IDS[_card] = (PLAY_PLAIN + _i,)
for _j, _card in enumerate(JACKS):
    _ids = tuple(PLAY_JACK + _j * C.NUM_SUITS + _s for _s in range(C.NUM_SUITS))
    PLAY_IDS[_card] = _ids
    for _s, _a in enumerate(_ids):
        ACTION_CARD[_a] = _card
        ACTION_DECLARE[_a] = _s
for _s in range(C.NUM_SUITS):
    ACTION_DECLARE[DECLARE + _s] = _s
DECLARE_IDS: list[int] = [DECLARE + s for s in range(C.NUM_SUITS)]


def action_to_str(action: int) -> str:
    """Text of an action id, in the grammar of the issue (``play JS declare H``)."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action id {excerpt(action)} is out of range: Switch ids are 0..{NUM_ACTIONS - 1}")
    if action == DRAW:
        return "draw"
    if action == PASS:
        return "pass"
    if action >= DECLARE:
        return f"declare {C.suit_str(ACTION_DECLARE[action])}"
    text = f"play {C.card_str(ACTION_CARD[action])}"
    if ACTION_DECLARE[action] != C.NO_SUIT:
        text += f" declare {C.suit_str(ACTION_DECLARE[action])}"
    return text


GRAMMAR = "'draw', 'pass', 'play CARD', 'play JX declare S' or 'declare S'"


def str_to_action(text: str) -> int:
    """Action id of a text such as ``play 9S``; a `ValueError` says what is wrong."""
    parsed = split_action_text(text, GRAMMAR, ("draw", "pass", "declare", "play"))
    if parsed.verb == "draw":
        return DRAW
    if parsed.verb == "pass":
        return PASS
    if parsed.verb == "declare":
        return DECLARE + parsed.declare
    if len(parsed.cards) != 1:
        raise ValueError(f"{excerpt(text)}: Switch plays exactly one card per turn (A5)")
    card = C.parse_card(parsed.cards[0])
    if C.rank_of(card) == C.JACK:
        if parsed.declare == C.NO_SUIT:
            raise ValueError(f"{excerpt(text)}: a Jack names the new suit: 'play {C.card_str(card)} "
                             f"declare S'")
        return PLAY_IDS[card][parsed.declare]
    if parsed.declare != C.NO_SUIT:
        raise ValueError(f"{excerpt(text)}: only a Jack declares a suit in Switch")
    return PLAY_IDS[card][0]
