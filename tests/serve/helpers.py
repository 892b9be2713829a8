"""Shared by the web app's tests: a test client, and the check that a payload holds no hidden card."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
from fastapi.testclient import TestClient

from cardlab.envs import cards as C
from cardlab.serve.app import Settings, create_app
from cardlab.serve.limits import uvicorn_server
from cardlab.serve.table import Table

CARD = re.compile(r"^(10|[2-9AJQKT])[SHDC]$|^JOKER$")
# state_dict keys that hold hidden cards or what predicts them (the generator)
HIDDEN_KEYS = {"hands", "stock", "bank", "left_out", "rng", "bit_generator"}
QUICK2 = {"game": "huit", "num_players": 2, "seat": 0, "seed": 3, "opponents": ["search-quick"]}


def client(**settings: Any) -> TestClient:
    return TestClient(create_app(Settings(**settings)), base_url="http://127.0.0.1")


def table_of(api: TestClient, game_id: str) -> Table:
    """The server's own table behind an id (the test reads the truth the page must not see)."""
    table: Table = api.app.state.store.items[game_id][1]  # type: ignore[attr-defined]
    return table


def strings(value: Any) -> Iterator[str]:
    """Every key and string in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys(item)


def known_cards(table: Table) -> set[int]:
    """Card kinds the person may know now: their hand, the face-up pile, every card laid this hand."""
    state = table.hand.env.state_dict()
    face_up = table.game.spec.state.PILES[1]  # type: ignore[attr-defined]
    known = {C.parse_card(c) for c in state["hands"][table.seat] + state[face_up]}
    for entry in table.hand.moves:
        words = entry["move"].split()
        if words[0] == "play":
            known.update(C.parse_card(w) for w in words[1:] if CARD.match(w))
    return known


def assert_no_hidden_card(payload: Any, table: Table) -> int:
    """No card in `payload` that the person cannot know, and no key of a hidden field; returns cards seen.

    The hidden cards are those of the other hands and of the face-down pile
    (from the server's `state_dict()`), less what the person may know.
    """
    state = table.hand.env.state_dict()
    face_down = table.game.spec.state.PILES[0]  # type: ignore[attr-defined]
    known = known_cards(table)
    hidden = {C.parse_card(c) for s, hand in enumerate(state["hands"]) if s != table.seat for c in hand}
    hidden |= {C.parse_card(c) for c in state[face_down]}
    hidden -= known
    bad_keys = HIDDEN_KEYS & set(keys(payload))
    assert not bad_keys, f"payload has hidden fields {bad_keys}"
    seen = 0
    for text in strings(payload):
        for word in text.split():
            if CARD.match(word):
                card = C.parse_card(word)
                seen += 1
                assert card not in hidden, f"payload names {word}, a hidden card ({text!r})"
                assert card in known, f"payload names {word}, which the person cannot know ({text!r})"
    return seen


def person_step(base: str, http: httpx.Client) -> tuple[str, int]:
    """A loaded replay of a finished hand against greedy, and a step where the person is to move."""
    key = http.post(f"{base}/api/games", json={**QUICK2, "opponents": ["greedy"]}).json()["id"]
    view = http.get(f"{base}/api/games/{key}").json()
    while view["legal"]:
        view = http.post(f"{base}/api/games/{key}/move", json={"move": view["legal"][0]["text"],
                                                               "turn": view["turn"]}).json()["frames"][-1]
    replay = http.get(f"{base}/api/games/{key}/hands/1/replay").json()
    loaded = http.post(f"{base}/api/replays", json=replay).json()
    step = next(i for i, m in enumerate(replay["moves"]) if m["seat"] == 0 and i > 0)
    return loaded["id"], step


@contextlib.contextmanager
def running(app: Any) -> Iterator[int]:
    """`cardlab serve`'s uvicorn server of `app` on a free loopback port, in a thread; its port."""
    server = uvicorn_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
