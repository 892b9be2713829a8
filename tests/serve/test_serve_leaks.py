"""Safe by construction: whole hands played through the HTTP API, every payload checked against the
server's own state for cards the person's seat cannot know."""

from __future__ import annotations

import pytest

from cardlab.envs import make_game
from cardlab.serve.table import Hand, Table, first_deal
from cardlab.serve.view import COMMON_FIELDS, seat_view

from .helpers import assert_no_hidden_card, client, table_of


@pytest.mark.parametrize(("game", "players", "seat", "mode", "seed"), [
    ("huit", 2, 0, "hand", 1),
    ("huit", 3, 1, "match", 2),
    ("switch", 4, 2, "hand", 3),
    ("switch", 3, 0, "match", 4),
])
def test_whole_hands_leak_nothing(game: str, players: int, seat: int, mode: str, seed: int) -> None:
    api = client()
    body = {"game": game, "num_players": players, "seat": seat, "mode": mode, "seed": seed,
            "opponents": ["expert", "random", "greedy"][: players - 1]}
    response = api.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    key = response.json()["id"]
    table = table_of(api, key)
    frames = response.json()["frames"]
    seen = hands = moves = 0
    while hands < 2:
        for frame in frames:  # the frames of one answer all belong to the hand now on the table
            seen += assert_no_hidden_card(frame, table)
        view = frames[-1]
        if view["legal"]:
            advice = api.get(f"/api/games/{key}/advice", params={"advisor": "expert"})
            position = api.get(f"/api/games/{key}/position")
            for payload in (advice.json(), position.json(), api.get(f"/api/games/{key}").json()):
                seen += assert_no_hidden_card(payload, table)
            # the person plays the last legal move: draws and passes as well as plays
            move = {"move": view["legal"][-1]["text"], "turn": view["turn"]}
            frames = api.post(f"/api/games/{key}/move", json=move).json()["frames"]
            moves += 1
        else:
            assert view["hand_over"] and view["result"] is not None
            hands += 1
            if view["can_deal"]:
                frames = api.post(f"/api/games/{key}/next").json()["frames"]
            else:
                break
    assert moves > 5 and seen > 50


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_every_frame_against_the_state_it_was_made_from(game: str) -> None:
    """Each view after an opponent's move, checked at once (a card laid later cannot excuse it)."""
    api = client()
    checked = 0
    for seed in range(3):
        key = api.post("/api/games", json={"game": game, "num_players": 4, "seat": 3, "seed": seed,
                                           "opponents": ["expert", "greedy", "random"]}).json()["id"]
        checked += _play_checking_each_move(table_of(api, key))
    assert checked > 20


def _play_checking_each_move(table: Table) -> int:
    checked = 0
    while not table.hand.over:
        # replay the agents' turns one by one, checking the person's view after each
        while not table.hand.over and table.hand.to_move != table.seat:
            mover = table.hand.to_move
            assert mover is not None
            table.hand.apply(table.agents[mover].act(table.hand.observe(mover)))
            assert_no_hidden_card(table.view(), table)
            checked += 1
        if not table.hand.over:
            legal = table.hand.env.legal_actions()
            table.hand.apply(legal[0])
            assert_no_hidden_card(table.view(), table)
    return checked


def test_the_checker_catches_a_leak() -> None:
    api = client()
    key = api.post("/api/games", json={"game": "huit", "num_players": 2, "opponents": ["random"],
                                       "seed": 1}).json()["id"]
    table = table_of(api, key)
    state = table.hand.env.state_dict()
    with pytest.raises(AssertionError, match="hidden"):
        assert_no_hidden_card({"log": [{"move": "draw " + state["hands"][1][0]}]}, table)
    with pytest.raises(AssertionError, match="hidden fields"):
        assert_no_hidden_card({"rng": state["rng"]}, table)
    with pytest.raises(AssertionError, match="hidden"):
        assert_no_hidden_card({"note": " ".join(state["bank"])}, table)


APP_KEYS = {"format", "version", "game", "rules", "seat", "hand", "hand_sizes", "pile", "played", "top",
            "status"}
"""The keys `seat_view` itself adds, beside the common fields and the game's own."""


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_seat_view_keeps_only_public_fields(game: str) -> None:
    table_game = make_game(game, num_players=3)
    hand = Hand(table_game, first_deal(table_game, 5))
    state = hand.env.game_state
    data = state.state_dict()
    for seat in range(3):
        view = seat_view(table_game, state, seat)
        assert view["hand"] == data["hands"][seat]
        assert view["hand_sizes"] == [len(h) for h in data["hands"]]
        assert table_game.spec.view is not None
        own = table_game.spec.view(state, seat)
        assert own and set(view) == APP_KEYS | set(COMMON_FIELDS) | set(own)
        assert view["status"] == [list(line) for line in table_game.spec.status(state).items()]
        assert "rng" not in view and "hands" not in view


def test_the_drawn_card_is_shown_to_the_seat_that_drew_it_only() -> None:
    table_game = make_game("switch", num_players=3)
    hand = Hand(table_game, first_deal(table_game, 5))
    for _ in range(40):
        if "drawn_card" in hand.env.state_dict() and hand.env.state_dict()["drawn_card"] is not None:
            break
        draw = table_game.str_to_action("draw")
        legal = hand.env.legal_actions()
        hand.apply(draw if draw in legal else legal[0])
    data = hand.env.state_dict()
    assert data["drawn_card"] is not None
    views = [seat_view(table_game, hand.env.game_state, seat) for seat in range(3)]
    assert [view.get("drawn_card") for view in views] == [
        data["drawn_card"] if seat == data["current_player"] else None for seat in range(3)]
