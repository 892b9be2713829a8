"""The web app's stores of games and of loaded replays: random ids, a cap, an idle expiry."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from fastapi import HTTPException


class Entry(NamedTuple):
    """An item of a store: when it was last used, the item, the client that made it, and the search time
    a round of its play costs the search workers (ms, 0 for none)."""

    used: float
    item: Any
    client: str = ""
    search_ms: float = 0.0


class Store:
    """Games (or replays) by random id, at most `cap` at once, forgotten after `idle` seconds unused
    (`idle_of(item)`, when given, says how long for each item)."""

    def __init__(self, cap: int, idle: float, noun: str, clock: Callable[[], float] = time.monotonic,
                 idle_of: Callable[[Any], float] | None = None) -> None:
        self.cap, self.idle, self.noun, self.clock = cap, idle, noun, clock
        self.idle_of = idle_of
        self.items: dict[str, Entry] = {}
        self.lock = threading.RLock()
        """requests run on several threads (a slow bot does not hold up the other games)"""

    def expires_in(self, entry: Entry) -> float:
        """Seconds until `entry` expires if unused."""
        idle = self.idle if self.idle_of is None else self.idle_of(entry.item)
        return idle - (self.clock() - entry.used)

    def purge(self) -> None:
        with self.lock:
            for key in [k for k, entry in self.items.items() if self.expires_in(entry) < 0]:
                del self.items[key]

    def entries(self) -> list[Entry]:
        """The items kept now (expired ones forgotten first)."""
        with self.lock:
            self.purge()
            return list(self.items.values())

    def add(self, item: Any, client: str = "", search_ms: float = 0.0) -> str:
        with self.lock:
            self.purge()
            if len(self.items) >= self.cap:
                raise HTTPException(429, f"too many {self.noun}s open ({self.cap}): finish or delete one, "
                                         "or wait until idle ones expire")
            key = secrets.token_urlsafe(16)
            self.items[key] = Entry(self.clock(), item, client, search_ms)
            return key

    def get(self, key: str) -> Any:
        with self.lock:
            return self.entry(key).item

    def entry(self, key: str) -> Entry:
        """The entry of `key`, now marked used (a 404 if it is not here)."""
        with self.lock:
            self.purge()
            found = self.items.get(key)
            if found is None:
                raise HTTPException(404, f"unknown {self.noun} id {key[:40]!r}: it may have expired")
            self.items[key] = found._replace(used=self.clock())
            return self.items[key]

    def delete(self, key: str) -> None:
        """Forget `key` (a 404 if it is not here)."""
        with self.lock:
            self.entry(key)
            del self.items[key]
