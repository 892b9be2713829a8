"""The web app's shares under a hog (`attack_probes.py hogs`): one address opening every slot it can, and
clients that ask for a search's advice and hang up at once.

`slots`: one address opens games, then loads replays, until refused; every
refusal must be a 429 with ``Retry-After``, and another address must still
open a game and load a replay. `abandoned`: on a real server (loopback, one
search worker), `abandoned` advice requests of the strong search are sent and
their connections closed at once; then nothing of them may be left queued
or running within 3 s, and another client's advice must come back in about
its own search's time. Printed: what was admitted, refused and measured;
the exit code is 1 when a rule above was broken.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
from fastapi.testclient import TestClient

from cardlab.serve.app import Settings, create_app
from cardlab.serve.limits import uvicorn_server

GAME = {"game": "huit", "num_players": 2, "seat": 0, "opponents": ["greedy"], "seed": 3}


def slots() -> list[str]:
    """One address takes what it can; the broken rules (empty: none)."""
    app = create_app(Settings())
    hog, guest = (TestClient(app, base_url="http://127.0.0.1", client=(address, 5000))
                  for address in ("10.9.0.1", "10.9.0.2"))
    broken: list[str] = []
    games, answer = 0, hog.post("/api/games", json=GAME)
    while answer.status_code == 200:
        games, key = games + 1, answer.json()["id"]
        answer = hog.post("/api/games", json=GAME)
    view = hog.get(f"/api/games/{key}").json()
    while view["legal"]:
        move = {"move": view["legal"][0]["text"], "turn": view["turn"]}
        view = hog.post(f"/api/games/{key}/move", json=move).json()["frames"][-1]
    replay = hog.get(f"/api/games/{key}/hands/1/replay").json()
    replays, loaded = 0, hog.post("/api/replays", json=replay)
    while loaded.status_code == 200:
        replays, loaded = replays + 1, hog.post("/api/replays", json=replay)
    for what, refusal in (("game", answer), ("replay", loaded)):
        if refusal.status_code != 429 or not refusal.headers.get("Retry-After"):
            broken.append(f"the {what} past the share: {refusal.status_code} without Retry-After")
    guest_game = guest.post("/api/games", json=GAME).status_code
    guest_replay = guest.post("/api/replays", json=replay).status_code
    if (guest_game, guest_replay) != (200, 200):
        broken.append(f"another address refused: game {guest_game}, replay {guest_replay}")
    print(f"slots: one address opened {games} games and {replays} replays, then 429 with Retry-After "
          f"{answer.headers.get('Retry-After')} and {loaded.headers.get('Retry-After')} s; another address: "
          f"game {guest_game}, replay {guest_replay}")
    return broken


def abandoned(requests: int) -> list[str]:
    """Advice requests closed at once; the broken rules (empty: none)."""
    app = create_app(Settings(search_workers=1))
    server = uvicorn_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    base, pool = f"http://127.0.0.1:{port}", app.state.server.pool
    broken: list[str] = []
    try:
        with httpx.Client(timeout=600) as http:
            key = http.post(f"{base}/api/games", json=GAME).json()["id"]
            view = http.get(f"{base}/api/games/{key}").json()
            path = f"/api/games/{key}/advice?advisor=search-strong"
            http.get(base + path).raise_for_status()  # compiled before the clock
            request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(requests)]
            for conn in conns:
                conn.sendall(request)
            time.sleep(0.3)
            for conn in conns:
                conn.close()
            started = time.monotonic()
            while (pool.waiting() or pool.running) and time.monotonic() - started < 3:
                time.sleep(0.05)
            left = pool.waiting() + pool.running
            asked = time.monotonic()
            http.get(base + path).raise_for_status()
            took = time.monotonic() - asked
    finally:
        server.should_exit = True
        thread.join(10)
    if left:
        broken.append(f"{left} abandoned searches still queued or running after 3 s")
    if took > 2.5:
        broken.append(f"another client's advice took {took:.1f} s")
    print(f"abandoned: {requests} advice requests of the strong search closed at once (the person's turn "
          f"{view['turn']}); queued or running 3 s later: {left}; another client's advice: {took:.2f} s")
    return broken


def hogs(requests: int) -> int:
    broken = slots() + abandoned(requests)
    for line in broken:
        print("BROKEN: " + line)
    return 1 if broken else 0
