"""Scripted scenarios for every Switch rule (RULES.md A1..A12, C1, C2).

Each test stacks a deal (or restores a state), plays actions written as text
and checks the effects through the saved state, observations, masks, rewards
and infos. With the default stacked deal the dealer is seat 3, so seat 0
(`player_0`) plays first and play goes 0, 1, 2, 3.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.envs import cards as C
from cardlab.envs import switch_v1
from tests.envs.helpers import assert_legal, dealt, obs_parts, play, play_all, play_random

JACK_DECLARES = {f"play JS declare {s}" for s in "SHDC"}
# Independent copy of the A11 table, so the engine's own table is checked, not reused.
A11_VALUES = {"JOKER": 50, "2": 20, "A": 15, "K": 10, "Q": 10, "J": 10, "10": 10,
              **{str(r): 5 for r in range(3, 10)}}


def switch(
    hands: Sequence[Sequence[str]],
    starter: str = "7H",
    stock: Sequence[str] = (),
    dealer: int | None = None,
    scores: Sequence[int] | None = None,
    **options: Any,
) -> AECEnv:
    """A wrapped Switch env reset to a stacked deal (stock listed top card first)."""
    deal: dict[str, Any] = {"hands": [list(h) for h in hands], "stock": list(stock), "starter": starter}
    if dealer is not None:
        deal["dealer"] = dealer
    if scores is not None:
        deal["scores"] = list(scores)
    return dealt(switch_v1.env, deal, num_players=len(hands), **options)


def st(env: AECEnv) -> dict[str, Any]:
    """The full engine state, as saved: the one place every effect is visible."""
    return env.unwrapped.state_dict()


def hand(env: AECEnv, seat: int) -> list[str]:
    """The cards of `seat`, sorted so that comparisons ignore order."""
    return sorted(st(env)["hands"][seat])


def card_value(card: str) -> int:
    """A11 points of one card, from the test's own table."""
    return A11_VALUES["JOKER" if card == "JOKER" else card[:-1]]


def all_cards(state: dict[str, Any]) -> Counter[str]:
    """Every card of the game: hands, stock and discard pile."""
    return Counter([c for h in state["hands"] for c in h] + state["stock"] + state["discard"])


def rewards(env: AECEnv) -> list[float]:
    """The last step's rewards in seat order."""
    return [env.rewards[a] for a in env.possible_agents]


# ---------------------------------------------------------------- A1 players
def test_A1_default_is_four_players() -> None:
    """A1: four players by default."""
    env = switch_v1.env()
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1", "player_2", "player_3"]
    assert len(st(env)["hands"]) == 4


@pytest.mark.parametrize("n", [2, 3, 10])
def test_A1_num_players_option(n: int) -> None:
    """A1: `num_players` from 2 to 10 gives that many agents, each dealt a hand."""
    env = switch_v1.env(num_players=n)
    env.reset(seed=0)
    assert env.agents == [f"player_{i}" for i in range(n)]
    assert [len(h) for h in st(env)["hands"]] == [7] * n


@pytest.mark.parametrize("n", [1, 11])
def test_A1_num_players_out_of_range_refused(n: int) -> None:
    """A1: fewer than 2 or more than 10 players is refused with the accepted range."""
    with pytest.raises(ValueError, match=r"num_players.*2 to 10"):
        switch_v1.env(num_players=n)


# ---------------------------------------------------------------- A2 cards
def test_A2_four_decks_with_their_jokers() -> None:
    """A2: 4 decks of 52 plus 2 jokers each: 216 cards, 4 copies of each card, 8 jokers."""
    env = switch_v1.env()
    env.reset(seed=5)
    counts = all_cards(st(env))
    assert sum(counts.values()) == 216
    assert counts["JOKER"] == 8
    suited = [C.card_str(c) for c in range(C.NUM_SUITED)]
    assert all(counts[c] == 4 for c in suited)
    assert set(counts) == {*suited, "JOKER"}


def test_A2_extra_jokers_and_twos() -> None:
    """A2: `extra_jokers` adds jokers, `extra_twos` adds 2s (spread S H D C)."""
    env = switch_v1.env(extra_jokers=3, extra_twos=5)
    env.reset(seed=5)
    counts = all_cards(st(env))
    assert sum(counts.values()) == 216 + 8
    assert counts["JOKER"] == 11
    assert [counts[f"2{s}"] for s in "SHDC"] == [6, 5, 5, 5]


