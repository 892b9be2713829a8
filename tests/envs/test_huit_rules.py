"""Huit américain rule scenarios, one or more per rule id of RULES.md part B (and C1, C2).

Each test stacks a deal (or restores an edited saved state), plays actions by
their text form and checks the effects on `state_dict()`, rewards, infos and
the legal set.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.envs import cards as C
from cardlab.envs import huit_v1
from cardlab.envs.huit import rules as R
from cardlab.envs.rng import rng_from_state
from tests.envs.helpers import legal_strs, play, play_all

RANK_TEXTS = ("7", "8", "9", "10", "J", "Q", "K", "A")


# ---------------------------------------------------------------- helpers
def stacked(
    hands: list[list[str]],
    bank: Sequence[str] = (),
    *,
    dealer: int | None = None,
    scores: list[int] | None = None,
    seed: int = 0,
    **options: Any,
) -> AECEnv:
    """A Huit env (default num_players = len(hands)) reset to a stacked deal; bank top card first."""
    options.setdefault("num_players", len(hands))
    env = huit_v1.env(**options)
    deal: dict[str, Any] = {"hands": hands, "bank": list(bank)}
    if dealer is not None:
        deal["dealer"] = dealer
    if scores is not None:
        deal["scores"] = scores
    env.reset(seed=seed, options={"deal": deal})
    return env


def state(env: AECEnv) -> dict[str, Any]:
    """The engine's full state as plain data (cards as text)."""
    return env.unwrapped.state_dict()


def held(data: dict[str, Any], seat: int) -> set[str]:
    """The cards of `seat` in a state_dict (no card is dealt twice, so a set)."""
    return set(data["hands"][seat])


def restore(env: AECEnv, **changes: Any) -> None:
    """Reset `env` to its own saved state with some fields edited (streaks, scores, cards...)."""
    data = state(env)
    unknown = set(changes) - set(data)
    if unknown:
        raise ValueError(f"restore: {sorted(unknown)} are not state_dict keys")
    data.update(changes)
    env.reset(options={"state": data})


def restack(env: AECEnv, hands: list[list[str]], bank: Sequence[str] = ()) -> None:
    """Replace the cards of a freshly dealt hand of a match; dealer, scores and streaks stay.

    The cards not given are left out of the hand, as a stacked deal leaves them.
    """
    used = {*bank, *(card for hand in hands for card in hand)}
    left_out = [C.card_str(c) for c in R.DECK_CARDS if C.card_str(c) not in used]
    restore(env, hands=hands, bank=list(bank), table=[], left_out=left_out)


def rewards(env: AECEnv) -> list[float]:
    """The rewards of the last step, in seat order."""
    return [env.rewards[a] for a in env.possible_agents]


def all_flags(flags: dict[str, bool]) -> list[bool]:
    """Terminations or truncations in seat order."""
    return list(flags.values())


def eights(*groups: str) -> set[str]:
    """Text of laying each group of 8s (written low suits first, top last) with each announced suit."""
    return {f"play {g} declare {s}" for g in groups for s in C.SUITS}


def canonical(text: str) -> str:
    """The env's own spelling of an action text (cards below the top in suit order)."""
    return R.action_to_str(R.str_to_action(text))


def groups_of(cards: Sequence[str]) -> set[str]:
    """Every group that can be laid from `cards` (all of one plain rank), with every choice of top."""
    out: set[str] = set()
    for size in range(1, len(cards) + 1):
        for group in itertools.combinations(cards, size):
            for top in group:
                out.add(canonical(" ".join(["play", *(c for c in group if c != top), top])))
    return out


def expected_deal(
    rng: np.random.Generator, dealer: int, num_players: int, each: int
) -> tuple[list[list[str]], list[str]]:
    """B2 by hand: shuffle the 32 cards, give them one at a time from seat dealer+1; the rest is the bank."""
    pack = list(R.DECK_CARDS)
    rng.shuffle(pack)
    hands: list[list[int]] = [[] for _ in range(num_players)]
    for i in range(each * num_players):
        hands[(dealer + 1 + i) % num_players].append(pack.pop())
    return [[C.card_str(c) for c in sorted(h)] for h in hands], [C.card_str(c) for c in reversed(pack)]


# ---------------------------------------------------------------- B1
def test_B1_deck_is_the_32_cards_seven_to_ace() -> None:
    """B1: dealing every card gives 7 8 9 10 J Q K A of the four suits, each exactly once."""
    env = huit_v1.env(num_players=4, hand_size="all")
    env.reset(seed=3)
    d = state(env)
    dealt = [card for hand in d["hands"] for card in hand] + d["bank"]
    assert sorted(dealt) == sorted(r + s for r in RANK_TEXTS for s in C.SUITS)


@pytest.mark.parametrize("card", ["6S", "2H", "JOKER"])
def test_B1_cards_outside_the_deck_are_refused(card: str) -> None:
    """B1: cards below 7 and jokers exist in neither actions nor deals."""
    with pytest.raises(ValueError, match="B1"):
        R.str_to_action(f"play {card}")
    env = huit_v1.env(num_players=2)
    with pytest.raises(ValueError, match="deck holds 0"):
        env.reset(options={"deal": {"hands": [[card], ["7S"]]}})


