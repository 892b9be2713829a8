"""The `GameSpec` of Switch: what the rest of cardlab knows of this game."""

from __future__ import annotations

from typing import Any

from cardlab.envs import cards as C
from cardlab.envs.game_spec import ActionRange, GameSpec, MoveFacts
from cardlab.envs.switch import actions as A
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.determinize import determinize
from cardlab.envs.switch.observer import OBSERVATION_VERSION, SwitchObserver


def status(state: R.SwitchState) -> dict[str, str]:
    """The lines of the text view that are Switch's own: top card, suit, run, direction, stock."""
    return {
        "top card": C.card_str(state.top),
        "suit": "free (any card)" if state.current_suit is None else C.SUIT_NAMES[state.current_suit],
        "pending draw": f"{state.pending} (add a 2 or Joker, or draw them all)" if state.pending else "none",
        "direction": ("clockwise (player_0, player_1, ...)" if state.direction > 0
                      else "counter-clockwise (reversed by a King: ..., player_1, player_0)"),
        "stock": f"{len(state.stock)} cards",
    }


def view(state: R.SwitchState, seat: int) -> dict[str, Any]:
    """Switch's public fields of the web view: suit, direction, draw run, phase, who went out first; and
    the card just drawn, to the seat that drew it only."""
    fields: dict[str, Any] = {
        "current_suit": None if state.current_suit is None else C.suit_str(state.current_suit),
        "direction": int(state.direction),
        "pending_draw": int(state.pending),
        "phase": R.PHASE_NAMES[state.phase],
        "first_out": state.first_out,
    }
    if state.drawn != R.NO_CARD and state.current == seat:
        fields["drawn_card"] = C.card_str(state.drawn)
    return fields


def move_facts(action: int) -> MoveFacts:
    """What an action id does, in the shared terms (`MoveFacts`): one card laid (A5; a joker's rank is
    `NUM_RANKS`, its suit none), a suit declared (a Jack's, or the starter's, A4), a draw or a pass (A8)."""
    if action in (A.DRAW, A.PASS):
        return MoveFacts(draw=action == A.DRAW, passes=action == A.PASS)
    card = A.ACTION_CARD[action]
    if card == A.NO_CARD:
        return MoveFacts(declared=A.ACTION_DECLARE[action])
    suit = C.suit_of(card)
    rank = C.NUM_RANKS if card == C.JOKER else C.rank_of(card)
    return MoveFacts(rank=rank, suits=0 if suit == C.NO_SUIT else 1 << suit, top=suit,
                     declared=A.ACTION_DECLARE[action], cards=1)


def move_notes(before: R.SwitchState, after: R.SwitchState, action: int) -> list[tuple[int, str]]:
    """For terminal play: the player an 8 skipped (A7), and the cards a draw run made someone draw (A6)."""
    mover = before.current
    if action == R.DRAW and before.pending:
        drawn = after.sizes[mover] - before.sizes[mover]
        return [(mover, f"the run of 2s and Jokers made {{who}} draw {drawn} card{'' if drawn == 1 else 's'} "
                        "(A6)")]
    card = R.ACTION_CARD[action]
    if card != R.NO_CARD and C.rank_of(card) == C.EIGHT and not after.hand_over:
        skipped, seat = [], (mover + after.direction) % before.n
        while seat != after.current:  # seats between the mover and the next player (out players pass too)
            if after.sizes[seat]:
                skipped.append((seat, "an 8 skipped {who} (A7)"))
            seat = (seat + after.direction) % before.n
        return skipped
    return []


SPEC = GameSpec(
    id="switch",
    title="Switch",
    summary=(
        "Crazy Eights with four decks and their Jokers (RULES.md part A): match the suit or the rank; a Jack "
        "is wild and names the suit; 2s and Jokers start draw runs that the next player adds to or draws in "
        "full; a King reverses, an 8 skips. The match runs to 500 points and the lowest total wins."
    ),
    rules=R.SwitchRules,
    state=R.SwitchState,
    observer=SwitchObserver,
    observation_version=OBSERVATION_VERSION,
    num_actions=R.NUM_ACTIONS,
    action_to_str=R.action_to_str,
    str_to_action=R.str_to_action,
    action_ranges=(
        ActionRange(R.PLAY_PLAIN, R.PLAY_JACK - 1,
                    "play card i that is not a Jack "
                    "(the 48 suited cards in rank then suit order, then the Joker)",
                    f"{R.PLAY_PLAIN} + i"),
        ActionRange(R.PLAY_JACK, R.DRAW - 1, "play the Jack of suit j and declare suit s (A5)",
                    f"{R.PLAY_JACK} + {C.NUM_SUITS}j + s"),
        ActionRange(R.DRAW, R.DRAW, "draw one card, or the whole pending run (A6, A8)"),
        ActionRange(R.PASS, R.PASS, "end the turn after drawing a playable card (A8)"),
        ActionRange(R.DECLARE, R.NUM_ACTIONS - 1, "choose the suit after a Jack starter (A4)",
                    f"{R.DECLARE} + s"),
    ),
    status=status,
    version=1,
    batched="cardlab.envs.switch.batched:SwitchBatch",
    read_tables=frozenset({4}),
    fast="cardlab.envs.switch.fast:FAST_PATHS",
    move_facts=move_facts,
    move_notes=move_notes,
    view=view,
    determinize=determinize,
    heuristics={
        "greedy": "cardlab.agents.heuristics.switch:SwitchGreedy",
        "expert": "cardlab.agents.heuristics.switch:SwitchExpert",
    },
)
