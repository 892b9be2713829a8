"""bot:GAME, the shipped bot of the table's size: resolved at every table that has one, refused (naming the
sizes that do) at the others, and taken by everything that seats agents. The table bots are stand-ins
(`tests.fakebots`: untrained networks for huit 3p and 4p and switch 5p beside the real bots)."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from cardlab.agents.agent_spec import bot_source, is_shipped_name, make_agent, resolve_spec, spec_names
from cardlab.agents.bot import BotAgent
from cardlab.agents.bot_catalogue import bot_tables, default_bot, fitting_bot, table_aliases
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game
from cardlab.evaluation.compare import Contest
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.tournament import tournament
from cardlab.training.harness.config import OpponentConfig, load_config, validate_config

ROOT = pathlib.Path(__file__).resolve().parents[2]


def table(game_id: str, players: int) -> Game:
    return make_game(game_id, {"num_players": players})


@pytest.mark.parametrize(("game_id", "players", "bot"), [
    ("huit", 2, "bot:huit-2p"),  # the plain name before bot:huit-2p-match and -selfplay
    ("huit", 3, "bot:huit-3p"), ("huit", 4, "bot:huit-4p"), ("switch", 4, "bot:switch-4p"),
    ("switch", 5, "bot:switch-5p")])
def test_the_alias_is_the_bot_of_the_table_s_size(table_bots: pathlib.Path, game_id: str, players: int,
                                                  bot: str) -> None:
    game = table(game_id, players)
    assert fitting_bot(game) == resolve_spec(f" bot:{game_id} ", game) == bot
    agent = make_agent(f"bot:{game_id}", game, seed=0)
    assert isinstance(agent, BotAgent) and agent.game.num_players == players
    assert bot_source(f"bot:{game_id}", game) == table_bots / f"{bot[4:]}.json"
    assert f"bot:{game_id}" in spec_names(game) and bot in spec_names(game)


def test_a_table_without_a_bot_is_refused_naming_the_sizes_that_have_one(table_bots: pathlib.Path) -> None:
    assert list(bot_tables("huit")) == [2, 3, 4] and table_aliases() == ["bot:switch", "bot:huit"]
    five = table("huit", 5)
    sizes = r"no shipped bot fits a 5-player huit table: the shipped huit bots are for 2, 3 and 4 players"
    with pytest.raises(ValueError, match=sizes):
        make_agent("bot:huit", five)
    assert "bot:huit" not in spec_names(five) and not any(s.startswith("bot:huit-") for s in spec_names(five))
    with pytest.raises(ValueError, match="this table plays huit: use bot:huit"):
        make_agent("bot:switch", five)
    with pytest.raises(ValueError, match="give the table"):
        bot_source("bot:huit")
    with pytest.raises(ValueError, match=r"there is no 9-player huit bot \(the huit bots are for 2, 3 and 4"):
        make_agent("bot:huit-9p", five)
    with pytest.raises(ValueError, match=r"did you mean bot:huit\?"):
        make_agent("bot:hiut", five)
    assert is_shipped_name("bot:huit") and is_shipped_name("bot:huit-4p") and not is_shipped_name("bot:x/y")


def test_the_default_bot_is_the_table_s_or_the_smallest_table_s(table_bots: pathlib.Path) -> None:
    assert default_bot("huit", {}) == ("bot:huit-2p", 2)
    assert default_bot("huit", {"num_players": 4}) == ("bot:huit-4p", 4)
    assert default_bot("switch", {"num_players": 5, "hand_size": 7}) == ("bot:switch-5p", 5)
    with pytest.raises(ValueError, match="for 2, 3 and 4 players"):
        default_bot("huit", {"num_players": 6})


def test_a_folder_without_bots_says_so(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakebots import shipped_folder

    shipped_folder(tmp_path, monkeypatch, tables=[("huit", 3)], real=False)
    assert table_aliases() == ["bot:huit"]
    with pytest.raises(ValueError, match="no switch bot is shipped"):
        default_bot("switch", {})


def test_evaluations_name_the_bot_that_played(table_bots: pathlib.Path) -> None:
    result = evaluate(EvalRequest("huit", ["bot:huit", "expert"], hands=3, seed=0, rules={"num_players": 3}))
    assert result.slots == ["bot:huit-3p", "expert", "bot:huit-3p"]
    contest = Contest.seat("huit", "bot:huit", "random", players=4)
    assert contest.slots == ["bot:huit-4p", "random", "random", "random"]
    ranked = tournament(EvalRequest("huit", ["bot:huit", "random"], hands=2, rules={"num_players": 3}))
    assert ranked.specs == ["bot:huit-3p", "random"]
    with pytest.raises(ValueError, match=r"repeated: \['bot:huit-3p'\] \(bot:huit is bot:huit-3p at this"):
        tournament(EvalRequest("huit", ["bot:huit", "bot:huit-3p"], hands=2, rules={"num_players": 3}))


def test_configs_take_the_alias_at_a_table_with_a_bot(table_bots: pathlib.Path) -> None:
    cfg = load_config(ROOT / "configs" / "tables" / "huit_4p.yaml")
    aliased = dataclasses.replace(cfg, opponents=[OpponentConfig("bot:huit", 1.0)],
                                  eval=dataclasses.replace(cfg.eval, opponents=["bot:huit", "expert"]))
    assert validate_config(aliased) == aliased
    with pytest.raises(ValueError, match=r"opponents\[0\]\.spec: no shipped bot fits a 5-player huit table"):
        validate_config(dataclasses.replace(aliased, num_players=5))
