"""The web app's stores of games and of loaded replays: random ids, a cap, a client's share, an idle expiry.

Why a share: with the cap alone one client (an address) could open every
slot and lock everyone else out until its items expire an hour later. A
refusal, of the client's share or of the whole store, carries
``Retry-After``: the seconds until the soonest of the items in the way
expires.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from fastapi import HTTPException

from cardlab.serve.searchpool import retry_seconds


class Entry(NamedTuple):
    """An item of a store: when it was last used, the item, the client that made it, and the search time
    a round of its play costs the search workers (ms, 0 for none)."""

    used: float
    item: Any
    client: str = ""
    search_ms: float = 0.0


class Store:
    """Games (or replays) by random id, at most `cap` at once and `per_client` of one client, forgotten
    after `idle` seconds unused (`idle_of(item)`, when given, says how long for each item)."""

    def __init__(self, cap: int, idle: float, noun: str, clock: Callable[[], float] = time.monotonic,
                 idle_of: Callable[[Any], float] | None = None, per_client: int | None = None) -> None:
        per_client = cap if per_client is None else per_client
        if not 1 <= per_client <= cap:
            raise ValueError(f"{noun}s per client {per_client}: give 1 to the cap, {cap}")
        self.cap, self.per_client, self.idle, self.noun, self.clock = cap, per_client, idle, noun, clock
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
        """Store `item` for `client`; its key. A 429 with ``Retry-After`` when the client has its share
        open, or the store its cap."""
        with self.lock:
            self.purge()
            if len(self.items) >= self.cap:
                raise self._full(list(self.items.values()),
                                 f"too many {self.noun}s open ({self.cap}): finish or delete one, or wait "
                                 "until idle ones expire")
            mine = [entry for entry in self.items.values() if entry.client == client]
            if len(mine) >= self.per_client:
                share = f"at most {self.per_client} per client"
                raise self._full(mine, f"you have {len(mine)} {self.noun}s open ({share}): finish or delete "
                                       "one, or wait until an idle one expires")
            key = secrets.token_urlsafe(16)
            self.items[key] = Entry(self.clock(), item, client, search_ms)
            return key

    def _full(self, blocking: list[Entry], message: str) -> HTTPException:
        """A 429 whose ``Retry-After`` is the time until the soonest of `blocking` expires."""
        wait = retry_seconds(min(self.expires_in(entry) for entry in blocking))
        return HTTPException(429, f"{message}; try again in {wait} s", headers={"Retry-After": str(wait)})

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
