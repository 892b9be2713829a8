"""The `GameSpec` of Huit américain: what the rest of cardlab knows of this game."""

from __future__ import annotations

from typing import Any

from cardlab.envs import cards as C
from cardlab.envs.game_spec import ActionRange, GameSpec, MoveFacts
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.determinize import determinize
from cardlab.envs.huit.observer import OBSERVATION_VERSION, HuitObserver


def suit_now(state: R.HuitState) -> int | None:
    """The suit to follow as a player reads it: the engine's, but once a lay has ended the hand (which the
    engine does not update it for) the top card's (B5), or none after 8s (B6: nobody follows the suit)."""
    if not state.hand_over or state.winner is None or state.top is None:  # not ended by a lay
        return state.current_suit
    return None if C.rank_of(state.top) == C.EIGHT else C.suit_of(state.top)


def status(state: R.HuitState) -> dict[str, str]:
    """The lines of the text view that are Huit's own: the table, the suit, a fresh Ace, the bank."""
    shown = suit_now(state)
    if shown is not None:
        suit = C.SUIT_NAMES[shown] + (" (announced by 8s)" if state.announced and not state.hand_over else "")
    elif state.hand_over and state.winner is not None and state.top is not None:
        suit = "none (8s ended the hand)"
    else:
        suit = "none yet (empty table: any single card, or 8s)"
    lines = {
        "top card": "(empty table)" if state.top is None else C.card_str(state.top),
        "suit": suit,
    }
    if state.ace_penalty:
        lines["fresh Ace"] = "lay an Ace or 8s, or draw 2 (B7)"
    lines["bank"] = f"{len(state.bank)} cards"
    return lines


def view(state: R.HuitState, seat: int) -> dict[str, Any]:
    """Huit's public fields of the web view: the suit to follow, announced or not, a fresh Ace, the phase."""
    return {
        "current_suit": None if (shown := suit_now(state)) is None else C.suit_str(shown),
        "announced": bool(state.announced) and not state.hand_over,
        "ace_penalty": bool(state.ace_penalty),
        "phase": R.PHASE_NAMES[state.phase],
    }


def move_facts(action: int) -> MoveFacts:
    """What an action id does, in the shared terms (`MoveFacts`): a group of one rank (B5) or of 8s
    announcing a suit (B6), a draw or a pass (B9)."""
    if action in (R.DRAW, R.PASS):
        return MoveFacts(draw=action == R.DRAW, passes=action == R.PASS)
    return MoveFacts(rank=R.ACTION_RANK[action], suits=R.ACTION_MASK[action], top=R.ACTION_TOP[action],
                     declared=R.ACTION_DECLARE[action], cards=R.ACTION_SIZE[action])


def move_notes(before: R.HuitState, after: R.HuitState, action: int) -> list[tuple[int, str]]:
    """For terminal play: the players a Queen skipped (B8), the cards a fresh Ace made someone draw (B7)."""
    mover = before.current
    if action == R.DRAW and before.ace_penalty:
        drawn = after.sizes[mover] - before.sizes[mover]
        return [(mover, f"the Ace made {{who}} draw {drawn} card{'' if drawn == 1 else 's'} (B7)")]
    if action < R.DRAW and R.ACTION_RANK[action] == C.QUEEN and not after.hand_over:
        skipped, seat = [], (mover + 1) % before.n
        while seat != after.current:  # the seats between the mover and the next player
            skipped.append((seat, "a Queen skipped {who} (B8)"))
            seat = (seat + 1) % before.n
        return skipped
    return []


SPEC = GameSpec(
    id="huit",
    title="Huit américain",
    summary=(
        "The 32-card game of the Crazy-Eights family (RULES.md part B): lay one or more cards of one rank, "
        "the first matching the top card by suit or rank; 8s go on anything and announce a suit; "
        "an Ace makes the next player draw 2 unless they answer with an Ace or 8s; a Queen skips. "
        "The match runs to 151 points and the lowest total wins."
    ),
    rules=R.HuitRules,
    state=R.HuitState,
    observer=HuitObserver,
    observation_version=OBSERVATION_VERSION,
    num_actions=R.NUM_ACTIONS,
    action_to_str=R.action_to_str,
    str_to_action=R.str_to_action,
    action_ranges=(
        ActionRange(R.PLAY_GROUP, R.PLAY_EIGHTS - 1,
                    f"lay group g of rank r ({' '.join(C.RANKS[r] for r in R.PLAIN_RANKS)}); "
                    "a group is a set of suits and the suit laid last, which goes on top (B5)",
                    f"{R.PLAY_GROUP} + {R.GROUPS_PER_RANK}r + g"),
        ActionRange(R.PLAY_EIGHTS, R.DRAW - 1, "lay group g of 8s and announce suit s (B6)",
                    f"{R.PLAY_EIGHTS} + {C.NUM_SUITS}g + s"),
        ActionRange(R.DRAW, R.DRAW, "draw one card (two facing a fresh Ace, B7)"),
        ActionRange(R.PASS, R.PASS, "end the turn after drawing (B9)"),
    ),
    status=status,
    version=1,
    batched="cardlab.envs.huit.batched:HuitBatch",
    read_tables=frozenset({2, 4}),
    fast="cardlab.envs.huit.fast:FAST_PATHS",
    move_facts=move_facts,
    move_notes=move_notes,
    view=view,
    determinize=determinize,
    heuristics={
        "greedy": "cardlab.agents.heuristics.huit:HuitGreedy",
        "expert": "cardlab.agents.heuristics.huit:HuitExpert",
    },
)
