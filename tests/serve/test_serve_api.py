"""The web app's HTTP API, endpoint by endpoint: what each answers, and every kind of bad request
refused with a 4xx and a message while the game stays as it was."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from cardlab.serve.app import Settings, create_app
from cardlab.serve.table import next_deal

from .helpers import client, table_of

JSON = {"content-type": "application/json"}
HUIT = {"game": "huit", "num_players": 2, "seat": 0, "opponents": ["greedy"], "seed": 11}


@pytest.fixture
def api() -> TestClient:
    return client()


def new_game(api: TestClient, **changes: Any) -> tuple[str, dict[str, Any]]:
    response = api.post("/api/games", json={**HUIT, **changes})
    assert response.status_code == 200, response.text
    data = response.json()
    return data["id"], data["frames"][-1]


def play_out(api: TestClient, key: str, view: dict[str, Any]) -> dict[str, Any]:
    """Play the first legal move until the hand is over; returns the last view."""
    while view["legal"]:
        move = {"move": view["legal"][0]["text"], "turn": view["turn"]}
        response = api.post(f"/api/games/{key}/move", json=move)
        assert response.status_code == 200, response.text
        view = response.json()["frames"][-1]
    return view


def refused(response: Any, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str) and words in detail, detail


# ---------------------------------------------------------------- the page
def test_page_and_its_files_are_served_from_the_package(api: TestClient) -> None:
    page = api.get("/")
    assert page.status_code == 200 and "<title>cardlab</title>" in page.text
    for name, kind in (("app.js", "javascript"), ("style.css", "css")):
        response = api.get(f"/static/{name}")
        assert response.status_code == 200 and kind in response.headers["content-type"]
        assert "http://" not in response.text and "https://" not in response.text  # nothing from the internet
    assert "https://" not in page.text and "http://" not in page.text
    for name in ("index.html", "..%2Fapp.py", "%2Fetc%2Fpasswd", "nothing.js"):
        assert api.get(f"/static/{name}").status_code == 404


def test_options_list_games_rules_and_agents(api: TestClient) -> None:
    data = api.get("/api/options").json()
    assert [g["id"] for g in data["games"]] == ["switch", "huit"]
    huit = data["games"][1]
    players = next(r for r in huit["rules"] if r["name"] == "num_players")
    assert (players["low"], players["high"], players["default"], players["kind"]) == (2, 6, 4, "int")
    assert next(r for r in huit["rules"] if r["name"] == "queen_skips_each")["kind"] == "bool"
    names = {a["name"] for a in data["agents"]}
    assert {"random", "greedy", "expert", "bot:huit-2p", "bot:switch-4p"} <= names
    assert data["modes"] == ["hand", "match"]


# ---------------------------------------------------------------- games
def test_new_game_and_view(api: TestClient) -> None:
    key, view = new_game(api, seat=1, opponents=["bot:huit-2p"])
    assert len(key) >= 20
    assert view["seat"] == 1 and view["players"][0]["label"] == "bot:huit-2p" and view["players"][1]["you"]
    assert view["log"][0]["seat"] == 0  # the bot played first: its move came as a frame
    assert api.get(f"/api/games/{key}").json() == view


@pytest.mark.parametrize(("changes", "status", "words"), [
    ({"game": "poker"}, 400, "unknown game 'poker'"),
    ({"num_players": 9}, 400, "num_players=9 is out of range"),
    ({"mode": "match", "rules": {"num_players": 3}}, 400,  # two table sizes: one silently won
     "rules.num_players=3 is not the request's num_players=2; accepted: the table size once, as num_players "
     "(or rules.num_players equal to it)"),
    ({"rules": {"colour": "red"}}, 400, "unknown rule option(s) colour"),
    ({"rules": {"hand_size": 40}}, 400, "hand_size=40 is out of range"),
    ({"opponents": ["nobody"]}, 400, "unknown agent 'nobody' for huit with 2 players"),
    ({"opponents": ["bot:/etc/passwd"]}, 400, "unknown agent 'bot:/etc/passwd'"),
    ({"opponents": ["bot:switch-4p"]}, 400, "bot:switch-4p does not fit this table (huit with 2 players"),
    ({"opponents": ["bot:switch"]}, 400, "this table plays huit: use bot:huit"),
    ({"game": "switch", "num_players": 7, "opponents": ["bot:switch"] * 6}, 400,
     "no shipped bot fits a 7-player switch table"),
    ({"opponents": ["greedy", "greedy"]}, 400, "give 1 opponents"),
    ({"seat": 2}, 400, "seat 2 is not at a 2-player table"),
    ({"mode": "tournament"}, 422, "mode"),
    ({"seed": -1}, 422, "seed"),
    ({"surprise": 1}, 422, "surprise"),
    ({"opponents": "greedy"}, 422, "opponents"),
])
def test_new_game_refusals(api: TestClient, changes: dict[str, Any], status: int, words: str) -> None:
    refused(api.post("/api/games", json={**HUIT, **changes}), status, words)
    assert not api.app.state.store.items  # type: ignore[attr-defined]


def test_a_module_factory_spec_is_refused_and_nothing_is_imported(api: TestClient) -> None:
    """MODULE:FACTORY imports code, so the web app never takes it: only its catalogue's names seat."""
    module = "tests.serve.never_imported"
    refused(api.post("/api/games", json={**HUIT, "opponents": [f"{module}:make"]}), 400,
            f"unknown agent '{module}:make' for huit with 2 players")
    assert module not in sys.modules
    assert not api.app.state.store.items  # type: ignore[attr-defined]