def test_A2_duplicates_are_identical_but_limited_to_the_decks() -> None:
    """A2: copies of a card are one kind (counted per kind); a deal cannot use more than the decks hold."""
    env = switch(
        [["9S", "9S", "3C"], ["4C"], ["5C"], ["6C"]],
    )
    assert obs_parts(env)["hand"][C.parse_card("9S")] == pytest.approx(2 / 4)
    with pytest.raises(ValueError, match=r"9S 5 times.*holds 4"):
        switch([["9S"] * 5, ["4C"], ["5C"], ["6C"]])
    with pytest.raises(ValueError, match=r"9S 2 times.*holds 1"):
        switch([["9S", "9S"], ["4C"], ["5C"], ["6C"]], num_decks=1)


# ---------------------------------------------------------------- A3 deal
@pytest.mark.parametrize("hand_size", [7, 9])
def test_A3_deal_gives_hand_size_each_and_turns_up_a_starter(hand_size: int) -> None:
    """A3: `hand_size` cards each (default 7), one starter turned up, the rest is the stock."""
    env = switch_v1.env(hand_size=hand_size)
    env.reset(seed=11)
    state = st(env)
    assert [len(h) for h in state["hands"]] == [hand_size] * 4
    assert len(state["discard"]) == 1
    assert len(state["stock"]) == 216 - 4 * hand_size - 1
    assert obs_parts(env)["top"][C.parse_card(state["discard"][0])] == 1


@pytest.mark.parametrize("dealer", [0, 1, 3])
def test_A3_dealers_next_seat_plays_first(dealer: int) -> None:
    """A3: the dealer's left neighbour (next seat) plays first after a plain starter."""
    env = switch([["3C"], ["4C"], ["5C"], ["6C"]], dealer=dealer)
    assert st(env)["current_player"] == (dealer + 1) % 4
    assert env.agent_selection == f"player_{(dealer + 1) % 4}"


def test_A3_stacked_deal_refuses_an_empty_hand() -> None:
    """A3: every seat is dealt cards; a seat without any would be out before the hand starts (A9)."""
    with pytest.raises(ValueError, match=r"no cards to seat\(s\) \[1\]"):
        switch([["3C"], [], ["5C"], ["6C"]])


def test_A3_hand_size_larger_than_the_deck_refused() -> None:
    """A3: a deal that needs more cards than the deck holds is refused with the reason."""
    with pytest.raises(ValueError, match="hand_size=6 for 10 players needs 61 cards"):
        switch_v1.env(num_players=10, num_decks=1, hand_size=6)


# ---------------------------------------------------------------- A4 starter
def test_A4_other_starter_just_sets_the_suit() -> None:
    """A4: a plain starter (7H) sets the suit; no draw, normal direction, seat 0 first."""
    env = switch([["3H", "7C", "9S"], ["4C"], ["5C"], ["6C"]], starter="7H")
    state = st(env)
    assert (state["current_suit"], state["pending_draw"], state["direction"], state["current_player"]) == (
        "H", 0, 1, 0)
    assert_legal(env, {"play 3H", "play 7C"})
    assert obs_parts(env)["suit"].tolist() == [0, 1, 0, 0]


def test_A4_king_starter_reverses_direction() -> None:
    """A4: a King starter reverses play, so the dealer's right neighbour plays first."""
    env = switch([["3C"], ["4C"], ["5H", "6C"], ["9D"]], starter="KH")
    assert st(env)["direction"] == -1
    assert env.agent_selection == "player_2"
    assert obs_parts(env)["direction"][0] == 0
    play(env, "play 5H")
    assert env.agent_selection == "player_1"


def test_A4_king_starter_with_two_players_changes_nothing() -> None:
    """A4 with A7: with 2 players a King starter has no effect; the dealer's next seat plays."""
    env = switch([["5H", "3C"], ["6H", "4C"]], starter="KH")
    assert st(env)["direction"] == 1
    assert env.agent_selection == "player_0"
    play(env, "play 5H")
    assert env.agent_selection == "player_1"


def test_A4_eight_starter_skips_the_first_player() -> None:
    """A4: an 8 starter skips the first player (seat 0), so seat 1 starts."""
    env = switch([["3H", "4H"], ["8C", "3D", "4D"], ["5C"], ["6C"]], starter="8H")
    assert env.agent_selection == "player_1"
    assert_legal(env, {"play 8C"})
    play(env, "play 8C")
    assert env.agent_selection == "player_3"
    assert hand(env, 0) == ["3H", "4H"]


def test_A4_jack_starter_first_player_declares_then_plays() -> None:
    """A4: after a Jack starter the first player names the suit, then plays their normal turn to it."""
    env = switch([["3C", "5H", "9D"], ["4C"], ["5C"], ["6C"]], starter="JH")
    assert st(env)["phase"] == "declare"
    assert_legal(env, {"declare S", "declare H", "declare D", "declare C"})
    assert obs_parts(env)["phase"].tolist() == [0, 1]
    play(env, "declare C")
    state = st(env)
    assert (state["phase"], state["current_suit"], state["current_player"]) == ("play", "C", 0)
    assert_legal(env, {"play 3C"})  # 5H no longer follows: the suit is the declared one
    play(env, "play 3C")
    assert env.agent_selection == "player_1"