# ---------------------------------------------------------------- B2
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_B2_two_to_six_players_get_five_cards_and_the_rest_is_the_bank(n: int) -> None:
    """B2: num_players 2..6, hand_size 5 by default, the undealt cards form the bank; no card is turned up."""
    env = huit_v1.env(num_players=n)
    env.reset(seed=n)
    d = state(env)
    assert env.possible_agents == [f"player_{i}" for i in range(n)]
    assert [len(h) for h in d["hands"]] == [5] * n
    assert len(d["bank"]) == 32 - 5 * n
    assert d["table"] == []


@pytest.mark.parametrize("n", [1, 7])
def test_B2_other_player_counts_are_refused(n: int) -> None:
    """B2: fewer than 2 or more than 6 players is a clear error."""
    with pytest.raises(ValueError, match="num_players"):
        huit_v1.env(num_players=n)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_B2_hand_size_all_deals_every_card_that_divides_equally(n: int) -> None:
    """B2: hand_size="all" gives everyone 32 // n cards; the remainder is the bank."""
    env = huit_v1.env(num_players=n, hand_size="all")
    env.reset(seed=0)
    d = state(env)
    assert [len(h) for h in d["hands"]] == [32 // n] * n
    assert len(d["bank"]) == 32 % n


@pytest.mark.parametrize(("n", "hand_size"), [(4, 0), (4, 9), (6, 6), (2, "half"), (2, True)])
def test_B2_impossible_hand_sizes_are_refused(n: int, hand_size: Any) -> None:
    """B2: the deal must be equal and fit in 32 cards."""
    with pytest.raises(ValueError, match="hand_size"):
        huit_v1.env(num_players=n, hand_size=hand_size)


def test_B2_deal_one_card_at_a_time_from_the_dealers_next_seat() -> None:
    """B2: the i-th card off the shuffled pack goes to seat dealer+1+i; the bank keeps the pack's order."""
    seed = 11
    env = huit_v1.env(num_players=3, hand_size=4)
    env.reset(seed=seed)
    d = state(env)
    hands, bank = expected_deal(np.random.default_rng(seed), dealer=2, num_players=3, each=4)
    assert d["dealer"] == 2
    assert d["hands"] == hands
    assert d["bank"] == bank


def test_B2_stacked_deal_refuses_an_empty_hand() -> None:
    """B2 (decision added later): a stacked deal gives every seat cards; a seat without any
    would end the hand before it starts (B11). The message names the seats."""
    with pytest.raises(ValueError, match=r"no cards to seat\(s\) \[1, 3\]"):
        stacked([["9S"], [], ["7H"], []])


# ---------------------------------------------------------------- B3
def test_B3_the_first_to_receive_cards_plays_first() -> None:
    """B3: the dealer's next seat plays first, for a shuffled deal (dealer 3) and a stacked one."""
    env = huit_v1.env()
    env.reset(seed=5)
    assert state(env)["dealer"] == 3
    assert env.agent_selection == "player_0"
    env = stacked([["7S"], ["7H"], ["7D"], ["7C"]], dealer=1)
    assert env.agent_selection == "player_2"


def test_B3_play_goes_round_in_deal_order_and_kings_do_not_reverse() -> None:
    """B3: the direction never changes (no card reverses it, unlike Switch's King)."""
    env = stacked([["KS", "7D", "JS"], ["KH", "7H"], ["KD", "7S"], ["KC", "JC"]], bank=["9C"])
    seen = []
    for text in ["play KS", "play KH", "play KD", "draw", "pass", "play 7D"]:
        seen.append(env.agent_selection)
        play(env, text)
    seen.append(env.agent_selection)
    assert seen == ["player_0", "player_1", "player_2", "player_3", "player_3", "player_0", "player_1"]


def test_B3_the_dealer_moves_one_seat_on_after_each_hand_of_a_match() -> None:
    """B3 (and B2): in match mode the next hand is dealt by seat 0, from seat 1, who plays first."""
    env = stacked([["9S"], ["7H"], ["7D"]], episode="match")
    rng_before = state(env)["rng"]
    play(env, "play 9S")
    d = state(env)
    assert (d["dealer"], d["current_player"], d["hands_played"]) == (0, 1, 1)
    hands, bank = expected_deal(rng_from_state(rng_before), dealer=0, num_players=3, each=5)
    assert (d["hands"], d["bank"], d["table"]) == (hands, bank, [])
    assert env.agent_selection == "player_1"

    restack(env, [["7D"], ["9S"], ["7H"]])
    play(env, "play 9S")
    d = state(env)
    assert (d["dealer"], d["current_player"], d["hands_played"]) == (1, 2, 2)


# ---------------------------------------------------------------- B4
def test_B4_empty_table_takes_one_card_of_any_kind_or_several_eights() -> None:
    """B4: on the empty table: any single card, or 8s alone or together; no other group."""
    env = stacked([["9S", "9H", "AS", "QD", "8C", "8D"], ["7H"], ["7D"], ["7C"]], bank=["10S"])
    assert legal_strs(env) == (
        {"play 9S", "play 9H", "play AS", "play QD", "draw"} | eights("8C", "8D", "8C 8D", "8D 8C")
    )


def test_B4_a_group_of_another_rank_on_the_empty_table_is_illegal() -> None:
    """B4/B5: several cards of a rank other than 8 need a card to be laid on."""
    env = stacked([["9S", "9H", "KC"], ["7H"]])
    with pytest.raises(ValueError, match="illegal action"):
        play(env, "play 9S 9H")
    assert held(state(env), 0) == {"9S", "9H", "KC"}


def test_B4_several_eights_open_the_table_and_announce() -> None:
    """B4/B6: several 8s may be the first cards laid; the last laid is the top and a suit is announced."""
    env = stacked([["8D", "8C", "7S"], ["7H"], ["7D"], ["7C"]])
    play(env, "play 8D 8C declare H")
    d = state(env)
    assert d["table"] == ["8D", "8C"]
    assert (d["current_suit"], d["announced"], d["current_player"]) == ("H", True, 1)


# ---------------------------------------------------------------- B5
def test_B5_rank_match_lets_any_card_of_the_group_be_the_top() -> None:
    """B5: the group's rank is the top card's rank, so every subset with every top is legal."""
    env = stacked([["9S", "7C"], ["9H", "9D", "9C", "KH"], ["7D"], ["7H"]], bank=["JS"])
    play(env, "play 9S")
    assert legal_strs(env) == groups_of(["9H", "9D", "9C"]) | {"draw"}
    play(env, "play 9C 9D 9H")
    d = state(env)
    assert d["table"][0] == "9S" and d["table"][-1] == "9H"
    assert sorted(d["table"][1:]) == ["9C", "9D", "9H"]
    assert d["current_suit"] == "H"


def test_B5_suit_match_the_matching_card_cannot_be_the_top_of_a_group() -> None:
    """B5: matching by suit, the suited card is laid first, so any other card of the group is the top."""
    env = stacked([["KD", "7C"], ["9S", "9H", "9D", "7H"], ["7D"], ["JC"]], bank=["10C"])
    play(env, "play KD")
    assert legal_strs(env) == {
        "play 9D", "play 9D 9S", "play 9D 9H", "play 9H 9D 9S", "play 9S 9D 9H", "draw",
    }
    for text in ["play 9S 9D", "play 9H", "play 9S 9H", "play 9S 9H 9D", "play 7H"]:
        with pytest.raises(ValueError, match="illegal action"):
            play(env, text)
    play(env, "play 9S 9D 9H")
    d = state(env)
    assert d["table"][:2] == ["KD", "9D"]  # the first card laid matches the top card's suit
    assert sorted(d["table"][2:]) == ["9H", "9S"] and d["table"][-1] == "9H"
    assert (d["current_suit"], d["current_player"]) == ("H", 2)


@pytest.mark.parametrize(
    ("text", "table"),
    [
        ("play 9S 9D 9H", ["7D", "9D", "9S", "9H"]),
        ("play 9D 9S 9H", ["7D", "9D", "9S", "9H"]),
        ("play 9C 9S 9D 9H", ["7D", "9D", "9S", "9C", "9H"]),
        ("play 9H 9D 9S", ["7D", "9D", "9H", "9S"]),
    ],
)
def test_B5_cards_under_the_top_go_matching_card_first_then_in_suit_order(
    text: str, table: list[str]
) -> None:
    """B5 (decision added later): the player picks the top card; under it the engine lays the card
    that matches (9D on 7D) first, then the others in suit order S, H, D, C, whatever the text order."""
    env = stacked([["7D", "KC"], ["9S", "9H", "9D", "9C", "7S"]])
    play_all(env, ["play 7D", text])
    d = state(env)
    assert d["table"] == table
    assert (d["current_suit"], d["current_player"]) == (table[-1][-1], 0)


def test_B5_a_group_without_a_matching_card_is_illegal() -> None:
    """B5: neither suit nor rank matches, so no card or group of that rank can be laid."""
    env = stacked([["KS", "7C"], ["9H", "9D", "10S"], ["7D"], ["JC"]])
    play(env, "play KS")
    assert legal_strs(env) == {"play 10S", "draw"}


@pytest.mark.parametrize("text", ["play 9S 10S", "play 9S 8S", "play 8S 9S declare H", "play QS KS AS"])
def test_B5_B6_cards_of_different_ranks_cannot_be_laid_together(text: str) -> None:
    """B5/B6: one rank per group; 8s are never mixed with other ranks."""
    with pytest.raises(ValueError, match="one rank"):
        R.str_to_action(text)


# ---------------------------------------------------------------- B6
def test_B6_an_eight_goes_on_anything_and_the_announced_suit_must_be_followed() -> None:
    """B6: after 8S announcing D, the next player lays a diamond or 8s: not the 8's suit, not the old rank."""
    env = stacked(
        [["KH", "7C"], ["8S", "8C", "7S"], ["9D", "9H", "KS", "10S", "8H"], ["10D", "7H"]],
        bank=["JC", "JS"],
    )
    play(env, "play KH")
    assert legal_strs(env) == eights("8S", "8C", "8S 8C", "8C 8S") | {"draw"}
    play(env, "play 8S declare D")
    d = state(env)
    assert (d["current_suit"], d["announced"], d["table"][-1]) == ("D", True, "8S")
    assert legal_strs(env) == {"play 9D", "play 9D 9H", "draw"} | eights("8H")


def test_B6_the_announced_suit_holds_until_a_card_is_laid_on_it() -> None:
    """B6: a draw and pass leaves the announcement in force; the next card laid replaces it."""
    env = stacked([["KH", "7C"], ["8S", "7S"], ["9H", "JH"], ["10D", "7H"]], bank=["JC", "JS"])
    play_all(env, ["play KH", "play 8S declare D", "draw", "pass"])
    d = state(env)
    assert (d["current_player"], d["current_suit"], d["announced"]) == (3, "D", True)
    assert legal_strs(env) == {"play 10D", "draw"}
    play(env, "play 10D")
    d = state(env)
    assert (d["current_suit"], d["announced"]) == ("D", False)


def test_B6_several_eights_at_once_on_a_card_with_any_top() -> None:
    """B6: 8s go on any card, several at once, in any order; 8s also go on 8s."""
    env = stacked([["AH", "7C"], ["8S", "8C", "7S"], ["8D", "9H"], ["10D", "7H"]])
    play(env, "play AH")
    play(env, "play 8C 8S declare C")
    d = state(env)
    assert d["table"] == ["AH", "8C", "8S"]
    assert (d["current_suit"], d["announced"], d["ace_penalty"]) == ("C", True, False)
    assert legal_strs(env) == {"draw"} | eights("8D")


# ---------------------------------------------------------------- B7
ACE_DEAL = [["AS", "KS", "7C"], ["AH", "8C", "KH", "7S"], ["9D", "JD"], ["10C", "JC"]]
ACE_BANK = ["7D", "7H", "9S", "9H", "10S"]


def test_B7_only_aces_or_eights_go_on_an_ace() -> None:
    """B7: facing an Ace, neither its suit (7S) nor anything else but Aces and 8s can be laid."""
    env = stacked(ACE_DEAL, ACE_BANK)
    play(env, "play AS")
    assert state(env)["ace_penalty"] is True
    assert legal_strs(env) == {"play AH", "draw"} | eights("8C")


def test_B7_the_next_player_draws_two_and_the_turn_ends() -> None:
    """B7: the player right after the Ace draws 2 (not 1) and does not get to play."""
    env = stacked(ACE_DEAL, ACE_BANK)
    play_all(env, ["play AS", "draw"])
    d = state(env)
    assert held(d, 1) == {"7S", "7D", "7H", "8C", "KH", "AH"}
    assert d["bank"] == ["9S", "9H", "10S"]
    assert (d["current_player"], d["phase"], d["ace_penalty"]) == (2, "play", False)


def test_B7_later_players_facing_the_same_ace_draw_one_as_usual() -> None:
    """B7/B9: the penalty was paid, so the player after draws 1, then may only lay Aces/8s or pass."""
    env = stacked(ACE_DEAL, ACE_BANK)
    play_all(env, ["play AS", "draw"])
    assert legal_strs(env) == {"draw"}
    play(env, "draw")
    d = state(env)
    assert held(d, 2) == {"9S", "9D", "JD"}
    assert (d["current_player"], d["phase"]) == (2, "after_draw")
    assert legal_strs(env) == {"pass"}
    play(env, "pass")
    assert env.agent_selection == "player_3"


def test_B7_several_aces_at_once_still_cost_two() -> None:
    """B7 (decision): no stacking: three Aces cost the next player 2 cards, not 6."""
    env = stacked([["KS", "7C"], ["AS", "AH", "AD", "7S"], ["9D", "JD"], ["10C", "JC"]], ACE_BANK)
    play_all(env, ["play KS", "play AS AD AH", "draw"])
    d = state(env)
    assert held(d, 2) == {"7D", "7H", "9D", "JD"}
    assert d["current_player"] == 3


def test_B7_second_ace_passes_penalty() -> None:
    """B7: an Ace on an Ace passes the 2-card penalty on; the one who answered draws nothing."""
    env = stacked(ACE_DEAL, ACE_BANK)
    play_all(env, ["play AS", "play AH"])
    d = state(env)
    assert (d["ace_penalty"], d["current_player"], len(d["hands"][1])) == (True, 2, 3)
    play(env, "draw")
    d = state(env)
    assert held(d, 2) == {"7D", "7H", "9D", "JD"}
    assert (d["current_player"], len(d["hands"][1])) == (3, 3)


def test_B7_an_eight_on_an_ace_clears_the_penalty() -> None:
    """B7/B6: after an 8 the next player follows the announced suit and draws only 1."""
    env = stacked(ACE_DEAL, ACE_BANK)
    play_all(env, ["play AS", "play 8C declare D"])
    assert state(env)["ace_penalty"] is False
    assert legal_strs(env) == {"play 9D", "play JD", "draw"}
    play(env, "draw")
    d = state(env)
    assert held(d, 2) == {"7D", "9D", "JD"}
    assert (d["current_player"], d["phase"]) == (2, "after_draw")


# ---------------------------------------------------------------- B8
def test_B8_a_queen_skips_the_next_player() -> None:
    """B8: seat 0 lays a Queen, seat 1 is skipped."""
    env = stacked([["QS", "7C"], ["QH", "7H"], ["9S", "7D"], ["JC", "JS"]])
    play(env, "play QS")
    assert env.agent_selection == "player_2"
    assert held(state(env), 1) == {"7H", "QH"}


@pytest.mark.parametrize(
    ("text", "skips_each", "next_seat"),
    [
        ("play QS QH", True, 0),
        ("play QS QD QH", True, 1),
        ("play QS QD QC QH", True, 1),
        ("play QS QH", False, 3),
        ("play QS QD QH", False, 3),
    ],
)
def test_B8_several_queens_skip_one_player_each(text: str, skips_each: bool, next_seat: int) -> None:
    """B8: seat 1 lays Queens; one skip each (queen_skips_each=True, default) or one skip in all.
    Four Queens skip only the three others: seat 1 plays again (decision added later)."""
    env = stacked(
        [["KS", "7C"], ["QS", "QH", "QD", "QC", "7H"], ["9S", "7D"], ["JC", "JS"]],
        queen_skips_each=skips_each,
    )
    play_all(env, ["play KS", text])
    assert env.agent_selection == f"player_{next_seat}"


@pytest.mark.parametrize("text", ["play QS", "play QS QH", "play QS QD QH"])
def test_B8_with_two_players_any_number_of_queens_gives_the_layer_another_turn(text: str) -> None:
    """B8 (decision added later): with 2 players one Queen skips the opponent and more Queens
    never skip the layer, so the layer plays again (the turn used to reach the opponent with two)."""
    env = stacked([["QS", "QH", "QD", "9S", "9H"], ["KS", "7H"]], dealer=0)
    play_all(env, ["play KS", text])
    d = state(env)
    assert env.agent_selection == "player_0" and d["current_player"] == 0
    assert held(d, 1) == {"7H"}
    assert f"play 9{d['current_suit']}" in legal_strs(env)  # seat 0 lays again, on its own Queen


@pytest.mark.parametrize(("text", "next_seat"), [("play QS", 0), ("play QS QH", 1), ("play QS QD QH", 1)])
def test_B8_queens_never_skip_the_player_who_laid_them(text: str, next_seat: int) -> None:
    """B8 (decision added later): with 3 players seat 1's Queens skip seat 2, then seat 0, and stop
    there: with 2 or 3 Queens seat 1 plays again (3 Queens used to pass the turn to seat 2)."""
    env = stacked([["KS", "7C"], ["QS", "QH", "QD", "7H"], ["9S", "7D"]], queen_skips_each=True)
    play_all(env, ["play KS", text])
    assert env.agent_selection == f"player_{next_seat}"
    assert state(env)["current_player"] == next_seat


# ---------------------------------------------------------------- B9
def test_B9_drawing_does_not_end_the_turn_and_is_allowed_with_a_play_in_hand() -> None:
    """B9: a player holding playable cards may still draw; they then lay (here the drawn card) or pass."""
    env = stacked([["KS", "7C"], ["9S", "10C"], ["9D"], ["JC"]], bank=["KH", "7D"])
    play(env, "play KS")
    assert legal_strs(env) == {"play 9S", "draw"}
    play(env, "draw")
    d = state(env)
    assert (d["current_player"], d["phase"], held(d, 1)) == (1, "after_draw", {"9S", "10C", "KH"})
    assert legal_strs(env) == {"play 9S", "play KH", "pass"}
    play(env, "play KH")
    d = state(env)
    assert (d["table"], d["current_player"], d["phase"]) == (["KS", "KH"], 2, "play")


def test_B9_pass_only_after_drawing_and_it_ends_the_turn() -> None:
    """B9: no pass without a draw; pass hands the turn on and keeps the drawn card."""
    env = stacked([["9S", "7C"], ["9H"]], bank=["KD"])
    assert "pass" not in legal_strs(env)
    with pytest.raises(ValueError, match="illegal action"):
        play(env, "pass")
    play_all(env, ["draw", "pass"])
    d = state(env)
    assert (d["current_player"], d["phase"], held(d, 0)) == (1, "play", {"7C", "9S", "KD"})


def test_B9_no_second_draw_is_offered() -> None:
    """B9: after a draw only lay or pass; a second draw is refused (pass is what ends the turn)."""
    env = stacked([["9S", "7C"], ["9H"]], bank=["KD", "KC"])
    play(env, "draw")
    assert "draw" not in legal_strs(env)
    with pytest.raises(ValueError, match="illegal action"):
        play(env, "draw")
    assert state(env)["bank"] == ["KC"]


# ---------------------------------------------------------------- B10
B10_DEAL = [["7S", "9H", "KC"], ["7H", "9D", "KD"]]
B10_PLAYS = ["play 7S", "play 7H", "play 9H", "play 9D"]  # table 7S 7H 9H 9D, bank empty


def test_B10_empty_bank_turns_the_table_over_as_it_lies() -> None:
    """B10: the played cards but the top become the bank, turned over: the table's bottom card comes first."""
    env = stacked(B10_DEAL)
    play_all(env, B10_PLAYS)
    assert (state(env)["bank"], state(env)["table"]) == ([], ["7S", "7H", "9H", "9D"])
    play(env, "draw")
    d = state(env)
    assert held(d, 0) == {"7S", "KC"}
    assert (d["bank"], d["table"], d["current_suit"]) == (["7H", "9H"], ["9D"], "D")
    play_all(env, ["pass", "draw"])
    assert held(state(env), 1) == {"7H", "KD"}


def test_B10_shuffle_on_refill_shuffles_the_table_instead() -> None:
    """B10 option shuffle_on_refill: same cards, seed-determined order, not always the turned-over one."""
    orders = set()
    for seed in range(8):
        runs = []
        for _ in range(2):
            env = stacked(B10_DEAL, seed=seed, shuffle_on_refill=True)
            play_all(env, [*B10_PLAYS, "draw"])
            d = state(env)
            drawn = sorted(held(d, 0) - {"KC"})
            runs.append((drawn, d["bank"], d["table"]))
        assert runs[0] == runs[1]  # C2: the shuffle comes from the seed
        drawn, bank, table = runs[0]
        assert table == ["9D"]
        assert sorted(drawn + bank) == ["7H", "7S", "9H"]
        orders.add((*drawn, *bank))
    assert orders - {("7S", "7H", "9H")}


def test_B10_nothing_to_turn_over_skips_the_draw() -> None:
    """B10: empty bank and only the top card played: nothing is drawn, the player may then pass."""
    env = stacked([["9S", "KC"], ["7H"]])
    play_all(env, ["play 9S", "draw"])
    d = state(env)
    assert (held(d, 1), d["bank"], d["table"]) == ({"7H"}, [], ["9S"])
    assert (d["current_player"], d["phase"]) == (1, "after_draw")
    assert legal_strs(env) == {"pass"}


def test_B10_B7_the_ace_penalty_draws_what_there_is() -> None:
    """B10/B7: one card in the bank, nothing to turn over: the penalty draws that one and the turn ends."""
    env = stacked([["AS", "KC"], ["7H"]], bank=["KD"])
    play_all(env, ["play AS", "draw"])
    d = state(env)
    assert (held(d, 1), d["bank"], d["current_player"]) == ({"7H", "KD"}, [], 0)


# ---------------------------------------------------------------- B11
def test_B11_the_hand_ends_when_a_player_has_no_cards() -> None:
    """B11: the player who lays their last card wins; the others score their cards; the episode ends."""
    env = stacked([["9S"], ["8S", "AS", "10S"], ["9H", "7S", "KS"], ["QS", "JS"]])
    play(env, "play 9S")
    d = state(env)
    assert (d["hand_over"], d["winner"], d["hand_points"]) == (True, 0, [0, 53, 20, 5])
    assert d["scores"] == [0, 53, 20, 5]
    assert all_flags(env.terminations) == [True] * 4
    assert all_flags(env.truncations) == [False] * 4
    assert rewards(env) == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])
    assert env.infos["player_2"]["winner"] == 0
    assert env.infos["player_2"]["hand_points"] == [0, 53, 20, 5]
    assert env.unwrapped.legal_actions() == []


