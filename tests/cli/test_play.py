"""Terminal play, driven through a StringIO stdin: moves by number or text, bad
input explained and asked again, opponents' moves shown, clean end of input."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from cardlab.envs import huit_v1, switch_v1
from cardlab.terminal import parse_move, play


def run(
    text: str, game: str = "huit", opponents: tuple[str, ...] = ("random",), **kwargs: Any
) -> tuple[int, str]:
    out = io.StringIO()
    code = play(game, list(opponents), input=io.StringIO(text), output=out, **kwargs)
    return code, out.getvalue()


def test_a_whole_hand_by_numbers() -> None:
    code, out = run("1\n" * 500, seed=3)
    assert code == 0
    assert "you are player_0; opponents: player_1 = random" in out
    assert "== your turn (player_0) ==" in out and "player_0 holds:" in out and "legal moves:" in out
    assert re.search(r"player_1 \(random\): (play|draw|pass)", out)
    assert re.search(r"-- hand 1 over: (you win|player_1 wins); points this hand \[\d+, \d+\]", out)
    assert "thanks for playing: 1 hand(s)" in out
    assert "hand 2 over" not in out


def test_several_hands_of_one_match() -> None:
    code, out = run("1\n" * 2000, game="switch", opponents=("greedy", "random"), seed=1, hands=2)
    assert code == 0 and "-- hand 2 over" in out and "thanks for playing: 2 hand(s)" in out
    assert "player_1 = greedy, player_2 = random" in out


def test_bad_input_is_explained_and_asked_again() -> None:
    code, out = run("\n0\n99\nfoo\nplay 7X\npass\ndraw\n", seed=3)
    assert code == 0
    assert "! type a move number (1 to" in out
    assert "! 0 is not a move number: choose 1 to" in out
    assert "! 99 is not a move number" in out
    assert "! cannot read that move: 'foo': unknown action 'foo'" in out
    assert "! cannot read that move: cannot read card '7X'" in out
    assert "! 'pass' is not legal now" in out  # B9: pass only after drawing
    assert "you: draw" in out  # the good line after the bad ones is played
    assert out.count("your move> ") >= 8


def test_text_moves_ignore_case() -> None:
    code, out = run("DRAW\nPaSs\n", seed=3)
    assert code == 0 and "you: draw" in out and "you: pass" in out


def test_end_of_input_quits_cleanly() -> None:
    code, out = run("", seed=0)
    assert code == 0 and out.rstrip().endswith("end of input: leaving the game.")


def test_opponents_fill_a_bigger_table_and_seat_choice() -> None:
    _code, out = run("", seed=0, rule_options={"num_players": 3}, seat=2)
    assert "you are player_2; opponents: player_0 = random, player_1 = random" in out
    with pytest.raises(ValueError, match="seat 3 is not at a 3-player table"):
        run("", rule_options={"num_players": 3}, seat=3)
    with pytest.raises(ValueError, match=r"3 opponents given .* for 2 seats \(num_players=3, one of them"):
        run("", opponents=("random",) * 3, rule_options={"num_players": 3})
    with pytest.raises(ValueError, match=r"6 opponents given .* 2 to 6 players, you included: give 1 to 5"):
        run("", opponents=("random",) * 6)
    with pytest.raises(ValueError, match="hands must be a whole number >= 1"):
        run("", hands=0)


def first_seed_showing(fragments: list[str], game: str, opponents: tuple[str, ...], seeds: int = 30) -> str:
    """The output of the first seeded hand (always playing the first legal move) showing all `fragments`."""
    for seed in range(seeds):
        _code, out = run("1\n" * 2000, game=game, opponents=opponents, seed=seed)
        if all(fragment in out for fragment in fragments):
            return out
    raise AssertionError(f"no seed below {seeds} shows {fragments}")


def test_you_are_told_when_a_queen_skips_you_or_an_ace_makes_you_draw() -> None:
    out = first_seed_showing(["a Queen skipped you (B8)", "the Ace made you draw 2 cards (B7)"], "huit",
                             ("expert",))
    # Each note follows the move that caused it, and the cards drawn are named.
    assert re.search(r"player_1 \(expert\): play (Q[SHDC] ?)+\n  -> a Queen skipped you \(B8\)", out)
    assert re.search(r"you: draw\n  -> the Ace made you draw 2 cards \(B7\)\n  you drew \S+ \S+\n", out)


def test_switch_notes_an_8_that_skips_and_a_run_that_makes_you_draw() -> None:
    out = first_seed_showing(["an 8 skipped", "the run of 2s and Jokers made you draw"], "switch",
                             ("greedy", "greedy"))
    assert re.search(r"play 8[SHDC]\n  -> an 8 skipped (you|player_\d) \(A7\)", out)
    assert re.search(r"you: draw\n  -> the run of 2s and Jokers made you draw \d+ cards \(A6\)", out)


def test_parse_move() -> None:
    env = huit_v1.raw_env(num_players=2)
    legal = [env.str_to_action(text) for text in ("play 9S 9H", "play 8C declare D", "draw")]
    assert parse_move(" 2 \n", legal, env.game) == legal[1]
    assert parse_move("PLAY 9s 9H", legal, env.game) == legal[0]
    assert parse_move("play 8c declare d", legal, env.game) == legal[1]
    assert parse_move("play 9H 9S", legal, env.game) == legal[0]  # the one legal order of these cards
    with pytest.raises(ValueError, match="'play 7S' is not legal now: choose one of the moves listed"):
        parse_move("play 7S", legal, env.game)
    with pytest.raises(ValueError, match="4 is not a move number: choose 1 to 3"):
        parse_move("4", legal, env.game)
    with pytest.raises(ValueError, match="8s announce a suit"):
        parse_move("play 8C", legal, env.game)
    for typed, words in (("2", "2 is not a move number: choose 1 (the only legal move)"),
                         ("", "type a move number (1 (the only legal move))")):
        with pytest.raises(ValueError, match=re.escape(words)):  # a single legal move: not "choose 1 to 1"
            parse_move(typed, legal[2:], env.game)
    switch = switch_v1.raw_env()
    with pytest.raises(ValueError, match="exactly one card per turn"):
        parse_move("play 9S 9H", [65], switch.game)


def test_a_group_in_any_order_and_the_game_s_own_ranks() -> None:
    game = huit_v1.raw_env(num_players=2).game
    orders = [game.str_to_action(text) for text in ("play AC AH AS", "play AC AS AH")]
    legal = [game.str_to_action("play AC AS"), *orders, game.str_to_action("draw")]
    assert parse_move("play AS AC", legal, game) == legal[0]  # the top card's suit first: the one legal order
    with pytest.raises(ValueError, match=r"the first card must match the top card .* as 'play AH AC AS' or "
                                         r"'play AS AC AH'"):
        parse_move("play AS AH AC", legal, game)  # two legal orders of these cards, the typed one is not
    with pytest.raises(ValueError, match=r"unknown rank 'Z', expected one of 7 8 9 10 J Q K A \(or T"):
        parse_move("play ZZ", legal, game)