def test_A4_two_starter_puts_a_pending_draw_of_two() -> None:
    """A4 with A6: a 2 starter makes the first player add a 2 or a Joker, or draw 2."""
    env = switch([["2S", "JOKER", "5H", "9C"], ["4C"], ["5C"], ["6C"]], starter="2H",
                 stock=["3D", "4D", "6S"])
    assert st(env)["pending_draw"] == 2
    assert_legal(env, {"play 2S", "play JOKER", "draw"})
    play(env, "draw")
    state = st(env)
    assert hand(env, 0) == sorted(["2S", "JOKER", "5H", "9C", "3D", "4D"])
    assert (state["stock"], state["pending_draw"], state["current_player"]) == (["6S"], 0, 1)


def test_A4_joker_starter_pending_five_and_free_suit() -> None:
    """A4: a Joker starter puts a draw of 5 on the first player; then the suit is free (any card)."""
    env = switch(
        [["2C", "9S"], ["3D", "KS", "JH", "10C"], ["5C"], ["6C"]],
        starter="JOKER",
        stock=["3S", "4S", "5S", "6S", "7S"],
    )
    state = st(env)
    assert (state["pending_draw"], state["current_suit"]) == (5, None)
    parts = obs_parts(env)
    assert parts["suit"].tolist() == [0, 0, 0, 0]
    assert parts["pending"][0] == pytest.approx(0.5)
    assert_legal(env, {"play 2C", "draw"})
    play(env, "draw")
    assert len(hand(env, 0)) == 7
    assert_legal(env, {"play 3D", "play KS", "play 10C", *{f"play JH declare {s}" for s in "SHDC"}})
    play(env, "play 3D")
    assert st(env)["current_suit"] == "D"


def test_A4_joker_starter_free_suit_ends_with_a_suited_card() -> None:
    """A4 with A6: a 2 added to a Joker starter sets the suit; after the draw that suit is current."""
    env = switch(
        [["2C", "9S"], ["4D", "6H", "8S"], ["5C", "5H"], ["6C"]],
        starter="JOKER",
        stock=["3S", "4S", "5S", "6S", "7S", "8S", "9S"],
    )
    play(env, "play 2C")
    assert st(env)["current_suit"] == "C"
    play(env, "draw")
    assert len(hand(env, 1)) == 10
    assert_legal(env, {"play 5C"})


