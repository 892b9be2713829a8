"""An agent that fails mid-turn (raises, illegal or non-finite output, too slow) never freezes a table.

Its seat falls back to the named safe agent (`FALLBACK`); the answer says who
failed and how, never another seat's cards; the person's move stands, and the
hand goes on to its end and the next one.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pytest

from cardlab.envs import make_game
from cardlab.serve.table import FALLBACK, Player, Table
from tests.agents.test_bot import unchecked_overflowing_bot
from tests.failing_agents import register_failing

from .helpers import CARD, assert_no_hidden_card, client, table_of


def other_seats_cards(table: Table) -> set[str]:
    """Every card string of another seat's hand and of the face-down pile, now."""
    state = table.hand.env.state_dict()
    face_down = table.game.spec.state.PILES[0]  # type: ignore[attr-defined]
    cards = {c for s, hand in enumerate(state["hands"]) if s != table.seat for c in hand}
    return cards | set(state[face_down])


def assert_clean(body: Any, table: Table) -> None:
    """No card of another seat anywhere in the answer (its text, so keys and messages count too)."""
    text = json.dumps(body)
    hidden = other_seats_cards(table)
    for word in re.findall(r"[0-9AJQKT]{1,2}[SHDC]|JOKER", text):
        if CARD.match(word) and word in hidden:
            assert_no_hidden_card(body, table)  # fails with the field, unless the person may know it


def play_out(table: Table, frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The person plays their first legal move until the hand ends; every frame on the way."""
    seen = list(frames)
    while not table.hand.over:
        seen += table.move(table.view()["legal"][0]["text"])
    return seen


@pytest.mark.parametrize("spec", ["fails-raise", "fails-illegal", "fails-nan", "fails-later"])
def test_a_failing_agent_s_seat_falls_back_and_the_hand_goes_on(spec: str, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    register_failing(monkeypatch)
    game = make_game("huit", {"num_players": 3})
    table = Table(game, 0, [Player("you"), Player(spec, spec), Player("expert", "expert")], seed=4)
    frames = play_out(table, table.start())
    notices = [n for f in frames for n in f["notices"]]
    assert notices, "the fallback is said"
    assert notices[-1].startswith(f"player_1 ({spec}) failed: ")
    assert f"{FALLBACK} plays its seat from now on" in notices[-1]
    assert "10H" not in notices[-1] and "legal moves" not in notices[-1] and "KeyError(" not in notices[-1]
    assert table.players[1].label == f"{FALLBACK} (for {spec})"
    assert table.hand.over and table.finished
    table.next_hand()  # the table goes on
    assert table.view()["notices"] == notices[-1:]


def test_the_person_s_move_and_the_agent_s_reply_are_one_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The person's move is kept once, and the fallback answers at the same turn: nobody waits on a seat."""
    register_failing(monkeypatch)
    game = make_game("switch", {"num_players": 2})
    table = Table(game, 0, [Player("you"), Player("fails-later", "fails-later")], seed=7)
    table.start()
    for _ in range(10):
        if table.hand.over:
            break
        turn = table.hand.env.game_state.turn
        text = table.view()["legal"][0]["text"]
        before = len(table.hand.moves)
        table.move(text, turn)
        assert table.hand.moves[before] == {"seat": 0, "move": text}
        assert table.hand.over or table.hand.to_move == 0


def test_a_slow_agent_falls_back_after_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    register_failing(monkeypatch)
    game = make_game("huit", {"num_players": 2})
    table = Table(game, 0, [Player("you"), Player("fails-slow", "fails-slow")], seed=1, agent_seconds=0.2)
    frames = play_out(table, table.start())
    notices = [n for f in frames for n in f["notices"]]
    assert notices and "took more than 0.2 s" in notices[-1]


def test_an_overflowing_bot_at_a_web_table_never_freezes_it_or_shows_a_card(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten games against the bot the load check would refuse: every one ends, no answer names its cards."""
    from cardlab.serve.app import named_bots

    path = unchecked_overflowing_bot(tmp_path, monkeypatch)
    api = client(bots=named_bots([path]))
    fell_back = 0
    for seed in range(10):
        answer = api.post("/api/games", json={"game": "huit", "num_players": 2, "seat": seed % 2,
                                              "opponents": ["bot:huit-over"], "seed": seed})
        assert answer.status_code == 200, answer.text
        key = answer.json()["id"]
        table = table_of(api, key)
        frames = answer.json()["frames"]
        assert_clean(answer.json(), table)
        for _ in range(200):
            view = frames[-1]
            if view["hand_over"]:
                break
            advice = api.get(f"/api/games/{key}/advice", params={"advisor": "bot:huit-over"})
            assert advice.status_code in (200, 400), advice.text
            assert_clean(advice.json(), table)
            if advice.status_code == 400:
                assert advice.json()["detail"].startswith("bot:huit-over failed: its logits are not finite")
            move = api.post(f"/api/games/{key}/move", json={"move": view["legal"][0]["text"],
                                                           "turn": view["turn"]})
            assert move.status_code == 200, move.text
            assert_clean(move.json(), table)
            frames = move.json()["frames"]
        assert frames[-1]["hand_over"], "the hand ends"
        notices = frames[-1]["notices"]
        if notices:
            fell_back += 1
            assert notices == [f"player_{1 - seed % 2} (bot:huit-over) failed: its logits are not finite "
                               f"on this observation; {FALLBACK} plays its seat from now on"]
        assert api.post(f"/api/games/{key}/next").status_code == 200
    assert fell_back >= 3
