"""`cardlab advise`: a saved state (or a position saved by the web app) in, the advisor's likeliest
moves out, with probabilities; the heuristics' choices on positions whose answer the rules dictate."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import advise
from cardlab.cli import main
from cardlab.envs import env_class, make_game


def saved(tmp_path: pathlib.Path, game: str, deal: dict[str, Any], moves: tuple[str, ...] = (),
          **rules: Any) -> pathlib.Path:
    """A state_dict file after a stacked deal and some moves."""
    env = env_class(game)(**rules)
    env.reset(seed=0, options={"deal": deal})
    for move in moves:
        env.step(env.str_to_action(move))
    path = tmp_path / f"{game}.json"
    path.write_text(json.dumps(env.state_dict()))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["advise", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_huit_heuristics_on_an_empty_table(tmp_path: pathlib.Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # B4: an empty table takes one card (or several 8s). Greedy lays its highest card, 9S or 9H (9 points),
    # and leaves on top the suit it keeps most of: after 9S it still holds KS, after 9H no heart.
    deal = {"hands": [["9S", "9H", "KS", "8D"], ["7C", "7D", "10C", "JC"]], "bank": ["AC", "QD"], "dealer": 1}
    path = saved(tmp_path, "huit", deal, num_players=2)
    out = run(capsys, "huit", "--state", str(path), "--agent", "greedy")
    assert out == ["Huit américain, 2 players: player_0 to move; advisor greedy",
                   "  1. play 9S                      1.000"]
    uniform = run(capsys, "huit", "--state", str(path), "--agent", "random", "--top", "10")
    # legal: each single card but the 8, 8D with each suit, draw = 3 + 4 + 1 moves, each 1/8
    assert len(uniform) == 9 and all(line.endswith("0.125") for line in uniform[1:])


def test_switch_heuristics_answer_a_draw_run(tmp_path: pathlib.Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # A4 + A6: a 2 as starter makes the first player add to the run or draw 2; greedy and expert
    # both answer with the 2 and keep the Joker.
    hands = [["2H", "JOKER", "5C", "9D"], ["7C", "8C", "9C", "10C"], ["KH", "QH", "3S", "4S"],
             ["6D", "7D", "8D", "9S"]]
    path = saved(tmp_path, "switch", {"hands": hands, "starter": "2S", "stock": ["AS", "AH"], "dealer": 3},
                 hand_size=4)
    for advisor in ("greedy", "expert"):
        out = run(capsys, "switch", "--state", str(path), "--agent", advisor)
        assert out[0] == f"Switch, 4 players: player_0 to move; advisor {advisor}"
        assert out[1].split() == ["1.", "play", "2H", "1.000"] and len(out) == 2


def test_a_bot_lists_its_top_moves(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = env_class("huit")(num_players=2)
    env.reset(seed=4)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(env.state_dict()))
    out = run(capsys, "huit", "--state", str(path), "--agent", "bot:huit-2p")
    probs = [float(line.split()[-1]) for line in out[1:]]
    assert len(out) == 1 + min(3, len(env.legal_actions())) and probs == sorted(probs, reverse=True)
    bot = make_agent("bot:huit-2p", env.game)
    obs = env.observe(env.agent_selection)
    full = bot.action_probabilities(obs)
    assert np.isclose(full.sum(), 1) and set(np.flatnonzero(full)) <= set(env.legal_actions())
    assert advise(bot, obs, 1)[0].action == bot.act(obs)  # the likeliest move is the one the bot plays


@pytest.mark.parametrize(("content", "argv", "message"), [
    ("{", ["huit"], "is not valid JSON"),
    ("[1, 2]", ["huit"], "expected a JSON object"),
    ('{"game": "switch"}', ["huit"], "this file is for the game 'switch', not 'huit'"),
    ('{"game": "huit"}', ["huit"], "has no 'rules' object"),
    ('{"game": "huit", "rules": {"num_players": 2}}', ["huit"], "saved state is missing"),
    ('{"game": "huit", "format": "cardlab-view"}', ["huit"], "a view holds no observation"),
    ('{"game": "huit", "rules": {"num_players": 2}, "format": "cardlab-position", "version": 1, "seat": 0, '
     '"observation_version": 1, "observation": [0.5], "legal": []}', ["huit"],
     "'observation' must be a list of"),
])
def test_bad_files(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], content: str, argv: list[str],
                   message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    assert main(["advise", *argv, "--state", str(path), "--agent", "expert"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("cardlab advise: error:") and message in err


def test_finished_hand_and_wrong_bot(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = env_class("huit")(num_players=2)
    env.reset(seed=1)
    while not env.game_state.hand_over:
        env.step(env.legal_actions()[0])
    path = tmp_path / "done.json"
    path.write_text(json.dumps(env.state_dict()))
    assert main(["advise", "huit", "--state", str(path), "--agent", "expert"]) == 2
    assert "the saved hand is over" in capsys.readouterr().err
    path = saved(tmp_path, "huit", {"hands": [["9S"], ["7C"], ["8C"]], "bank": []}, num_players=3)
    assert main(["advise", "huit", "--state", str(path), "--agent", "bot:huit-2p"]) == 2
    assert "it was trained for 2 players, the game has 3" in capsys.readouterr().err
    assert main(["advise", "huit", "--state", str(tmp_path / "none.json"), "--agent", "expert"]) == 2
    assert "none.json: no such file or directory; check the path" in capsys.readouterr().err


def test_advise_refuses_bad_top() -> None:
    game = make_game("huit", num_players=2)
    env = env_class("huit")(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="top must be at least 1"):
        advise(make_agent("expert", game), env.observe(env.agent_selection), 0)


def a_position(game_id: str, seed: int, **rules: Any) -> tuple[dict[str, Any], Any]:
    """A position as the web app saves it (`serve.view.position`) on the mover's turn, and its env."""
    from cardlab.serve.view import position, seat_view

    env = env_class(game_id)(**rules)
    env.reset(seed=seed)
    env.step(env.legal_actions()[0])
    seat = env.game_state.current
    view = seat_view(env.game, env.game_state, seat)
    return json.loads(json.dumps(position(env.game, view, env.observe(env.agent_selection)))), env