# ---------------------------------------------------------------- A5 legal plays
@pytest.mark.parametrize(
    ("match_rank", "expected"),
    [(True, {"play 3H", "play 7C"}), (False, {"play 3H"})],
)
def test_A5_suit_or_rank_follows(match_rank: bool, expected: set[str]) -> None:
    """A5: a card of the current suit, or of the top card's rank when `match_rank` (default True)."""
    env = switch([["3H", "7C", "9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", match_rank=match_rank)
    assert_legal(env, expected)


def test_A5_jack_is_wild_and_declares_any_suit() -> None:
    """A5: any Jack may be played; its player names any of the four suits, which the next must follow."""
    env = switch([["JS", "9C", "4D"], ["5D", "9S", "JC"], ["5C"], ["6C"]], starter="7H")
    assert_legal(env, JACK_DECLARES)
    play(env, "play JS declare D")
    state = st(env)
    assert (state["discard"][-1], state["current_suit"]) == ("JS", "D")
    assert obs_parts(env)["suit"].tolist() == [0, 0, 1, 0]
    # 9S does not follow although the Jack is a spade: the declared suit counts.
    assert_legal(env, {"play 5D", *{f"play JC declare {s}" for s in "SHDC"}})


def test_A5_joker_is_suitless_and_keeps_the_suit() -> None:
    """A5: a Joker may be played on anything and leaves the current suit as it was."""
    env = switch(
        [["JOKER", "9C"], ["4C", "6C"], ["3H", "7C", "9S"], ["6D"]],
        starter="7H",
        stock=["3S", "4S", "5S", "6S", "8S"],
    )
    assert_legal(env, {"play JOKER"})
    play(env, "play JOKER")
    assert st(env)["current_suit"] == "H"
    play(env, "draw")
    # Hearts follow; 7C does not, since the top card is now the Joker, not the 7.
    assert_legal(env, {"play 3H"})


def test_A5_one_card_per_turn() -> None:
    """A5: one card per turn; the turn passes after it and two-card texts are refused."""
    env = switch([["3H", "4H"], ["4C"], ["5C"], ["6C"]], starter="7H")
    with pytest.raises(ValueError, match="exactly one card"):
        env.unwrapped.str_to_action("play 3H 4H")
    play(env, "play 3H")
    assert env.agent_selection == "player_1"
    assert hand(env, 0) == ["4H"]
    assert not env.observe("player_0")["action_mask"].any()


# ---------------------------------------------------------------- A6 draw runs
RUN_STOCK = ["3S", "4S", "5S", "6S", "8S", "9S", "10S", "3D", "4D", "5D", "6D"]


@pytest.mark.parametrize(
    ("run", "total", "suit_after"),
    [
        pytest.param(["2H", "2S"], 4, "S", id="two_then_two_draws_four"),
        pytest.param(["JOKER", "JOKER"], 10, "H", id="joker_then_joker_draws_ten"),
        pytest.param(["JOKER", "2C"], 7, "C", id="joker_then_two_draws_seven"),
        pytest.param(["2H", "JOKER"], 7, "H", id="two_then_joker_draws_seven"),
    ],
)
def test_A6_run_totals_and_suit_after_the_draw(run: list[str], total: int, suit_after: str) -> None:
    """A6: 2 cards per 2 and 5 per Joker (2+2=4, Joker+Joker=10, Joker+2=7); the drawer's turn ends;
    after a 2 its suit is current, after a Joker the suit from before it."""
    env = switch(
        [[run[0], "5C"], [run[1], "6C"], ["2D", "JOKER", "JS", "7H", "9C"], ["5S", "5H", "5C", "9D"]],
        starter="7H",
        stock=RUN_STOCK,
    )
    play_all(env, [f"play {c}" for c in run])
    assert st(env)["pending_draw"] == total
    assert obs_parts(env)["pending"][0] == pytest.approx(total / 10)
    # Only a 2 or a Joker adds to the run; the Jack and the 7H (suit and rank) do not.
    assert_legal(env, {"play 2D", "play JOKER", "draw"})
    play(env, "draw")
    state = st(env)
    assert Counter(hand(env, 2)) == Counter(["2D", "JOKER", "JS", "7H", "9C", *RUN_STOCK[:total]])
    assert (state["pending_draw"], state["current_player"], state["current_suit"]) == (0, 3, suit_after)
    assert_legal(env, {f"play 5{suit_after}"})


def test_A6_run_keeps_growing_around_the_table() -> None:
    """A6: each player may add to the run; the total keeps adding up until someone draws."""
    env = switch([["2H", "5C"], ["JOKER", "6C"], ["2D", "9C"], ["2S", "9D"]], stock=RUN_STOCK * 2)
    play_all(env, ["play 2H", "play JOKER", "play 2D", "play 2S"])
    assert st(env)["pending_draw"] == 2 + 5 + 2 + 2
    assert env.agent_selection == "player_0"
    assert_legal(env, {"draw"})
    play(env, "draw")
    assert len(hand(env, 0)) == 1 + 11


def test_A6_after_a_joker_a_declared_suit_stays() -> None:
    """A6: after a Joker's draw the suit that was current before it stays, here a Jack's declared suit."""
    env = switch(
        [["JH", "5C"], ["JOKER", "6C"], ["9D", "9S"], ["5H", "4C", "7H"]],
        starter="7H",
        stock=RUN_STOCK,
    )
    play_all(env, ["play JH declare C", "play JOKER", "draw"])
    assert st(env)["current_suit"] == "C"
    assert_legal(env, {"play 4C"})


# ---------------------------------------------------------------- A7 other specials
def test_A7_king_reverses_the_direction() -> None:
    """A7: a King reverses play; a second King turns it back."""
    env = switch([["KH", "3C"], ["4C"], ["5C"], ["KS", "6C"]], starter="7H")
    play(env, "play KH")
    assert (st(env)["direction"], env.agent_selection) == (-1, "player_3")
    assert obs_parts(env)["direction"][0] == 0
    play(env, "play KS")
    assert (st(env)["direction"], env.agent_selection) == (1, "player_0")


def test_A7_king_with_two_players_changes_nothing() -> None:
    """A7: with 2 players a King changes nothing: the other player moves next."""
    env = switch([["KH", "3C"], ["5D", "6D"]], starter="7H")
    play(env, "play KH")
    assert (st(env)["direction"], env.agent_selection) == (1, "player_1")


def test_A7_eight_skips_the_next_player() -> None:
    """A7: an 8 skips the next player."""
    env = switch([["8H", "3C"], ["4H", "4C"], ["5C"], ["6C"]], starter="7H")
    play(env, "play 8H")
    assert env.agent_selection == "player_2"
    assert hand(env, 1) == ["4C", "4H"]


def test_A7_eight_skips_in_the_reversed_direction() -> None:
    """A7: after a reversal (King starter, A4) the 8 skips the next player in the new direction."""
    env = switch([["3C"], ["4C"], ["8H", "5C"], ["6C"]], starter="KH")
    play(env, "play 8H")
    assert env.agent_selection == "player_0"


def test_A7_eight_with_two_players_plays_again() -> None:
    """A7: with 2 players an 8 skips the opponent, so its player moves again."""
    env = switch([["8H", "3H", "9C"], ["5D", "6D"]], starter="7H")
    play(env, "play 8H")
    assert env.agent_selection == "player_0"
    assert_legal(env, {"play 3H"})


# ---------------------------------------------------------------- A8 drawing
def test_A8_draw_when_nothing_can_be_played() -> None:
    """A8: a player with no legal play can only draw, and draws one card."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["9C", "3S"])
    assert_legal(env, {"draw"})
    play(env, "draw")
    assert hand(env, 0) == ["4D", "9C", "9S"]
    assert st(env)["stock"] == ["3S"]


def test_A8_drawn_playable_card_may_be_played_at_once() -> None:
    """A8: a drawn card that can be played may be played at once (only that card, or pass)."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["5H"])
    play(env, "draw")
    state = st(env)
    assert (state["phase"], state["drawn_card"], state["current_player"]) == ("after_draw", "5H", 0)
    assert obs_parts(env)["phase"].tolist() == [1, 0]
    assert_legal(env, {"play 5H", "pass"})
    play(env, "play 5H")
    assert (env.agent_selection, hand(env, 0), st(env)["discard"][-1]) == ("player_1", ["4D", "9S"], "5H")


def test_A8_drawn_playable_card_may_be_kept_with_pass() -> None:
    """A8: the player may instead pass and keep the drawn card."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["5H"])
    play_all(env, ["draw", "pass"])
    assert (env.agent_selection, hand(env, 0), st(env)["phase"]) == ("player_1", ["4D", "5H", "9S"], "play")


def test_A8_drawn_jack_may_be_played_with_any_suit() -> None:
    """A8 with A5: a drawn Jack is playable at once with any declared suit."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["JC"])
    play(env, "draw")
    assert_legal(env, {*{f"play JC declare {s}" for s in "SHDC"}, "pass"})


def test_A8_unplayable_drawn_card_ends_the_turn() -> None:
    """A8: when the drawn card cannot be played the turn ends."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["9C"])
    play(env, "draw")
    assert (env.agent_selection, st(env)["phase"]) == ("player_1", "play")


def test_A8_play_after_draw_false_ends_the_turn() -> None:
    """A8: with `play_after_draw=False` even a playable drawn card ends the turn."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["5H"], play_after_draw=False)
    play(env, "draw")
    assert (env.agent_selection, hand(env, 0)) == ("player_1", ["4D", "5H", "9S"])


def test_A8_must_play_when_able() -> None:
    """A8: by default drawing with a legal play in hand is not allowed."""
    env = switch([["3H", "9S"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["5H"])
    assert_legal(env, {"play 3H"})
    with pytest.raises(ValueError, match=r"illegal action .*draw"):
        play(env, "draw")


def test_A8_voluntary_draw_allows_drawing_then_only_the_drawn_card() -> None:
    """A8: `voluntary_draw=True` allows the draw; afterwards only the drawn card may be played."""
    env = switch([["3H", "9S"], ["4C"], ["5C"], ["6C"]], starter="7H", stock=["5H"], voluntary_draw=True)
    assert_legal(env, {"play 3H", "draw"})
    play(env, "draw")
    assert_legal(env, {"play 5H", "pass"})


# ---------------------------------------------------------------- A9 going out
def test_A9_going_out_on_a_plain_card_wins_at_once() -> None:
    """A9: playing the last card (not a 2 or Joker) wins the hand at once."""
    env = switch([["3H"], ["4C"], ["5C"], ["6C"]], starter="7H")
    play(env, "play 3H")
    assert st(env)["winner"] == 0
    assert all(env.terminations.values())
    assert rewards(env) == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])
    assert all(env.infos[a]["winner"] == 0 for a in env.possible_agents)


@pytest.mark.parametrize(("last", "added", "total"), [("2H", "2S", 4), ("JOKER", "2S", 7)])
def test_A9_going_out_on_a_two_or_joker_run_goes_on(last: str, added: str, total: int) -> None:
    """A9: out on a 2 or Joker, the run goes on among the others; the hand ends right after the
    draw, the first out wins and the drawn cards count in the drawer's score."""
    stock = ["3S", "4S", "AS", "KS", "QS", "2C", "JOKER"]
    env = switch([[last], [added, "5C"], ["4D", "6D"], ["9C"]], starter="7H", stock=stock)
    play(env, f"play {last}")
    state = st(env)
    assert (state["hand_over"], state["first_out"], state["current_player"]) == (False, 0, 1)
    assert not any(env.terminations.values())
    play(env, f"play {added}")
    assert st(env)["pending_draw"] == total
    play(env, "draw")
    state = st(env)
    assert (state["hand_over"], state["winner"]) == (True, 0)
    assert sorted(state["hands"][2]) == sorted(["4D", "6D", *stock[:total]])
    expected_points = [0, 5, 10 + sum(card_value(c) for c in stock[:total]), 5]
    assert state["hand_points"] == expected_points
    assert env.infos["player_2"]["hand_points"] == expected_points
    assert rewards(env) == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])