def test_malformed_and_oversized_bodies(api: TestClient) -> None:
    refused(api.post("/api/games", content=b"{not json", headers={"content-type": "application/json"}),
            400, "malformed JSON")
    small = client(max_body=200)
    refused(small.post("/api/games", json={**HUIT, "rules": {"x" * 300: 1}}), 413, "at most 200 bytes")
    assert small.post("/api/games", json=HUIT).status_code == 200


def test_move_and_bad_moves_leave_the_game_unchanged(api: TestClient) -> None:
    key, view = new_game(api)
    table = table_of(api, key)
    before = table.hand.env.state_dict()
    url = f"/api/games/{key}/move"
    turn = view["turn"]
    refused(api.post(url, json={"move": "play 7X", "turn": turn}), 400, "cannot read card '7X'")
    refused(api.post(url, json={"move": "pass", "turn": turn}), 400, "'pass' is not legal now; legal moves:")
    refused(api.post(url, json={"move": "draw", "turn": view["turn"] + 5}), 409, "reload the table")
    refused(api.post(url, json={"mov": "draw"}), 422, "move")
    refused(api.post(url, json={"move": 352, "turn": turn}), 422, "move")
    refused(api.post(url, content=b"[", headers={"content-type": "application/json"}), 400, "malformed JSON")
    refused(api.post("/api/games/nope/move", json={"move": "draw", "turn": 0}), 404, "unknown game id 'nope'")
    assert table.hand.env.state_dict() == before and table.hand.moves == []
    frames = api.post(url, json={"move": "draw", "turn": view["turn"]}).json()["frames"]
    assert frames[0]["log"][-1] == {"seat": 0, "move": "draw"}
    last = play_out(api, key, frames[-1])
    assert last["hand_over"] and last["result"]["hand_points"][last["result"]["winner"]] == 0
    before = table.hand.env.state_dict()
    refused(api.post(url, json={"move": "draw", "turn": last["turn"]}), 409, "the hand is over")
    assert table.hand.env.state_dict() == before


def test_hand_play_deals_fresh_hands(api: TestClient) -> None:
    key, view = new_game(api)
    refused(api.post(f"/api/games/{key}/next"), 409, "still being played")
    last = play_out(api, key, view)
    assert last["can_deal"] and last["hands_finished"] == 1 and sum(last["wins"]) == 1
    view = api.post(f"/api/games/{key}/next").json()["frames"][-1]
    assert view["hand_number"] == 2 and view["scores"] == [0, 0]  # the table's second hand, totals fresh
    assert view["log"] == [] or view["log"][0]["seat"] == 1  # each hand alone: player_0 starts