def advise_error(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], game: str, data: Any,
                 agent: str) -> str:
    path = tmp_path / "position.json"
    path.write_text(json.dumps(data))
    assert main(["advise", game, "--state", str(path), "--agent", agent]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and captured.out == ""
    return lines[0]


@pytest.mark.parametrize("agent", ["expert", "greedy", "bot:huit-2p"])
def test_a_position_of_huge_numbers_is_refused_naming_the_field(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], agent: str) -> None:
    """Before: OverflowError with a traceback (expert, greedy), a header line and no moves (the bot)."""
    data, _ = a_position("huit", 3, num_players=2)
    data["observation"] = [1e300] * len(data["observation"])
    err = advise_error(tmp_path, capsys, "huit", data, agent)
    assert "the position's observation[0] (field 'hand') is 1e+300: that field holds values from 0 to 1" \
        in err


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_a_legal_list_naming_a_card_not_in_the_hand_is_refused(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], game: str) -> None:
    """Before: the move was advised at 1.000; the legal moves must be those of the observation."""
    data, env = a_position(game, 5, num_players=3)
    legal = set(env.legal_actions())
    foreign = next(a for a in range(env.NUM_ACTIONS)
                   if a not in legal and env.action_to_str(a).startswith("play "))
    data["legal"] = [{"text": env.action_to_str(foreign)}]
    err = advise_error(tmp_path, capsys, game, data, "expert")
    assert f"the position's legal moves disagree with its observation: {env.action_to_str(foreign)} is not " \
           "legal there" in err
    data["legal"] = data["legal"][:0] + [{"text": env.action_to_str(a)} for a in sorted(legal)[1:]]
    if data["legal"]:
        assert "is legal there but not listed" in advise_error(tmp_path, capsys, game, data, "expert")