def test_A9_empty_seats_are_passed_over() -> None:
    """A9: seats without cards are passed over by the run; the first out wins even if another went out."""
    stock = ["3S", "3H", "3D", "3C", "4S", "4H", "4D", "4C", "5S", "5H", "5D"]
    env = switch([["2H"], ["2S", "5C"], ["2D"], ["JOKER", "9C"]], starter="7H", stock=stock)
    play_all(env, ["play 2H", "play 2S", "play 2D", "play JOKER"])
    state = st(env)
    assert (state["pending_draw"], state["first_out"], state["hand_over"]) == (11, 0, False)
    assert env.agent_selection == "player_1"  # seat 0 (out) is passed over
    assert_legal(env, {"draw"})
    play(env, "draw")
    state = st(env)
    assert (state["winner"], state["hand_points"]) == (0, [0, 5 + 11 * 5, 0, 5])


@pytest.mark.parametrize(
    ("hands", "plays", "total"),
    [
        ([["2H"], ["2S", "5C"]], ["play 2H"], 2),
        ([["2H"], ["2S"], ["JOKER"], ["2D", "9C"]], ["play 2H", "play 2S", "play JOKER"], 9),
        ([["2H"], ["2S", "2C", "5C"], ["2D"]], ["play 2H", "play 2S", "play 2D"], 6),
    ],
    ids=["two-players", "three-out", "own-run-comes-back"],
)
def test_A9_last_holder_must_draw_the_run(hands: list[list[str]], plays: list[str], total: int) -> None:
    """A9 (decision added later): once every other player is out, the last holder cannot add a 2 or
    Joker to the run, even one in hand: `draw` is the only legal action, and the first out wins."""
    stock = ["3S", "4S", "5S", "6S", "3H", "4H", "5H", "6H", "3D"]
    env = switch(hands, starter="7H", stock=stock)
    play_all(env, plays)
    last = len(hands) - 1 if len(hands) != 3 else 1
    state = st(env)
    assert (state["hand_over"], state["current_player"], state["pending_draw"]) == (False, last, total)
    assert_legal(env, {"draw"})
    held = hand(env, last)
    play(env, "draw")
    state = st(env)
    assert (state["hand_over"], state["winner"], state["first_out"]) == (True, 0, 0)
    assert sorted(state["hands"][last]) == sorted(held + stock[:total])
    assert state["hand_points"][last] == sum(card_value(c) for c in held + stock[:total])
    assert env.unwrapped.legal_actions() == [] and all(env.terminations.values())


