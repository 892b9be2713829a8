"""A slow client holds no connection for long: bodies and headers have deadlines, on the real server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from cardlab.serve import limits
from cardlab.serve.app import Settings, create_app

from .helpers import running

DEADLINE = 1.0


@pytest.fixture
def port(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """`cardlab serve`'s uvicorn server on a free loopback port, with 1-second deadlines."""
    monkeypatch.setattr(limits, "HEADER_SECONDS", DEADLINE)
    with running(create_app(Settings(body_seconds=DEADLINE))) as port:
        yield port


def trickle(port: int, head: bytes, drip: bytes, seconds: float = 6.0) -> tuple[bytes, float]:
    """Send `head`, then a byte of `drip` every 0.2 s until an answer begins; (the answer, seconds until it
    closed)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(0.2)
        conn.sendall(head)
        answer = b""
        for byte in drip[: int(seconds / 0.2)]:
            try:
                conn.sendall(bytes([byte]))
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
                break
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
        return answer + drain(conn), time.monotonic() - start


def drain(conn: socket.socket) -> bytes:
    """The rest of an answer that began to arrive: a response's head and body may come in two reads."""
    rest = b""
    conn.settimeout(1.0)
    try:
        while chunk := conn.recv(65536):
            rest += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return rest


def test_a_body_sent_a_byte_at_a_time_gets_408_and_the_connection_closes(port: int) -> None:
    head = (b"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n")
    answer, took = trickle(port, head, b" " * 100)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"took more than 1 s to arrive" in answer
    assert took < DEADLINE + 2.5


def test_headers_sent_a_byte_at_a_time_close_the_connection(port: int) -> None:
    answer, took = trickle(port, b"GET / HTTP/1.1\r\n", b"X-Slow: " + b"a" * 100)
    assert answer == b"" and took < DEADLINE + 2.5


def test_many_slow_clients_are_all_let_go(port: int) -> None:
    """30 connections trickling a body at once: every one is closed near the deadline, not after a minute."""
    head = (b"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n")
    took: list[float] = []
    threads = [threading.Thread(target=lambda: took.append(trickle(port, head, b" " * 100)[1]))
               for _ in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(took) == 30 and max(took) < DEADLINE + 3.5, sorted(took)