def test_an_edited_observation_that_fits_no_state_is_refused(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, env = a_position("huit", 7, num_players=2)
    hand = env.game.layout.slices["hand"]
    held = [i for i in range(hand.start, hand.stop) if data["observation"][i] > 0]
    data["observation"][held[0]] = 0.5  # half a card
    assert "fits no state of these rules" in advise_error(tmp_path, capsys, "huit", data, "expert")


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_a_position_as_saved_is_advised(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                        game: str) -> None:
    for seed in range(6):
        data, env = a_position(game, seed, num_players=2 + seed % 3)
        path = tmp_path / "position.json"
        path.write_text(json.dumps(data))
        out = run(capsys, game, "--state", str(path), "--agent", "expert", "--top", "50")
        advised = {line.split(None, 1)[1].rsplit(None, 1)[0].strip() for line in out[1:]}
        assert advised <= {env.action_to_str(a) for a in env.legal_actions()} and advised


@pytest.mark.parametrize(("game", "edit", "message"), [
    ("huit", lambda d: d.update(hand=d["hand"][:-1]), r"the position's field hand is \[.*\], but its "
     r"observation shows \[.*\]: a position's view fields must be the ones its observation shows \(was it "
     r"edited\?\); save the position again from the web app"),
    ("switch", lambda d: d.update(hand_sizes=[n + 1 for n in d["hand_sizes"]]), "field hand_sizes is"),
    ("huit", lambda d: d.update(current_player=1 - d["seat"]), "field current_player is"),
    ("huit", lambda d: d.update(top="JOKER"), "field top is 'JOKER', but its observation shows"),
    ("switch", lambda d: d.update(scores=[40] * len(d["scores"])), "field scores is"),
    ("huit", lambda d: d["played"]["cards"].append("AS"), "field played is"),
    ("huit", lambda d: d.pop("hand_sizes"), "the position has no field hand_sizes: a position holds the "
                                            "seat's view"),
    ("huit", lambda d: d.update(dealer=9), "the position's field dealer is 9; accepted: a seat 0..1"),
    ("huit", lambda d: d.update(turn=-1), "the position's field turn is -1; accepted: a whole number from 0"),
    ("switch", lambda d: d.update(hands_played=1.5), "hands_played is 1.5; accepted: a whole number"),
    ("huit", lambda d: d.update(version=2), "the position's format version is 2; this cardlab reads version"),
])
def test_a_position_whose_view_fields_disagree_with_its_observation_is_refused(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], game: str, edit: Any, message: str
) -> None:
    """A position's view fields say what the seat sees; advise reads the observation. Before, a view field
    edited away from the observation (another hand, another seat to move, another total) was dropped
    without a word and the advice was the observation's."""
    data, _ = a_position(game, 4, num_players=2)
    assert data["seat"] == data["current_player"]
    edit(data)
    assert re.search(message, advise_error(tmp_path, capsys, game, data, "expert"))


def test_a_position_s_fields_the_observation_does_not_hold_are_read_as_saved(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The order of the played pile below its top card, the turn, the dealer and the hands played are not in
    the observation: any in range is accepted (the advice cannot depend on them), as are the web table's own
    fields; so is a position of a match's later hand, whose totals the observation holds."""
    from cardlab.serve.view import position, seat_view

    env = env_class("huit")(num_players=2)
    env.reset(seed=11)
    while len(env.game_state.state_dict()["table"]) < 4:
        env.step(next(a for a in env.legal_actions() if env.action_to_str(a).startswith("play")))
    seat = env.game_state.current
    view = seat_view(env.game, env.game_state, seat)
    data = json.loads(json.dumps(position(env.game, view, env.observe(env.agent_selection))))
    data["played"]["cards"][:-1] = data["played"]["cards"][-2::-1]
    data.update(turn=data["turn"] + 5, dealer=1 - data["dealer"], hands_played=3, players=[], log=["a move"])
    path = tmp_path / "position.json"
    path.write_text(json.dumps(data))
    assert run(capsys, "huit", "--state", str(path), "--agent", "expert")[0].startswith("Huit américain")
    for game in ("huit", "switch"):
        env = env_class(game)(num_players=3)
        env.reset(seed=3)
        state = env.state_dict() | {"hands_played": 4, "scores": [12, 30, 7]}
        env.reset(options={"state": state})
        seat = env.game_state.current
        view = seat_view(env.game, env.game_state, seat)
        path.write_text(json.dumps(position(env.game, view, env.observe(env.agent_selection))))
        assert len(run(capsys, game, "--state", str(path), "--agent", "expert")) == 2


READING = "search:belief=learned:worlds=16:ms=0:expert"
"""a search whose worlds the hand reader deals from the hand's record (`sees`: the record)"""


def test_a_search_that_reads_the_hand_is_shown_a_saved_states_record(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: refused ("none was shown"). A saved state holds the hand's record; the advice is the move the
    same search plays there in a game, shown that record by the play loop."""
    from cardlab.agents.base import show_table

    env = env_class("huit")(num_players=4)
    env.reset(seed=11)
    for _ in range(9):
        env.step(env.legal_actions()[-1])
    path = tmp_path / "state.json"
    path.write_text(json.dumps(env.state_dict()))
    out = run(capsys, "huit", "--state", str(path), "--agent", READING, "--top", "1")
    player = make_agent(READING, env.game, seed=0)
    show_table(player, env, env.agent_selection)
    played = env.action_to_str(player.act(env.observe(env.agent_selection)))
    assert out[1].split(None, 1)[1].rsplit(None, 1)[0].strip() == played


def test_a_position_is_refused_to_a_search_that_must_read_its_record(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A web app position holds no hand record, so a search that reads one cannot be advised from it."""
    data, _ = a_position("huit", 2, num_players=4)
    err = advise_error(tmp_path, capsys, "huit", data, READING)
    assert f"--agent {READING} must be shown the hand's record, which a web app position does not hold; " \
           "accepted: a saved state" in err