def test_match_play_runs_to_the_target(api: TestClient) -> None:
    key, view = new_game(api, mode="match", rules={"target_score": 25}, seed=3)
    hands = 0
    while True:
        view = play_out(api, key, view)
        hands += 1
        if not view["can_deal"]:
            break
        view = api.post(f"/api/games/{key}/next").json()["frames"][-1]
        assert view["hand_number"] == hands + 1
        assert view["scores"] == table_of(api, key).hand.env.game_state.match.scores
    assert view["result"]["match_over"] and max(view["result"]["scores"]) >= 25
    assert view["result"]["match_winners"]
    refused(api.post(f"/api/games/{key}/next"), 409, "the match is over")


def test_advice(api: TestClient) -> None:
    key, view = new_game(api)
    url = f"/api/games/{key}/advice"
    expert = api.get(url, params={"advisor": "expert"}).json()
    assert expert["advisor"] == "expert" and len(expert["moves"]) == 1
    assert expert["moves"][0]["probability"] == 1
    assert expert["moves"][0]["text"] in {m["text"] for m in view["legal"]}
    bot = api.get(url, params={"advisor": "bot:huit-2p", "top": 3}).json()["moves"]
    probs = [m["probability"] for m in bot]
    assert 1 <= len(bot) <= 3 and probs == sorted(probs, reverse=True) and sum(probs) <= 1 + 1e-9
    uniform = api.get(url, params={"advisor": "random", "top": 10}).json()["moves"]
    assert len(uniform) == len(view["legal"]) and all(np.isclose(m["probability"], 1 / len(view["legal"]))
                                                       for m in uniform)
    refused(api.get(url, params={"advisor": "bot:runs/x/bot.json"}), 400, "unknown agent")
    refused(api.get(url, params={"advisor": "expert", "top": 0}), 422, "top")
    refused(api.get(url), 422, "advisor")
    play_out(api, key, view)
    refused(api.get(url, params={"advisor": "expert"}), 409, "not your turn")


