"""The web app at every table size: each table's shipped bot is offered (in `table_bots`, the page's default
opponent), seated by name or as bot:GAME, and a bot of another size is refused saying why. The table bots
are stand-ins (`tests.fakebots`: huit 3p and 4p, switch 5p, beside the real huit-2p and switch-4p)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cardlab.serve.app import named_bots
from tests.fakebots import fake_bot

from .helpers import client


@pytest.fixture
def api(table_bots: pathlib.Path) -> TestClient:
    return client()


def new_game(api: TestClient, game: str, players: int, opponents: list[str]) -> Any:
    body = {"game": game, "num_players": players, "seat": 0, "opponents": opponents, "seed": 3}
    return api.post("/api/games", json=body)


def test_options_name_the_bot_of_each_table_size(api: TestClient) -> None:
    options = api.get("/api/options").json()
    assert options["table_bots"] == {"switch": {"4": "bot:switch-4p", "5": "bot:switch-5p"},
                                     "huit": {"2": "bot:huit-2p", "3": "bot:huit-3p", "4": "bot:huit-4p"}}
    offered = {a["name"]: a["num_players"] for a in options["agents"] if a["name"].startswith("bot:")}
    for tables in options["table_bots"].values():
        assert all(offered[bot] == int(n) for n, bot in tables.items())


@pytest.mark.parametrize(("players", "bot"), [(2, "bot:huit-2p"), (3, "bot:huit-3p"), (4, "bot:huit-4p")])
def test_each_table_seats_its_bot_by_name_or_as_bot_game(api: TestClient, players: int, bot: str) -> None:
    for opponents in ([bot] * (players - 1), ["bot:huit"] * (players - 1)):
        response = new_game(api, "huit", players, opponents)
        assert response.status_code == 200, response.text
        view = response.json()["frames"][-1]
        assert [p["label"] for p in view["players"][1:]] == [bot] * (players - 1)  # the bot that plays
        advice = api.get(f"/api/games/{response.json()['id']}/advice", params={"advisor": "bot:huit"})
        assert advice.status_code == 200 and advice.json()["moves"], advice.text  # seat 0 plays first


def test_a_bot_of_another_size_or_a_table_without_one_is_refused(api: TestClient) -> None:
    response = new_game(api, "huit", 3, ["bot:huit-4p", "bot:huit-3p"])
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "bot:huit-4p does not fit this table (huit with 3 players" in detail
    assert "it plays 4-player huit tables" in detail and "bot:huit-3p" in detail.split("use ")[1]
    five = new_game(api, "huit", 5, ["bot:huit"] * 4)
    assert five.status_code == 400
    assert "the shipped huit bots are for 2, 3 and 4 players" in five.json()["detail"]
    assert new_game(api, "switch", 5, ["bot:switch"] * 4).status_code == 200


def test_a_command_line_bot_may_not_take_a_table_alias(tmp_path: pathlib.Path) -> None:
    mine = fake_bot(tmp_path, "huit", "huit", 2)
    with pytest.raises(ValueError, match="bot:huit names the shipped bot of a table's size: rename the file"):
        named_bots([mine])
