"""Stacked deals shared by the hand-reading tests (`test_belief`, `test_posterior`).

Why one place: the same position, written out card by card in each test, drifts (one edit of a hand
and the two tests no longer read the same record); here it is built once, with the check that it is
the position the tests describe.
"""

from __future__ import annotations

from typing import Any

from cardlab.envs import make_env


def forced_draw() -> tuple[Any, Any, Any]:
    """(env, raw env, game) of 2-player Switch, 3 cards each, after seat 0 plays 5H on the starter 7H and
    seat 1, holding nothing it may lay on 5H (A5), draws (its one legal move, A8) the 3C, which it may not
    lay either, so its turn ends: a record whose draw proves what the drawer lacked."""
    env = make_env("switch", num_players=2, hand_size=3)
    raw, game = env.unwrapped, env.unwrapped.game
    hands = [["5H", "6H", "9D"], ["3S", "4S", "10D"]]  # seat 1: no heart, 5, Jack or Joker
    stock = ["3C", "4C", "5C", "6C", "7C", "9C", "10C", "QC", "3D", "4D"]
    env.reset(options={"deal": {"hands": hands, "starter": "7H", "stock": stock, "dealer": 1}})
    env.step(game.str_to_action("play 5H"))
    assert raw.legal_actions() == [game.str_to_action("draw")]
    env.step(game.str_to_action("draw"))
    return env, raw, game
