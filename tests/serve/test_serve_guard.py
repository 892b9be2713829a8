"""The web app against other sites, concurrent moves, what a table keeps, its defaults."""

from __future__ import annotations

import json
import pathlib
import shutil
import threading
import time
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from cardlab.agents.bot_catalogue import SHIPPED_BOTS
from cardlab.envs import env_class
from cardlab.envs.game_spec import make_game
from cardlab.serve.app import Settings, create_app, named_bots
from cardlab.serve.guard import allowed_hosts, public_host_warning, without_paths
from cardlab.serve.view import seat_view

from .helpers import client, table_of

HUIT = {"game": "huit", "num_players": 2, "seat": 0, "opponents": ["greedy"], "seed": 11}


def refused(response: Any, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert words in response.json()["detail"], response.json()


def play_to_end(api: TestClient, key: str, view: dict[str, Any]) -> None:
    """The person plays their first legal move until the hand is over."""
    while view["legal"]:
        move = {"move": view["legal"][0]["text"], "turn": view["turn"]}
        view = api.post(f"/api/games/{key}/move", json=move).json()["frames"][-1]


# ---------------------------------------------------------------- 6: other sites
def test_a_text_plain_post_stores_no_replay() -> None:
    api = client()
    response = api.post("/api/replays", content=b'{"format": "cardlab-replay"}',
                        headers={"content-type": "text/plain"})
    refused(response, 415, "application/json")
    refused(api.post("/api/games", content=b"{}", headers={"content-type": "text/plain"}), 415, "JSON")
    assert api.app.state.store.items == {} and api.app.state.replays.items == {}  # type: ignore[attr-defined]


def test_host_and_origin_of_another_site_are_refused() -> None:
    api = client()
    refused(api.get("/api/options", headers={"host": "rebound.example:8000"}), 421, "127.0.0.1")
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
        assert api.get("/api/options", headers={"host": host}).status_code == 200, host
    evil = {"origin": "http://evil.example", "host": "127.0.0.1:8000"}
    refused(api.post("/api/games", json=HUIT, headers=evil), 403, "another site")
    assert api.app.state.store.items == {}  # type: ignore[attr-defined]
    same = {"origin": "http://127.0.0.1:8000", "host": "127.0.0.1:8000"}
    assert api.post("/api/games", json=HUIT, headers=same).status_code == 200


def test_host_and_origin_are_compared_exactly() -> None:
    api = client()
    for host in ("evil.example@127.0.0.1:8000", "127.0.0.1:8000/x", "127.0.0.1:80:80", "127.0.0.1 x", ""):
        refused(api.get("/api/options", headers={"host": host}), 421, "127.0.0.1")
    ours = {"host": "127.0.0.1:8000"}
    for origin in ("https://127.0.0.1:8000", "http://127.0.0.1:8001", "http://127.0.0.1", "null",
                   "http://evil.example@127.0.0.1:8000"):
        refused(api.post("/api/games", json=HUIT, headers={**ours, "origin": origin}), 403, "another site")
    assert api.app.state.store.items == {}  # type: ignore[attr-defined]
    same = {**ours, "origin": "http://127.0.0.1:8000"}
    assert api.post("/api/games", json=HUIT, headers=same).status_code == 200


def test_two_content_type_headers_are_refused() -> None:
    api = client()
    twice = [("content-type", "application/json"), ("content-type", "text/plain")]
    refused(api.post("/api/games", content=json.dumps(HUIT).encode(), headers=twice), 400,
            "the request has 2 content-type headers: send it once")
    assert api.app.state.store.items == {}  # type: ignore[attr-defined]


def test_request_fields_are_strictly_typed() -> None:
    """No coercion: 1.0 is not a whole number (nor true), true is not a seat, "5" is not a seed."""
    api = client()
    for change, words in (({"rules": {"target_score": 1.0}}, "target_score=1.0 is of the wrong type; "
                                                              "accepted: a whole number"),
                          ({"rules": {"memory": 1.0}}, "memory=1.0 is of the wrong type; accepted: true or "
                                                       "false"),
                          ({"seat": True}, "seat: Input should be a valid integer"),
                          ({"seed": "5"}, "seed: Input should be a valid integer"),
                          ({"num_players": 2.0}, "num_players: Input should be a valid integer"),
                          ({"opponents": [1]}, "opponents.0: Input should be a valid string")):
        response = api.post("/api/games", json={**HUIT, **change})
        assert response.status_code in (400, 422), response.text
        assert words in response.json()["detail"], (change, response.text)
    key = api.post("/api/games", json=HUIT).json()["id"]
    for turn in (0.0, "0", False):
        body = {"move": "draw", "turn": turn}
        refused(api.post(f"/api/games/{key}/move", json=body), 422, "turn: Input should be a valid integer")
    assert table_of(api, key).hand.moves == []


def test_every_answer_has_the_security_headers() -> None:
    api = client()
    for response in (api.get("/"), api.get("/static/app.js"), api.get("/api/games/nope"),
                     api.post("/api/replays", content=b"x", headers={"content-type": "text/plain"})):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp


def test_a_non_loopback_host_is_warned_about() -> None:
    assert public_host_warning("127.0.0.1") is None and public_host_warning("::1") is None
    assert public_host_warning("localhost") is None
    warning = public_host_warning("0.0.0.0")
    assert warning is not None and "not a loopback address" in warning and "127.0.0.1" in warning
    assert allowed_hosts("0.0.0.0") is None  # any name: the warning says so
    assert allowed_hosts("192.168.1.5") == frozenset({"192.168.1.5"})


# ---------------------------------------------------------------- 7: concurrent moves
def test_concurrent_moves_are_played_once() -> None:
    """20 threads send `draw` at once, at the same turn: one is played, the others are refused."""
    api = client()
    rules = {"voluntary_draw": True, "play_after_draw": False}  # a draw is legal and ends the turn
    body = {"game": "switch", "num_players": 2, "seat": 0, "opponents": ["random"], "seed": 5, "rules": rules}
    key = api.post("/api/games", json=body).json()["id"]
    table = table_of(api, key)
    env = table.hand.env
    legal_actions = env.legal_actions

    def slow_legal_actions() -> Any:
        time.sleep(0.5)  # between the turn check and the move: where two requests used to interleave
        return legal_actions()

    env.legal_actions = slow_legal_actions  # type: ignore[method-assign]
    barrier = threading.Barrier(20)
    statuses: list[int] = []
    details: list[str] = []

    def send() -> None:
        barrier.wait()
        response = api.post(f"/api/games/{key}/move", json={"move": "draw", "turn": 0})
        statuses.append(response.status_code)
        details.append(response.json().get("detail", ""))

    threads = [threading.Thread(target=send) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    draws = [m for m in table.hand.moves if m["seat"] == 0]
    assert draws == [{"seat": 0, "move": "draw"}], table.hand.moves
    assert statuses.count(200) == 1 and statuses.count(409) == 19, statuses
    assert sum("being applied" in d for d in details) == 19


def test_a_move_sent_again_after_the_first_was_played_is_refused() -> None:
    """A copy that arrives once the first is played is stale (its turn is gone), and a move needs its turn."""
    api = client()
    rules = {"voluntary_draw": True, "play_after_draw": False}
    body = {"game": "switch", "num_players": 2, "seat": 0, "opponents": ["random"], "seed": 5, "rules": rules}
    created = api.post("/api/games", json=body).json()
    key, view = created["id"], created["frames"][-1]
    table = table_of(api, key)
    url = f"/api/games/{key}/move"
    copy = {"move": "draw", "turn": view["turn"]}
    assert api.post(url, json=copy).status_code == 200
    assert table.hand.to_move == 0 and not table.hand.over
    refused(api.post(url, json=copy), 409, f"the move was chosen at turn {view['turn']}")
    refused(api.post(url, json={"move": "draw"}), 422, "turn: Field required")
    assert [m for m in table.hand.moves if m["seat"] == 0] == [{"seat": 0, "move": "draw"}]


# ---------------------------------------------------------------- 8: memory per finished hand
def test_finished_hands_keep_the_replay_not_the_env() -> None:
    api = client()
    key = api.post("/api/games", json=HUIT).json()["id"]
    table = table_of(api, key)
    for number in range(1, 4):
        play_to_end(api, key, table.view())
        assert len(table.finished) == number
        if number < 3:
            api.post(f"/api/games/{key}/next")
    for number, hand in enumerate(table.finished, 1):
        assert not hasattr(hand, "env"), "a finished hand keeps its whole env"
        replay = api.get(f"/api/games/{key}/hands/{number}/replay").json()
        assert api.post("/api/replays", json=replay).status_code == 200  # still replays, moves checked


def test_a_table_keeps_the_replays_of_its_last_hands_only() -> None:
    """Memory per table is bounded: past `kept_hands`, the oldest replay goes, and the numbers go on."""
    from cardlab.envs import make_game
    from cardlab.serve.table import KEPT_HANDS, Player, Table

    table = Table(make_game("huit", {"num_players": 2}), 0, [Player("you"), Player("random", "random")],
                  seed=3, kept_hands=3)
    table.start()
    for number in range(1, 6):
        while not table.hand.over:
            table.move(table.view()["legal"][0]["text"])
        assert table.view()["hands_finished"] == number
        if number < 5:
            table.next_hand()
    assert len(table.finished) == 3 and table.view()["hand_number"] == 5
    with pytest.raises(LookupError, match="hand 2's replay is no longer kept: a game keeps the replays of "
                                          "its last 3 hands \\(3 to 5 now\\)"):
        table.replay(2)
    assert [table.replay(n)["hand_number"] for n in (3, 4, 5)] == [3, 4, 5]
    assert table.replay(5)["moves"] == list(table.hand.moves)
    web = Table(make_game("huit", {"num_players": 2}), 0, [Player("you"), Player("random", "random")])
    assert web.finished.maxlen == KEPT_HANDS == 50


# ---------------------------------------------------------------- 9: the after_draw phase
@pytest.mark.parametrize("game_id, players", [("switch", 3), ("huit", 2)])
def test_after_draw_view_and_observation_agree_for_every_seat(game_id: str, players: int) -> None:
    """C3: the phase of the player to move is public; each seat's view and observation both say it."""
    game = make_game(game_id, {"num_players": players})
    env = env_class(game.spec)(episode="hand", **game.rules.to_dict())
    flag = game.layout.slices["after_draw" if game_id == "huit" else "phase"].start  # Switch: phase[0]
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(6):
        env.reset(seed=seed)
        while not env.game_state.hand_over:
            env.step(int(rng.choice(env.legal_actions())))
            for seat in range(players):
                view = seat_view(game, env.game_state, seat)
                after_draw = bool(env.observe(env.possible_agents[seat])["observation"][flag])
                assert (view["phase"] == "after_draw") == after_draw
                if after_draw and seat != env.game_state.current:
                    seen += 1
                    assert "drawn_card" not in view  # the card itself stays the drawer's
    assert seen > 0


# ---------------------------------------------------------------- 11: defaults, fitting agents, no paths
def test_the_default_table_and_only_fitting_bots() -> None:
    from cardlab.cli import serve as serve_cli

    api = TestClient(create_app(Settings(game=serve_cli.DEFAULT_GAME)), base_url="http://127.0.0.1")
    options = api.get("/api/options").json()
    assert options["default"] == {"game": "huit", "opponent": None}  # the page seats each table's own bot
    assert options["table_bots"]["huit"]["2"] == "bot:huit-2p"
    bot = next(a for a in options["agents"] if a["name"] == "bot:switch-4p")
    assert bot["rules"]["hand_size"] == 7
    body = {"game": "switch", "num_players": 4, "seat": 0, "opponents": ["bot:switch-4p"] * 3,
            "rules": {"hand_size": 20}}
    response = api.post("/api/games", json=body)
    refused(response, 400, "bot:switch-4p does not fit this table")
    assert "/" not in response.json()["detail"].replace("rule options", "")
    assert "bot:switch-4p" not in response.json()["detail"].split("use ")[1]  # not offered as a choice


def test_error_messages_name_no_server_path() -> None:
    message = "bot /home/me/cardlab/agents/bots/switch-4p.json: it was trained with other rule options"
    assert without_paths(message) == "bot switch-4p.json: it was trained with other rule options"
    assert without_paths("a 1/2 chance, play 10H") == "a 1/2 chance, play 10H"


# ---------------------------------------------------------------- 12: the hand number of a replay
def test_a_replay_of_hand_3_says_hand_3() -> None:
    api = client()
    key = api.post("/api/games", json=HUIT).json()["id"]
    table = table_of(api, key)
    for _ in range(3):
        play_to_end(api, key, table.view())
        if len(table.finished) < 3:
            dealt = api.post(f"/api/games/{key}/next").json()["frames"][0]
            assert dealt["hand_number"] == len(table.finished) + 1
    replay = api.get(f"/api/games/{key}/hands/3/replay").json()
    loaded = api.post("/api/replays", json=replay).json()
    assert loaded["hand_number"] == 3
    assert api.get(f"/api/replays/{loaded['id']}/0").json()["hand_number"] == 3
    refused(api.post("/api/replays", json={**replay, "hand_number": "3"}), 400, "'hand_number'")


# ---------------------------------------------------------------- 13: bots named after their run
def test_a_run_bot_is_named_after_its_run(tmp_path: pathlib.Path) -> None:
    run = tmp_path / "runs" / "huit-try-3"
    run.mkdir(parents=True)
    for suffix in (".json", ".safetensors"):
        shutil.copyfile(SHIPPED_BOTS / f"huit-2p{suffix}", run / f"bot{suffix}")
    assert list(named_bots([run / "bot.json"])) == ["bot:huit-try-3"]
    assert list(named_bots([run])) == ["bot:huit-try-3"]
    api = client(bots=named_bots([run]))
    names = [a["name"] for a in api.get("/api/options").json()["agents"]]
    assert "bot:huit-try-3" in names and "bot:bot" not in names
    response = api.post("/api/games", json={**HUIT, "opponents": ["bot:huit-try-3"]})
    assert response.status_code == 200, response.text


def test_a_move_sent_while_an_advisor_thinks_is_played() -> None:
    """A slow advisor (a strong search, or compiling) holds the advice, not the table: the person's move
    goes through meanwhile, and the advice comes back for the turn it was asked at."""
    from cardlab.envs import make_game
    from cardlab.serve.table import Player, Table

    table = Table(make_game("huit", {"num_players": 2}), 0, [Player("you"), Player("random", "random")],
                  seed=3)
    view = table.start()[-1]
    advisor = table.advisors.get("greedy")
    thinking, answer = threading.Event(), threading.Event()
    probabilities = advisor.action_probabilities

    def slow(observation: dict[str, np.ndarray]) -> np.ndarray:
        thinking.set()
        assert answer.wait(10)
        return probabilities(observation)

    advisor.action_probabilities = slow  # type: ignore[method-assign]
    result: list[Any] = []
    asking = threading.Thread(target=lambda: result.append(table.advice("greedy")))
    asking.start()
    assert thinking.wait(10)
    legal = [m["text"] for m in view["legal"]]
    table.move(legal[0], view["turn"])
    assert [m for m in table.hand.moves if m["seat"] == 0][-1] == {"seat": 0, "move": legal[0]}
    answer.set()
    asking.join(10)
    turn, moves = result[0]
    assert turn == view["turn"] != table.view()["turn"]
    assert moves and {m.text for m in moves} <= set(legal)
