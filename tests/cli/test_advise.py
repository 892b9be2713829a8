"""`cardlab advise`: a saved state (or a position saved by the web app) in, the advisor's likeliest
moves out, with probabilities; the heuristics' choices on positions whose answer the rules dictate."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest

from cardlab.agents.base import advise, make_agent
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
    ('{"game": "huit", "rules": {"num_players": 2}, "format": "cardlab-position", "seat": 0, '
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