@pytest.mark.parametrize(
    ("rank", "points"), [("8", 32), ("A", 11), ("10", 10), ("9", 9), ("7", 7), ("K", 4), ("Q", 3), ("J", 2)]
)
def test_B11_card_values(rank: str, points: int) -> None:
    """B11: each rank's value, one card at a time; with reward="points" the loser gets -points/100."""
    env = stacked([["9S"], [rank + "H"]], reward="points")
    play(env, "play 9S")
    assert state(env)["hand_points"] == [0, points]
    assert rewards(env) == pytest.approx([0.0, -points / 100])


@pytest.mark.parametrize(
    ("hand", "last"), [(["AH"], "play AH"), (["QH"], "play QH"), (["9H", "9S"], "play 9H 9S")]
)
def test_B11_any_last_card_ends_the_hand(hand: list[str], last: str) -> None:
    """B11: a last Ace costs nobody 2 cards, a last Queen skips nobody (the hand is simply over)."""
    env = stacked([hand, ["KH", "7H", "7D"]], dealer=0, bank=["JS"])
    play_all(env, ["play KH", last])
    d = state(env)
    assert (d["hand_over"], d["winner"], d["ace_penalty"], d["hand_points"]) == (True, 0, False, [0, 14])
    assert all_flags(env.terminations) == [True, True]
    assert env.unwrapped.legal_actions() == []


