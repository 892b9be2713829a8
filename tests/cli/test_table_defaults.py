"""The commands' default opponents at every table size: `cardlab play` and `cardlab eval` (without
--agents) seat the shipped bot of the table's size and say so; `bot:GAME` works in every command. The
table bots are stand-ins (`tests.fakebots`)."""

from __future__ import annotations

import io
import json
import pathlib

import pytest

from cardlab.cli import main
from cardlab.cli.common import specs_text


def test_eval_without_agents_plays_the_table_s_bot_against_the_expert(
        table_bots: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "e.json"
    argv = ["eval", "--game", "huit", "--rule", "num_players=4", "--hands", "4", "--json", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("no --agents: bot:huit-4p (the shipped bot of a 4-player huit table) against "
                              "3 x expert\n")
    assert [a["agent"] for a in json.loads(out.read_text())["agents"]] == ["bot:huit-4p"] + ["expert"] * 3
    assert main(["eval", "--game", "huit", "--hands", "2"]) == 0  # no num_players: the smallest table's bot
    assert "no --agents: bot:huit-2p" in capsys.readouterr().out
    assert main(["eval", "--game", "huit", "--rule", "num_players=5", "--hands", "2"]) == 2
    err = capsys.readouterr().err
    assert "the shipped huit bots are for 2, 3 and 4 players" in err
    assert "give the agents, e.g. --agents bot:PATH expert" in err


def test_play_seats_the_table_s_bot_and_bot_game_works_everywhere(table_bots: pathlib.Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "huit", "--rule", "num_players=3"]) == 0
    assert "player_1 = bot:huit-3p, player_2 = bot:huit-3p" in capsys.readouterr().out
    assert main(["tournament", "--game", "huit", "--agents", "bot:huit", "random", "--hands", "2",
                 "--rule", "num_players=3"]) == 0
    assert "bot:huit-3p" in capsys.readouterr().out
    assert main(["compare", "--game", "switch", "bot:switch", "random", "--players", "5", "--max-hands", "10",
                 "--batch", "2"]) == 0
    assert "A = bot:switch-5p in one seat" in capsys.readouterr().out
    assert "bot:switch, bot:huit (the shipped bot of the table's size)" in specs_text()


@pytest.mark.parametrize(("argv", "error"), [
    (["play", "huit", "--rule", "num_players=7"],
     "rule option num_players=7 is out of range; accepted: 2 to 6"),
    (["eval", "--game", "huit", "--rule", "num_player=3", "--hands", "2"],
     "unknown rule option(s) num_player for huit; accepted: num_players, "),
    (["play", "switch", "--rule", "hand_size=0"], "rule option hand_size=0 is out of range"),
], ids=["play-range", "eval-typo", "play-hand-size"])
def test_a_bad_rule_option_is_advised_only_its_own_fix(argv: list[str], error: str,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Before, a bad rule option without agents ended "give the agents, e.g. --opponents expert"."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert error in err and "agents" not in err and "--opponents" not in err and len(err.splitlines()) == 1


def test_eval_says_how_it_filled_the_seats_when_the_agents_repeat(
        table_bots: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--agents bot:huit-4p expert`` at four seats seats the bot twice: eval says so, seat by seat."""
    argv = ["eval", "--game", "huit", "--rule", "num_players=4", "--hands", "4", "--agents", "bot:huit-4p",
            "expert"]
    assert main(argv) == 0
    assert ("2 agents for 4 seats, repeated in order: 0: bot:huit-4p, 1: expert, 2: bot:huit-4p, 3: expert "
            "(give 4 to choose every seat)") in capsys.readouterr().out
    assert main([*argv[:-2], "bot:huit-4p", "expert", "random", "greedy"]) == 0
    assert "repeated in order" not in capsys.readouterr().out


def test_bench_refuses_a_bot_of_another_table_naming_the_suite_of_its_own(
        table_bots: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench has no players option: a 4-player bot on the default (2-player) suite is told the suite."""
    assert main(["bench", "bot:huit-4p"]) == 2
    err = capsys.readouterr().err
    assert "bot:huit-4p plays huit at 4 players, suite huit-2p is huit at 2" in err
    assert "--suite huit-4p" in err and "players" not in err.split("so ")[-1]