# ---------------------------------------------------------------- A10 empty stock
def test_A10_empty_stock_reshuffles_the_discard_but_its_top() -> None:
    """A10: a draw from an empty stock shuffles the discard pile except its top card into a new stock."""
    env = switch([["3H", "9C"], ["5H", "9D"], ["4S", "6C"], ["8D"]], starter="7H")
    play_all(env, ["play 3H", "play 5H", "draw"])
    state = st(env)
    assert state["discard"] == ["5H"]
    drawn = Counter(state["hands"][2]) - Counter(["4S", "6C"])
    assert sorted([*drawn.elements(), *state["stock"]]) == ["3H", "7H"]
    assert sum(drawn.values()) == 1
    assert state["phase"] == "after_draw"  # either card is a heart, playable on 5H (A8)


def test_A10_too_few_cards_draws_what_there_is() -> None:
    """A10: with too few cards even after the reshuffle, the player draws what there is."""
    env = switch([["2H", "4C"], ["2S", "5C"], ["6D", "8D"], ["9D"]], starter="7H", stock=["9C"])
    play_all(env, ["play 2H", "play 2S", "draw"])
    state = st(env)
    assert sorted(state["hands"][2]) == sorted(["6D", "8D", "9C", "7H", "2H"])
    assert (state["stock"], state["discard"]) == ([], ["2S"])
    assert (state["pending_draw"], state["current_player"]) == (0, 3)