def test_B11_a_last_eight_needs_no_announcement() -> None:
    """B11: every announcement is accepted for a last 8 and none takes effect."""
    env = stacked([["8C"], ["KH", "7H", "7D"]], dealer=0, bank=["JS"])
    play(env, "play KH")
    assert legal_strs(env) == eights("8C") | {"draw"}
    play(env, "play 8C declare D")
    d = state(env)
    assert (d["hand_over"], d["winner"], d["hand_points"]) == (True, 0, [0, 14])
    assert (d["current_suit"], d["announced"]) == ("H", False)


# ---------------------------------------------------------------- B12
def test_B12_three_wins_in_a_row_deduct_ten_and_the_streak_restarts() -> None:
    """B12: seat 0 wins three hands running (deals rotate), gets -10 (total -10 < 0), then restarts at 1."""
    env = stacked([["9S"], ["7H"]], episode="match")
    play(env, "play 9S")
    assert (state(env)["streaks"], state(env)["scores"]) == ([1, 0], [0, 7])

    restack(env, [["9S"], ["9H", "7C"]])  # dealer 0: seat 1 plays first
    play_all(env, ["play 9H", "play 9S"])
    assert (state(env)["streaks"], state(env)["scores"]) == ([2, 0], [0, 14])

    restack(env, [["9S"], ["JH"]])
    play(env, "play 9S")
    assert env.infos["player_0"]["last_hand"]["score_changes"] == [-10, 2]
    assert (state(env)["streaks"], state(env)["scores"]) == ([0, 0], [-10, 16])
    assert rewards(env) == [0.0, 0.0]  # reward="win" pays at the end of the match only (B13)

    restack(env, [["9S"], ["9H", "7C"]])
    play_all(env, ["play 9H", "play 9S"])
    assert env.infos["player_0"]["last_hand"]["score_changes"] == [0, 7]
    assert state(env)["streaks"] == [1, 0]


