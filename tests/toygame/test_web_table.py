"""A third game at the web table: the toy game of `tests/toygame`, registered in one line, is set up,
played to the end of hands, replayed and advised through the HTTP API, with nothing of it in `serve/`.

Why: the web app may know a game only through its `GameSpec` (rule options, heuristics, `view` and
`status`). If `serve/` still named Switch or Huit, or read one of their fields, this game would fail.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cardlab.envs import make_game, register
from cardlab.envs.game_spec import Game, unregister
from cardlab.serve.table import Hand, first_deal
from cardlab.serve.view import seat_view
from tests.serve.helpers import assert_no_hidden_card, client, table_of
from tests.toygame.spec import SPEC

SERVE = pathlib.Path(__file__).resolve().parents[2] / "serve"
TOY = {"game": "toy", "num_players": 3, "seat": 1, "opponents": ["first_play", "random"], "seed": 4}


@pytest.fixture
def api() -> Iterator[TestClient]:
    register(SPEC)  # the one registration line, before the app lists its games and agents
    yield client()
    unregister(SPEC.id)


def play_out(api: TestClient, key: str, frames: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The person plays the first legal move until the hand is over; (last view, the person's moves)."""
    table = table_of(api, key)
    moves = 0
    view = frames[-1]
    while view["legal"]:
        for frame in frames:
            assert_no_hidden_card(frame, table)
        move = {"move": view["legal"][0]["text"], "turn": view["turn"]}
        response = api.post(f"/api/games/{key}/move", json=move)
        assert response.status_code == 200, response.text
        frames = response.json()["frames"]
        view = frames[-1]
        moves += 1
        assert moves < 200, "the hand does not end"
    return view, moves


def test_the_toy_game_is_offered_with_its_rules_and_heuristic(api: TestClient) -> None:
    data = api.get("/api/options").json()
    toy = next(g for g in data["games"] if g["id"] == "toy")
    assert toy["title"] == "Toy shedding"
    assert [r["name"] for r in toy["rules"]] == ["num_players", "target_score", "max_turns"]
    heuristic = {"name": "first_play", "game": "toy", "num_players": None, "rules": None,
                 "about": "the first_play heuristic"}
    assert heuristic in data["agents"]


def test_a_toy_hand_is_played_replayed_and_advised_over_http(api: TestClient) -> None:
    response = api.post("/api/games", json=TOY)
    assert response.status_code == 200, response.text
    key, frames = response.json()["id"], response.json()["frames"]
    view = frames[-1]
    assert view["game"] == "toy" and view["seat"] == 1 and len(view["hand"]) == 3
    assert view["pile"]["name"] == "stock" and view["played"]["name"] == "table"
    # the game's own fields and status lines, as its spec gives them
    state = table_of(api, key).hand.env.game_state
    assert SPEC.view is not None and view["current_suit"] == SPEC.view(state, 1)["current_suit"]
    assert view["status"] == [list(line) for line in SPEC.status(state).items()]
    assert [m["text"] for m in view["legal"]][-1] == "draw"
    advice = api.get(f"/api/games/{key}/advice", params={"advisor": "first_play"}).json()
    assert advice["moves"] == [{"action": view["legal"][0]["id"], "text": view["legal"][0]["text"],
                                "probability": 1.0}]
    uniform = api.get(f"/api/games/{key}/advice", params={"advisor": "random", "top": 10}).json()["moves"]
    assert {m["text"] for m in uniform} == {m["text"] for m in view["legal"]}
    assert api.get(f"/api/games/{key}/position").json()["observation_version"] == SPEC.observation_version

    last, moves = play_out(api, key, frames)
    assert moves > 0 and last["hand_over"] and last["result"] is not None and last["hands_finished"] == 1
    result = last["result"]
    assert result["truncated"] or result["hand_points"][result["winner"]] == 0

    replay = api.get(f"/api/games/{key}/hands/1/replay")
    assert replay.status_code == 200
    assert 'filename="toy-hand1-replay.json"' in replay.headers["content-disposition"]
    data = replay.json()
    assert data["game"] == "toy" and data["players"] == ["first_play", "you", "random"]
    loaded = api.post("/api/replays", json=data).json()
    assert loaded["game"] == "toy" and loaded["steps"] == len(data["moves"]) > 0
    end = api.get(f"/api/replays/{loaded['id']}/{loaded['steps']}").json()
    assert end["result"] == result and end["next_move"] is None
    mine = next(i for i, m in enumerate(data["moves"]) if m["seat"] == 1)
    frame = api.get(f"/api/replays/{loaded['id']}/{mine}", params={"advisor": "first_play"}).json()
    assert frame["next_move"] == data["moves"][mine] and len(frame["advice"]) == 1


def test_match_play_of_the_toy_game_runs_to_its_target(api: TestClient) -> None:
    response = api.post("/api/games", json={**TOY, "mode": "match", "rules": {"target_score": 3}})
    key, frames = response.json()["id"], response.json()["frames"]
    for hands in range(1, 40):
        view, _ = play_out(api, key, frames)
        if not view["can_deal"]:
            break
        frames = api.post(f"/api/games/{key}/next").json()["frames"]
        assert frames[-1]["hand_number"] == hands + 1
    assert view["result"]["match_over"] and max(view["result"]["scores"]) >= 3


def test_a_game_without_view_fields_gets_the_common_ones_and_clashes_are_refused() -> None:
    game = make_game(SPEC)
    state = Hand(game, first_deal(game, 1)).env.game_state
    plain = seat_view(Game(dataclasses.replace(SPEC, view=None), game.rules), state, 0)
    assert "current_suit" not in plain and plain["status"] and plain["current_player"] == state.current
    assert SPEC.view is not None
    assert seat_view(game, state, 0) == {**plain, "current_suit": SPEC.view(state, 0)["current_suit"]}
    clashing = dataclasses.replace(SPEC, view=lambda state, seat: {"hand": ["10S"]})
    with pytest.raises(ValueError, match="its view fields hand are the web app's own names"):
        seat_view(Game(clashing, game.rules), state, 0)


def test_serve_names_no_game() -> None:
    """The web app's code and page know games only through the registry: no game id, title or field."""
    words = ("huit", "switch", "toy", "current_suit", "pending_draw", "ace_penalty", "announced", "bank")
    for path in sorted(SERVE.rglob("*")):
        if path.suffix in (".py", ".js", ".html", ".css"):
            text = path.read_text(encoding="utf-8").lower()
            named = [w for w in words if w in text]
            assert not named, f"{path.relative_to(SERVE.parent)} names {named}"