@pytest.mark.parametrize("starter", ["7H", "2H"])
def test_A10_nothing_to_draw_skips_the_draw_and_ends_the_turn(starter: str) -> None:
    """A10: with no card in the stock and none under the top, the draw (of 1, or of a run) is
    skipped and the turn ends."""
    env = switch([["9S", "4D"], ["4C"], ["5C"], ["6C"]], starter=starter)
    assert_legal(env, {"draw"})
    play(env, "draw")
    state = st(env)
    assert (hand(env, 0), state["current_player"]) == (["4D", "9S"], 1)
    assert (state["pending_draw"], state["phase"], state["discard"]) == (0, "play", [starter])


# ---------------------------------------------------------------- A11 scoring
@pytest.mark.parametrize("card", ["JOKER", "2S", "AS", "KS", "QS", "JS", "10S", "3S", "5D", "9C"])
def test_A11_card_values(card: str) -> None:
    """A11: Joker 50, 2 = 20, Ace 15, K/Q/J/10 = 10, 3 to 9 = 5."""
    env = switch([["3H"], [card], ["4C"], ["6C"]], starter="7H")
    play(env, "play 3H")
    assert st(env)["hand_points"][1] == card_value(card)


def test_A11_others_score_their_hands_winner_zero_totals_carry() -> None:
    """A11: each other player scores their hand, the winner 0, added to the carried totals."""
    hands = [
        ["3H"],
        ["JOKER", "2C"],
        ["AS", "KD", "QC", "JH", "10S"],
        ["3S", "4D", "5C", "6S", "7D", "8C", "9S"],
    ]
    env = switch(hands, starter="7H", scores=[10, 20, 30, 40], reward="points")
    play(env, "play 3H")
    state = st(env)
    assert state["hand_points"] == [0, 70, 55, 35]
    assert state["scores"] == [10, 90, 85, 75]
    assert env.infos["player_0"]["scores"] == [10, 90, 85, 75]
    assert rewards(env) == pytest.approx([0, -0.70, -0.55, -0.35])


# ---------------------------------------------------------------- A12 match end
def match_hand_ending(scores: list[int], losers: list[list[str]], **options: Any) -> AECEnv:
    """A match-mode env whose seat 0 goes out at once on 3H; seats 1..3 keep `losers`."""
    env = switch([["3H"], *losers], starter="7H", scores=scores, episode="match", **options)
    play(env, "play 3H")
    return env


def test_A12_match_ends_at_target_and_lowest_total_wins() -> None:
    """A12: after a hand in which a total reaches 500, the match ends; the lowest total wins."""
    env = match_hand_ending([400, 495, 100, 300], [["5C"], ["3C"], ["4C"]])
    state = st(env)
    assert (state["match_over"], state["scores"]) == (True, [400, 500, 105, 305])
    assert env.infos["player_0"]["match_winners"] == [2]
    assert all(env.terminations.values())
    assert rewards(env) == pytest.approx([-1 / 3, -1 / 3, 1, -1 / 3])


def test_A12_tied_lowest_totals_share_the_win() -> None:
    """A12: ties for the lowest total share the win."""
    env = match_hand_ending([400, 495, 100, 100], [["5C"], ["3C"], ["4C"]])
    assert env.infos["player_0"]["match_winners"] == [2, 3]
    assert rewards(env) == pytest.approx([-0.5, -0.5, 0.5, 0.5])


def test_A12_target_score_option() -> None:
    """A12: `target_score` sets the threshold; reaching it exactly ends the match."""
    env = match_hand_ending([0, 0, 0, 0], [["JOKER", "JOKER"], ["3C"], ["4C"]], target_score=100)
    assert (st(env)["match_over"], st(env)["scores"]) == (True, [0, 100, 5, 5])
    assert env.infos["player_0"]["match_winners"] == [0]


def test_A12_match_goes_on_below_target_and_dealer_moves_on() -> None:
    """A12 with A3: below the target a new hand is dealt, the dealer moves one seat on, totals carry."""
    env = match_hand_ending([0, 10, 20, 30], [["5C"], ["3C"], ["4C"]])
    state = st(env)
    assert (state["match_over"], state["hand_over"], state["hands_played"]) == (False, False, 1)
    assert (state["dealer"], state["scores"]) == (0, [0, 15, 25, 35])
    assert [len(h) for h in state["hands"]] == [7] * 4
    assert sum(all_cards(state).values()) == 216
    assert not any(env.terminations.values())
    assert rewards(env) == [0, 0, 0, 0]  # "win" rewards come at the end of the match
    # The new hand's infos keep the finished hand's result apart: no 'winner' of a hand still being played.
    assert env.infos["player_0"]["last_hand"]["winner"] == 0
    assert "winner" not in env.infos["player_0"]
    assert env.infos["player_0"]["hand_number"] == 2
    starter = state["discard"][0]
    rank = "JOKER" if starter == "JOKER" else starter[:-1]
    first = {"K": 3, "8": 2}.get(rank, 1)  # A4 from the new dealer, seat 0
    assert state["current_player"] == first