def test_B12_a_restored_streak_of_two_earns_the_bonus_below_zero() -> None:
    """B12: restored totals and streaks: the third win takes 5 down to -5; every streak restarts."""
    env = stacked([["7D"], ["9S"], ["7H"]], dealer=0, episode="match", reward="points")
    restore(env, streaks=[0, 2, 0], scores=[30, 5, 40])
    play(env, "play 9S")
    assert env.infos["player_1"]["last_hand"]["score_changes"] == [7, -10, 7]
    assert state(env)["scores"] == [37, -5, 47]
    assert state(env)["streaks"] == [0, 0, 0]
    assert rewards(env) == pytest.approx([-0.07, 0.1, -0.07])


def test_B12_a_win_by_someone_else_breaks_a_streak() -> None:
    """B12: 'in a row' means consecutive hands: seat 0's streak of 2 ends when seat 2 wins (one seat at most
    is on a streak, the last winner: a saved state with two is refused)."""
    env = stacked([["7D"], ["9S"], ["7H"]], dealer=1, episode="match")
    with pytest.raises(ValueError, match=r"'streaks' must be 0 for every seat but one at most"):
        restore(env, streaks=[2, 1, 0])
    restore(env, streaks=[2, 0, 0])
    play(env, "play 7H")
    assert env.infos["player_0"]["last_hand"]["score_changes"] == [7, 9, 0]
    assert state(env)["streaks"] == [0, 0, 1]


