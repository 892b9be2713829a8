"""The status lines after a hand-ending lay, and the page's word on a play of several cards."""

from __future__ import annotations

from typing import Any

from cardlab.envs import env_class, make_game
from cardlab.serve.table import Hand
from cardlab.serve.view import seat_view


def going_out_deal() -> dict[str, Any]:
    """Huit, 2 players: 9D on the table, seat 0 holds AD and AC only (seat 0 to move)."""
    env = env_class("huit")(num_players=2)
    env.reset(seed=1)
    state = env.state_dict()
    spare = [c for c in state["hands"][0] if c != "AC"]
    state["hands"][0] = ["AD", "AC"]
    state["bank"] = [c for c in state["bank"] if c not in ("AD", "9D")] + spare
    state["table"], state["current_suit"] = ["9D"], "D"
    return state


def test_the_suit_after_a_hand_ending_lay_is_the_top_card_s() -> None:
    """B5: the new top's suit becomes current, the going-out lay included (it read diamonds under AC)."""
    game = make_game("huit", {"num_players": 2})
    hand = Hand(game, going_out_deal())
    hand.apply(game.str_to_action("play AD AC"))
    assert hand.over and hand.result()["winner"] == 0  # type: ignore[index]
    view = seat_view(game, hand.env.game_state, 1)
    status = dict(view["status"])
    assert status["top card"] == "AC" and status["suit"] == "clubs", status
    assert view["current_suit"] == "C"