def test_A12_totals_far_past_a_small_target_stay_in_the_observation_space() -> None:
    """A12: with a small `target_score` a hand can push totals far past it; observations stay in the space."""
    env = match_hand_ending([0, 0, 0, 0], [["JOKER"] * 4, ["3C"], ["4C"]], target_score=10)
    assert st(env)["scores"] == [0, 200, 5, 5]
    for agent in env.possible_agents:
        assert env.observation_space(agent).contains(env.observe(agent))
    assert obs_parts(env, "player_0")["scores"].tolist() == [0, 10, 0.5, 0.5]


def test_A12_hand_episode_ends_after_one_hand_below_target() -> None:
    """A12: with episode="hand" (default) the episode ends with the hand, the match is not over."""
    env = switch([["3H"], ["5C"], ["3C"], ["4C"]], starter="7H", scores=[0, 0, 0, 0])
    play(env, "play 3H")
    assert all(env.terminations.values())
    assert st(env)["match_over"] is False


def test_A12_points_reward_every_hand_of_a_match() -> None:
    """A12 with A11: in a match with reward="points" each hand pays -points/100 at once."""
    env = match_hand_ending([0, 0, 0, 0], [["AS"], ["3C"], ["KC"]], reward="points")
    assert rewards(env) == pytest.approx([0, -0.15, -0.05, -0.10])


# ---------------------------------------------------------------- C1 turn limit
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_C1_max_turns_truncates_the_hand(episode: str) -> None:
    """C1: after `max_turns` actions the hand is truncated: reported as truncated, no winner, no points."""
    env = switch([["3H", "4C"], ["5H", "5C"], ["6H", "6C"], ["8D"]], starter="7H", scores=[1, 2, 3, 4],
                 max_turns=3, episode=episode)
    play_all(env, ["play 3H", "play 5H"])
    assert not any(env.truncations.values())
    play(env, "play 6H")
    state = st(env)
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert (state["hand_over"], state["truncated"], state["winner"]) == (True, True, None)
    assert state["scores"] == [1, 2, 3, 4]
    assert env.infos["player_0"]["truncated"] is True
    assert env.infos["player_0"]["winner"] is None
    assert rewards(env) == [0, 0, 0, 0]
    assert not env.unwrapped.legal_actions()


def test_C1_going_out_on_the_last_allowed_turn_is_a_win() -> None:
    """C1: a hand won on the last allowed action is a win, not a truncation."""
    env = switch([["3H"], ["5C"], ["6C"], ["8D"]], starter="7H", max_turns=1)
    play(env, "play 3H")
    assert (st(env)["winner"], st(env)["truncated"]) == (0, False)
    assert all(env.terminations.values()) and not any(env.truncations.values())


# ---------------------------------------------------------------- C2 determinism
def random_game(seed: int, steps: int) -> tuple[AECEnv, list[dict[str, Any]]]:
    """A match played with seeded random actions; returns the env and the state after each action."""
    env = switch_v1.env(episode="match")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states = [st(env)]
    for _ in range(steps):
        if not play_random(env, rng, 1):
            break
        states.append(st(env))
    return env, states


def test_C2_same_seed_same_game() -> None:
    """C2: the same seed and actions give the same deals, states and observations."""
    env_a, states_a = random_game(seed=21, steps=300)
    env_b, states_b = random_game(seed=21, steps=300)
    assert states_a == states_b
    for agent in env_a.possible_agents:
        obs_a, obs_b = env_a.observe(agent)["observation"], env_b.observe(agent)["observation"]
        np.testing.assert_array_equal(obs_a, obs_b)
    _, states_c = random_game(seed=22, steps=0)
    assert states_c[0]["hands"] != states_a[0]["hands"]


def test_C2_restored_state_replays_the_same_game() -> None:
    """C2: a saved state restores the generator too, so reshuffles and later deals replay identically."""
    env = switch_v1.env(episode="match")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    play_random(env, rng, 40)
    saved = st(env)
    later = play_random(env, rng, 400)
    copy = switch_v1.env(episode="match")
    copy.reset(options={"state": saved})
    for action in later:
        copy.step(action)
    assert st(copy) == st(env)