def test_B12_a_truncated_hand_breaks_every_streak() -> None:
    """B12 with C1 (engine decision): a hand without a winner ends every streak and scores nothing."""
    env = stacked([["9S", "7C"], ["9H"]], bank=["KD"], episode="match", max_turns=1)
    restore(env, streaks=[2, 0], scores=[3, 4])
    play(env, "draw")
    d = state(env)
    assert (d["truncated"], d["streaks"], d["scores"]) == (True, [0, 0], [3, 4])


# ---------------------------------------------------------------- B13
B13_HANDS = [["9S"], ["7H"], ["JH"]]  # seat 0 wins, seat 1 scores 7, seat 2 scores 2


@pytest.mark.parametrize(
    ("before", "winners", "expected_rewards"),
    [
        ([40, 144, 45], [0], [1.0, -0.5, -0.5]),
        ([40, 145, 38], [0, 2], [0.5, -1.0, 0.5]),
        ([100, 150, 20], [2], [-0.5, -0.5, 1.0]),
    ],
)
def test_B13_a_total_of_151_ends_the_match_and_the_lowest_total_wins(
    before: list[int], winners: list[int], expected_rewards: list[float]
) -> None:
    """B13: 151 or more ends the match; lowest totals win (shared on a tie), hand winner or not."""
    env = stacked(B13_HANDS, scores=before, episode="match")
    play(env, "play 9S")
    info = env.infos["player_0"]
    assert info["scores"] == [before[0], before[1] + 7, before[2] + 2]
    assert (info["match_over"], info["match_winners"]) == (True, winners)
    assert rewards(env) == pytest.approx(expected_rewards)
    assert all_flags(env.terminations) == [True] * 3


