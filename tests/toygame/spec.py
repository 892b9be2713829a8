"""The toy game's `GameSpec`, and its one heuristic."""

from __future__ import annotations

from typing import Any

import numpy as np

from cardlab.agents.base import Agent
from cardlab.envs import cards as C
from cardlab.envs.game_spec import ActionRange, GameSpec
from tests.toygame import rules as R
from tests.toygame.observer import ToyObserver


class FirstPlay(Agent):
    """Lays the first card it can; draws only when it cannot lay."""

    name = "first_play"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[0])


def view(state: R.ToyState, seat: int) -> dict[str, Any]:
    """The toy game's own public field of the web view: the suit to follow."""
    return {"current_suit": C.suit_str(state.current_suit) if state.current_suit is not None else None}


SPEC = GameSpec(
    id="toy",
    title="Toy shedding",
    summary="12 cards, follow suit or rank, first out wins (a test game).",
    rules=R.ToyRules,
    state=R.ToyState,
    observer=ToyObserver,
    observation_version=1,
    num_actions=R.NUM_ACTIONS,
    action_to_str=R.action_to_str,
    str_to_action=R.str_to_action,
    action_ranges=(
        ActionRange(R.PLAY, R.DRAW - 1, "lay card i (10 J Q of S H D C)", f"{R.PLAY} + i"),
        ActionRange(R.DRAW, R.DRAW, "draw one card"),
    ),
    status=lambda state: {"top card": C.card_str(state.table[-1]), "stock": f"{len(state.stock)} cards"},
    heuristics={"first_play": FirstPlay},
    view=view,
)