def test_position_download_and_cardlab_advise(api: TestClient, tmp_path: Any,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from cardlab.cli import main

    key, view = new_game(api, seed=5)
    response = api.get(f"/api/games/{key}/position")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    path = tmp_path / "position.json"
    path.write_text(response.text)
    assert main(["advise", "huit", "--state", str(path), "--agent", "bot:huit-2p"]) == 0
    out = capsys.readouterr().out.splitlines()
    advice = api.get(f"/api/games/{key}/advice", params={"advisor": "bot:huit-2p"}).json()["moves"]
    assert out[0] == "Huit américain, 2 players: player_0 to move; advisor bot:huit-2p"
    assert [line.split()[1:-1] for line in out[1:]] == [m["text"].split() for m in advice]
    assert [float(line.split()[-1]) for line in out[1:]] == [round(m["probability"], 3) for m in advice]
    play_out(api, key, view)
    refused(api.get(f"/api/games/{key}/position"), 409, "the hand is over")


def test_delete_and_unknown_ids(api: TestClient) -> None:
    key, _ = new_game(api)
    assert api.delete(f"/api/games/{key}").status_code == 204
    for response in (api.get(f"/api/games/{key}"), api.delete(f"/api/games/{key}"),
                     api.post(f"/api/games/{key}/next"), api.get(f"/api/games/{key}/position")):
        refused(response, 404, "unknown game id")


def test_games_are_capped_and_expire() -> None:
    api = client(max_games=2, idle_seconds=60)
    store = api.app.state.store  # type: ignore[attr-defined]
    now = [1000.0]
    store.clock = lambda: now[0]
    first, _ = new_game(api)
    new_game(api)
    refused(api.post("/api/games", json=HUIT), 429, "too many games open (2)")
    now[0] += 30
    assert api.get(f"/api/games/{first}").status_code == 200  # using a game keeps it
    now[0] += 45
    new_game(api)  # the second, idle for 75 s, expired; the first was used 45 s ago
    assert api.get(f"/api/games/{first}").status_code == 200
    now[0] += 61
    refused(api.get(f"/api/games/{first}"), 404, "it may have expired")


def test_one_client_has_a_share_of_the_games_and_a_refusal_says_when_to_retry() -> None:
    """One address cannot take every game or replay slot: past its share it gets 429 with Retry-After (the
    time until its soonest item expires), and other addresses still open theirs up to the server's cap."""
    app = create_app(Settings(max_games=5, games_per_client=2, max_replays=3, replays_per_client=1,
                              idle_seconds=100))
    hog, guest, third = (TestClient(app, base_url="http://127.0.0.1", client=(f"10.0.0.{i}", 5000))
                         for i in (1, 2, 3))
    store = app.state.store
    now = [1000.0]
    store.clock = lambda: now[0]
    new_game(hog)
    now[0] += 30
    new_game(hog)
    answer = hog.post("/api/games", json=HUIT)
    refused(answer, 429, "you have 2 games open (at most 2 per client)")
    assert answer.headers["Retry-After"] == "70"  # its first game expires 100 s after its use at t=1000
    new_game(guest)
    new_game(guest)
    _, replay = finished_replay(third)
    refused(third.post("/api/games", json=HUIT), 429, "too many games open (5)")
    assert third.post("/api/replays", json=replay).status_code == 200
    answer = third.post("/api/replays", json=replay)
    refused(answer, 429, "you have 1 replays open (at most 1 per client)")
    assert answer.headers["Retry-After"] == "100"
    assert hog.post("/api/replays", json=replay).status_code == 200  # the replays' share is per client too


def test_replays_have_their_own_quota_and_can_be_deleted() -> None:
    """Loading replays up to their cap locks out neither new games nor, once one is deleted, a new load."""
    api = client(max_games=3, max_replays=2)
    _, replay = finished_replay(api)
    loaded = [api.post("/api/replays", json=replay).json()["id"] for _ in range(2)]
    refused(api.post("/api/replays", json=replay), 429, "too many replays open (2)")
    new_game(api)  # the games' own quota: one used by finished_replay, one now
    assert api.delete(f"/api/replays/{loaded[0]}").status_code == 204
    refused(api.get(f"/api/replays/{loaded[0]}/0"), 404, "unknown replay id")
    refused(api.delete(f"/api/replays/{loaded[0]}"), 404, "unknown replay id")
    assert api.post("/api/replays", json=replay).status_code == 200
    assert api.get(f"/api/replays/{loaded[1]}/0").status_code == 200


# ---------------------------------------------------------------- replays
def finished_replay(api: TestClient, **changes: Any) -> tuple[str, dict[str, Any]]:
    key, view = new_game(api, **changes)
    refused(api.get(f"/api/games/{key}/hands/1/replay"), 404, "0 finished so far")
    play_out(api, key, view)
    response = api.get(f"/api/games/{key}/hands/1/replay")
    assert response.status_code == 200
    assert 'filename="huit-hand1-replay.json"' in response.headers["content-disposition"]
    return key, response.json()


def test_replay_download_and_stepping(api: TestClient) -> None:
    _, replay = finished_replay(api)
    assert replay["format"] == "cardlab-replay" and replay["players"] == ["you", "greedy"]
    assert replay["start"]["hands"][1] and replay["result"]["winner"] in (0, 1)  # the deal: the hand is over
    loaded = api.post("/api/replays", json=replay).json()
    assert loaded["steps"] == len(replay["moves"]) and loaded["seat"] == 0 and loaded["hand_number"] == 1
    start = api.get(f"/api/replays/{loaded['id']}/0", params={"advisor": "expert"}).json()
    assert start["log"] == [] and start["next_move"] == replay["moves"][0] and start["advice"]
    assert start["advice"][0]["probability"] == 1.0 and start["hand"] == replay["start"]["hands"][0]
    end = api.get(f"/api/replays/{loaded['id']}/{loaded['steps']}").json()
    assert end["result"] == replay["result"] and end["next_move"] is None and "advice" not in end
    for step, move in enumerate(replay["moves"]):
        frame = api.get(f"/api/replays/{loaded['id']}/{step}", params={"advisor": "bot:huit-2p"}).json()
        assert frame["step"] == step and frame["next_move"] == move and len(frame["log"]) == step
        if move["seat"] == 0:  # the person's decisions come with advice over their legal moves
            assert {m["text"] for m in frame["advice"]} <= {m["text"] for m in frame["legal"]}
        else:
            assert "advice" not in frame and frame["legal"] == []
    refused(api.get(f"/api/replays/{loaded['id']}/{loaded['steps'] + 1}"), 404, "not in this replay")
    refused(api.get(f"/api/replays/{loaded['id']}/1", params={"advisor": "bot:../x"}), 400, "unknown agent")
    refused(api.get("/api/replays/nope/0"), 404, "unknown replay id")


@pytest.mark.parametrize(("damage", "words"), [
    (lambda r: r["moves"].pop(), "ends before the hand does"),
    (lambda r: r["moves"][0].update(move="play 7X"), "move 1 of the replay"),
    (lambda r: r["moves"][0].update(seat=1 - r["moves"][0]["seat"]), "move 1 of the replay is by seat"),
    (lambda r: r["result"].update(winner=1 - r["result"]["winner"]), "the file was changed"),
    (lambda r: r["start"]["hands"][0].append("7C"), "saved state"),
    (lambda r: r.update(format="something"), "not a replay"),
    (lambda r: r.update(game="poker"), "unknown game"),
    (lambda r: r.update(players=["<script>"] * 7), "'players' must be 2 names"),
    (lambda r: r.pop("start"), "the replay lacks start"),
    (lambda r: r["start"].update(scores=[10**30, 0]), "saved state field 'scores'[0] must be a whole number"),
])
def test_damaged_replays_are_refused(api: TestClient, damage: Any, words: str) -> None:
    _, replay = finished_replay(api)
    damage(replay)
    refused(api.post("/api/replays", json=replay), 400, words)


def test_replay_of_a_match_hand_tells_nothing_of_the_next(api: TestClient) -> None:
    key, replay = finished_replay(api, mode="match", seed=None)
    table = table_of(api, key)
    api.post(f"/api/games/{key}/next")
    # the replay's generator, run on, does not deal the hand that is on the table now
    from cardlab.serve.table import Hand

    hand = Hand(table.game, replay["start"])
    for move in replay["moves"]:
        hand.apply(table.game.str_to_action(move["move"]))
    finished = hand.env.state_dict()
    assert hand.result() == table.finished[0].result  # the table keeps the result, not the env
    guessed = hand.env.game_state
    guessed.next_hand()
    assert guessed.state_dict()["hands"] != table.hand.start["hands"]
    assert replay["start"]["rng"] != table.hand.start["rng"]
    # the server's next deal: the finished hand's totals and dealer, a generator of its own
    one, two = next_deal(table.game, finished, 1), next_deal(table.game, finished, 2)
    assert one["hands"] != two["hands"] and one["scores"] == two["scores"] == finished["scores"]
    assert one["dealer"] == table.hand.start["dealer"] == (finished["dealer"] + 1) % 2


def test_malformed_replay_upload(api: TestClient) -> None:
    refused(api.post("/api/replays", content=b"\xff\xfe", headers=JSON), 400, "malformed JSON")
    refused(api.post("/api/replays", content=b"[]", headers=JSON), 400, "not a replay")


# ---------------------------------------------------------------- the server's own bots
def test_bots_from_the_command_line_are_offered_by_name(tmp_path: Any,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from cardlab.agents.bot_catalogue import SHIPPED_BOTS
    from cardlab.cli import main
    from cardlab.serve.app import named_bots

    for suffix in (".json", ".safetensors"):
        (tmp_path / f"mine{suffix}").write_bytes((SHIPPED_BOTS / f"huit-2p{suffix}").read_bytes())
    bots = named_bots([tmp_path / "mine"])
    assert bots == {"bot:mine": (tmp_path / "mine.json").resolve()}
    api = client(bots=bots)
    assert "bot:mine" in {a["name"] for a in api.get("/api/options").json()["agents"]}
    key, view = new_game(api, opponents=["bot:mine"])
    assert view["players"][1]["label"] == "bot:mine"
    assert api.get(f"/api/games/{key}/advice", params={"advisor": "bot:mine"}).status_code == 200
    with pytest.raises(ValueError, match="file not found"):
        named_bots([tmp_path / "none.json"])
    with pytest.raises(ValueError, match="two bots are named bot:huit-2p"):
        named_bots([SHIPPED_BOTS / "huit-2p.json"])
    for argv, words in ((["--port", "0"], "argument --port: expected a whole number >= 1, got 0"),
                        (["--port", "70000"], "--port must be 1..65535"),
                        (["--bot", str(tmp_path / "x")], "not found"),
                        (["--idle-minutes", "0"], "--idle-minutes above 0")):
        assert main(["serve", *argv]) == 2
        assert words in capsys.readouterr().err


# ---------------------------------------------------------------- bounds, nesting, excerpts
@pytest.mark.parametrize(("path", "body", "words"), [
    ("/api/replays", b"[" * 100_000, "nests arrays/objects more than 32 deep"),
    ("/api/replays", b"1" * 5_000, "a number of 5,000 characters"),
    ("/api/games", b"[" * 100_000, "nests arrays/objects more than 32 deep"),
    ("/api/games", b'{"seed": ' + b"1" * 5_000 + b"}", "a number of 5,000 characters"),
], ids=["replay-deep", "replay-number", "game-deep", "game-number"])
def test_deep_or_huge_json_bodies_are_a_400(api: TestClient, path: str, body: bytes, words: str) -> None:
    refused(api.post(path, content=body, headers={"content-type": "application/json"}), 400, words)
    assert api.post("/api/games", json=HUIT).status_code == 200  # the next request is served


def test_huge_rule_options_are_a_400_naming_the_range(api: TestClient) -> None:
    body = json.dumps({**HUIT, "rules": {"target_score": 10**60}})
    refused(api.post("/api/games", content=body, headers={"content-type": "application/json"}), 400,
            "target_score=<a number of about 60 digits> is out of range; accepted: 1 to 1,000,000")
    response = api.post("/api/games", json={**HUIT, "rules": {"x" * 100_000: 1}})
    assert response.status_code == 400 and len(response.json()["detail"]) < 300
    assert not api.app.state.store.items  # type: ignore[attr-defined]


def test_a_move_body_goes_through_the_checked_reader(api: TestClient) -> None:
    key, _ = new_game(api)
    refused(api.post(f"/api/games/{key}/move", content=b"[" * 1000,
                     headers={"content-type": "application/json"}), 400, "more than 32 deep")
    refused(api.post(f"/api/games/{key}/move", json={"move": "draw", "turn": 0, "extra": 1}), 422, "extra")


def test_an_unknown_key_s_name_is_cut_in_the_answer(api: TestClient) -> None:
    """A 510,000-character key fits the body cap; the 422 repeats its first 40 characters only."""
    key, view = new_game(api)
    name = "k" * 510_000
    for url, body in (("/api/games", {**HUIT, name: 1}),
                      (f"/api/games/{key}/move", {"move": "draw", "turn": view["turn"], name: 1})):
        response = api.post(url, json=body)
        refused(response, 422, f"bad request: {'k' * 40}... (509,960 more characters): Extra inputs")
        assert len(response.content) < 200