def test_B13_below_the_target_the_match_goes_on_with_a_new_hand() -> None:
    """B13: 150 is not enough: no reward yet, no termination, the next hand is dealt."""
    env = stacked(B13_HANDS, scores=[40, 143, 45], episode="match")
    play(env, "play 9S")
    assert env.infos["player_0"]["last_hand"]["match_over"] is False
    assert rewards(env) == [0.0] * 3
    assert all_flags(env.terminations) == [False] * 3
    d = state(env)
    assert (d["scores"], d["hands_played"], d["hand_over"]) == ([40, 150, 47], 1, False)
    assert [len(h) for h in d["hands"]] == [5, 5, 5]


def test_B13_target_score_option() -> None:
    """B13 option target_score: a lower threshold ends the match sooner."""
    env = stacked(B13_HANDS, scores=[0, 44, 0], episode="match", target_score=50)
    play(env, "play 9S")
    assert env.infos["player_0"]["match_winners"] == [0]
    assert all_flags(env.terminations) == [True] * 3


def test_B13_totals_far_past_a_small_target_stay_inside_the_observation_space() -> None:
    """B13 with target_score=1: a total of 64 is 64 targets; the observation clips it to its bound."""
    env = stacked([["9S"], ["8S", "8H"]], episode="match", target_score=1)
    play(env, "play 9S")
    observation = env.observe("player_1")["observation"]
    assert env.observation_space("player_1")["observation"].contains(observation)
    assert env.unwrapped.layout.split(observation)["scores"].tolist() == [10.0, 0.0]


