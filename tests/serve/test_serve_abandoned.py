"""Searches whose asker has gone: dropped from the search workers' queue when still
waiting, stopped when running (`cardlab.agents.stopping`), so abandoned advice requests do not slow
another client's advice."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from cardlab.agents.agent_spec import make_search_agent
from cardlab.agents.stopping import stop_asked, stoppable
from cardlab.envs import switch_v1
from cardlab.serve.app import Settings, create_app
from cardlab.serve.searchpool import Abandoned, SearchPool
from cardlab.serve.server import Server

from .helpers import person_step, running


def test_a_cancelled_search_is_dropped_from_the_queue_and_a_running_one_is_asked_to_stop() -> None:
    pool = SearchPool(workers=1)
    seen: list[str] = []

    def running() -> str:
        while not stop_asked():  # a search's play-outs check this where they check their deadline
            time.sleep(0.01)
        return "stopped"

    first = pool.submit("gone", running)
    assert first.started.wait(5)
    queued = pool.submit("gone", lambda: seen.append("queued ran"))
    pool.cancel(queued)
    assert queued.done.is_set() and pool.waiting() == 0
    with pytest.raises(Abandoned):
        queued.outcome()
    pool.cancel(first)
    assert first.done.wait(2) and first.outcome() == "stopped"
    assert pool.run("next", lambda: "ran")[0] == "ran" and seen == []  # the dropped one never ran
    pool.close()


def test_a_search_asked_to_stop_ends_long_before_its_time_cap() -> None:
    """A search of 16384 worlds at Switch 4p (about 14 s on one core) asked to stop after 0.3 s returns
    within seconds, with the worlds it had finished."""
    env = switch_v1.env(num_players=4)
    env.reset(seed=5)
    observation = env.observe(env.agent_selection)
    while int(np.asarray(observation["action_mask"]).sum()) < 2:
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        observation = env.observe(env.agent_selection)
    agent = make_search_agent("search:worlds=16384:ms=60000:expert", env.unwrapped.game, seed=0)
    took = []
    for _ in range(2):  # the first compiles (however long that takes) and plays a wave; the second is timed
        asked = threading.Event()
        threading.Timer(0.3, asked.set).start()
        started = time.monotonic()
        with stoppable(asked):
            action = agent.act(observation)
        took.append(time.monotonic() - started)
    assert took[1] < 5, took
    assert observation["action_mask"][action]
    assert agent.last_decision is not None and agent.last_decision.worlds < 16384


@pytest.fixture
def served() -> Iterator[tuple[int, Server]]:
    """A real server (one search worker) on a free loopback port, and its state."""
    app = create_app(Settings(search_workers=1))
    with running(app) as port:
        yield port, app.state.server


def test_advice_requests_closed_at_once_leave_the_workers_free(served: tuple[int, Server]) -> None:
    """Six strong-search advice requests (1 s each) sent and closed at once: within 3 s nothing of them is
    queued or running, and another client's advice is answered in about its own search's time."""
    port, server = served
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(timeout=600) as http:  # the first advice compiles the search
        key, step = person_step(base, http)
        path = f"/api/replays/{key}/{step}?advisor=search-strong"
        assert "advice" in http.get(base + path).json()  # compiled and warm
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
        for conn in conns:
            conn.sendall(request)
        time.sleep(0.3)
        for conn in conns:
            conn.close()
        deadline = time.monotonic() + 3
        while (server.pool.waiting() or server.pool.running) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.pool.waiting() == 0 and server.pool.running == 0
        started = time.monotonic()
        assert "advice" in http.get(base + path).json()
        assert time.monotonic() - started < 2.5


def test_the_hog_probe_runs_and_finds_no_broken_rule(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`attack_probes.py hogs`: one address stops at its share with Retry-After, another still gets in, and
    advice requests closed at once leave nothing queued (a probe of docs/web.md's limits)."""
    from tests.benchmarks import load_benchmark

    probes = load_benchmark("attack_probes", monkeypatch)
    assert probes.main(["hogs", "--abandoned", "4"]) == 0
    out = capsys.readouterr().out
    assert "one address opened 10 games and 4 replays, then 429" in out and "BROKEN" not in out
    assert "queued or running 3 s later: 0" in out