# ---------------------------------------------------------------- C1
@pytest.mark.parametrize("episode", ["hand", "match"])
def test_C1_max_turns_truncates_without_a_winner(episode: str) -> None:
    """C1: after max_turns actions the hand is truncated: no winner, no points, truncations set."""
    env = stacked([["9S", "KC"], ["7H", "JD"]], bank=["10S", "10H", "10D"], max_turns=3, episode=episode)
    play_all(env, ["draw", "pass", "draw"])
    d = state(env)
    assert (d["hand_over"], d["truncated"], d["winner"], d["scores"]) == (True, True, None, [0, 0])
    assert all_flags(env.truncations) == [True, True]
    assert all_flags(env.terminations) == [False, False]
    assert rewards(env) == [0.0, 0.0]
    assert (env.infos["player_0"]["truncated"], env.infos["player_0"]["winner"]) == (True, None)
    assert env.unwrapped.legal_actions() == []


def test_C1_endless_drawing_is_cut_at_max_turns() -> None:
    """C1: two players who only draw and pass (bank refilled, then skipped) stop at exactly max_turns."""
    env = stacked([["9S", "KC"], ["7H", "JD"]], bank=["10S", "10H"], max_turns=41)
    steps = 0
    while not env.truncations[env.agent_selection]:
        play(env, "draw" if "draw" in legal_strs(env) else "pass")
        steps += 1
        assert steps <= 41
    assert steps == 41
    assert state(env)["turn"] == 41


# ---------------------------------------------------------------- C2
def random_match(seed: int, **options: Any) -> list[dict[str, Any]]:
    """Every state of a match played with random legal actions (chooser seeded from `seed`)."""
    env = huit_v1.env(episode="match", **options)
    env.reset(seed=seed)
    chooser = np.random.default_rng(seed + 1000)
    states = [state(env)]
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(int(chooser.choice(env.unwrapped.legal_actions())))
        states.append(state(env))
    return states


def test_C2_same_seed_same_game() -> None:
    """C2: the same seed, options and actions give the same states, shuffled refills and deals included."""
    options = {"num_players": 3, "shuffle_on_refill": True, "max_turns": 400}
    first = random_match(7, **options)
    assert first[-1]["hands_played"] >= 2
    assert random_match(7, **options) == first
    assert random_match(8, **options)[0]["hands"] != first[0]["hands"]


# ---------------------------------------------------------------- action text
def test_action_text_round_trips_for_all_354_ids() -> None:
    """Action table: every id has a text that maps back to it; draw and pass are the last two ids."""
    assert R.NUM_ACTIONS == 354
    texts = [R.action_to_str(a) for a in range(R.NUM_ACTIONS)]
    assert [R.str_to_action(t) for t in texts] == list(range(R.NUM_ACTIONS))
    assert len(set(texts)) == R.NUM_ACTIONS
    assert texts[352:] == ["draw", "pass"]
    env = huit_v1.env()
    assert all(env.unwrapped.str_to_action(env.unwrapped.action_to_str(a)) == a for a in range(354))


def test_action_ids_follow_the_documented_layout() -> None:
    """huit_v1 doc: 32r + g for plain ranks (7 9 10 J Q K A), 224 + 4g + s for 8s."""
    assert R.str_to_action("play 7S") == 0
    assert R.str_to_action("play AC") == 32 * 6 + R.GROUPS.index((0b1000, C.CLUBS))
    assert R.str_to_action("play 8S declare S") == 224
    assert R.str_to_action("play 8H declare C") == 224 + 4 * R.GROUPS.index((0b0010, C.HEARTS)) + 3


def test_str_to_action_ignores_the_order_below_the_top() -> None:
    """Action text: only the last card (the top) is distinguished; the cards below may come in any order."""
    for action in range(R.DRAW):
        words = R.action_to_str(action).split()[1:]
        declare = words[-2:] if "declare" in words else []
        cards = words[: len(words) - len(declare)]
        below, top = cards[:-1], cards[-1]
        for order in itertools.permutations(below):
            assert R.str_to_action(" ".join(["play", *order, top, *declare])) == action
        for other in below:
            rest = [c for c in cards if c != other]
            assert R.str_to_action(" ".join(["play", *rest, other, *declare])) != action


def test_str_to_action_accepts_t_for_ten_and_any_case() -> None:
    """Card notation: T is read as 10; ranks, suits and verbs in any case."""
    assert R.str_to_action("PLAY ts th") == R.str_to_action("play 10S 10H")
    assert R.str_to_action("play 8d declare h") == R.str_to_action("play 8D declare H")
    assert R.str_to_action("Draw") == R.DRAW


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("jump", "unknown action"),
        ("draw 2", "takes no arguments"),
        ("play", "needs a card"),
        ("play declare S", "needs a card"),
        ("play 8S", "announce a suit"),
        ("play 9S declare H", "only 8s"),
        ("play 9S 9S", "twice"),
        ("play 8S declare X", "unknown suit"),
        ("play 9Z", "unknown suit"),
    ],
)
def test_str_to_action_explains_bad_text(text: str, message: str) -> None:
    """Action text: bad input raises a ValueError saying what is wrong."""
    with pytest.raises(ValueError, match=message):
        R.str_to_action(text)
