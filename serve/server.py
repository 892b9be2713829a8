"""What one web app holds and decides for its routes: settings, stores, agents, search workers, admission.

A table with search seats is admitted before it starts, or refused with a
429 (this client's share is taken) or a 503 (the server's is) and a
``Retry-After``: it costs the search workers its seats' level bounds every
round of play, and each search agent holds a rollout engine (memory).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio.to_thread
import numpy as np
from anyio import CapacityLimiter
from fastapi import HTTPException, Request

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent, show_table
from cardlab.agents.failure import AgentFailure
from cardlab.agents.search import SearchAgent
from cardlab.envs import env_class
from cardlab.envs.game_spec import get_spec, make_game
from cardlab.serve.catalogue import Catalogue, at_table
from cardlab.serve.guard import LOOPBACK_NAMES, without_paths
from cardlab.serve.limits import BODY_SECONDS
from cardlab.serve.searchpool import PER_CLIENT, Abandoned, Job, SearchPool, retry_seconds
from cardlab.serve.store import Entry, Store
from cardlab.serve.table import AGENT_SECONDS, Mover, own_thread

SEARCH_AGENT_MB = 17
"""the memory one search agent holds, measured (its rollout engine, most of it): a 4-player table with
three search seats grows the server by about 50 MB"""


CLIENT_GONE = 499
"""the status of a search's answer whose client closed the connection first (as nginx logs it)"""


def default_workers() -> int:
    """One search worker per core but one (the event loop and the other requests keep a core), at least 1."""
    return max(1, (os.cpu_count() or 2) - 1)


@dataclasses.dataclass(frozen=True)
class Settings:
    """Limits and bots of one server (`cardlab serve` options)."""

    max_games: int = 100
    """games kept at once"""
    max_replays: int = 20
    """loaded replays kept at once (a store of their own: loading replays never locks out new games)"""
    games_per_client: int = 10
    """games one client (address) may have open at once: its share of `max_games`"""
    replays_per_client: int = 4
    """loaded replays one client may have open at once: its share of `max_replays`"""
    idle_seconds: float = 3600.0
    """a game or replay not used for this long is forgotten"""
    max_body: int = 512 * 1024
    """largest request body in bytes (a replay of a long hand is the biggest)"""
    bots: Mapping[str, pathlib.Path] = dataclasses.field(default_factory=dict)
    """extra bots by spec (``bot:NAME``) -> metadata file, from the command line"""
    delay_ms: int = 600
    """the page's pause between two opponents' moves"""
    game: str | None = None
    """the game the page opens on (`cardlab serve --game`); None: the first registered one"""
    opponent: str | None = None
    """the opponent the page seats when it fits the table (`--opponent`; ``bot:GAME``: the shipped bot of the
    table's size); else the table's shipped bot (`table_bots`), else the first bot that fits"""
    hosts: frozenset[str] | None = LOOPBACK_NAMES
    """the names a request's Host header may give (DNS rebinding); None: any (a non-loopback --host)"""
    body_seconds: float = BODY_SECONDS
    """the time a request body may take to arrive whole (then 408 and the connection is closed)"""
    agent_seconds: float = AGENT_SECONDS
    """the time an agent may take for a move once it runs, before its seat falls back
    (`cardlab.serve.table.FALLBACK`); a search's wait for a search worker is not counted"""
    search_workers: int = dataclasses.field(default_factory=default_workers)
    """threads that run searches (`cardlab.serve.searchpool`): one per core but one, at least 1"""
    search_round_seconds: float = 6.0
    """the most a round of play at every active search table may cost each search worker (the sum of its
    search seats' level bounds); a new search table past it is refused (503)"""
    search_active_seconds: float = 120.0
    """a search table counts in that cost until it has been unused for this long"""
    search_tables_per_client: int = 3
    """active search tables one client (address) may have; one more is refused (429)"""
    max_search_agents: int = 24
    """search agents (seats and advisors, about `SEARCH_AGENT_MB` MB each) the server holds at once; a table
    or advice needing more is refused (503)"""
    search_idle_seconds: float = 600.0
    """a game or replay holding a search agent is forgotten after this long unused (freeing its memory)"""
    search_queue_per_client: int = PER_CLIENT
    """searches one client may have waiting for a worker; one more is refused (429)"""


def client_of(request: Request) -> str:
    """The client a request counts against: its address."""
    return request.client.host if request.client is not None else "unknown"


def checked(call: Callable[[], Any]) -> Any:
    """Run a game call; its refusals become 4xx answers (the game is unchanged, no server path shown)."""
    try:
        return call()
    except AgentFailure as err:  # its public words only: the agent's own message may name its cards
        raise HTTPException(400, without_paths(err.public)) from None
    except PermissionError as err:
        raise HTTPException(409, without_paths(str(err))) from None
    except LookupError as err:
        raise HTTPException(404, without_paths(str(err))) from None
    except ValueError as err:
        raise HTTPException(400, without_paths(str(err))) from None


def busy(status: int, seconds: float, message: str) -> HTTPException:
    """A refusal for want of search capacity: 429 (the client's share) or 503 (the server's), with
    ``Retry-After`` and the time in the message."""
    wait = retry_seconds(seconds)
    return HTTPException(status, f"{message}; try again in {wait} s", headers={"Retry-After": str(wait)})


class Server:
    """The state of one app (`app.state.server`): stores, agents, search workers, admission of searches."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.catalogue = Catalogue(settings.bots)
        self.store = Store(settings.max_games, settings.idle_seconds, "game", idle_of=self.idle_of,
                           per_client=min(settings.games_per_client, settings.max_games))
        self.replays = Store(settings.max_replays, settings.idle_seconds, "replay", idle_of=self.idle_of,
                             per_client=min(settings.replays_per_client, settings.max_replays))
        self.pool = SearchPool(settings.search_workers, settings.search_queue_per_client)
        self.admission = threading.Lock()
        """held while a search table is admitted and stored (two at once could both fit the last place)"""
        self.warming: WarmUp | None = None
        """the start-up's warm-up while it runs (`warm_up`): search tables wait for its end"""
        self.waiters = CapacityLimiter(max(1, settings.max_games + settings.max_replays))
        """the threads of calls that may wait for the search workers, apart from the threads of the other
        requests (fastapi's), so that waiting searches never hold up a view"""

    def idle_of(self, item: Any) -> float:
        return self.settings.search_idle_seconds if item.searches() else self.settings.idle_seconds

    async def off_loop(self, call: Callable[[], Any]) -> Any:
        """`checked(call)` on a waiting thread (`waiters`): off the event loop, apart from quick requests."""
        return await anyio.to_thread.run_sync(checked, call, limiter=self.waiters)

    async def searched(self, request: Request, call: Callable[[], Any]) -> Any:
        """`checked(call)` run on the search workers for the request's client, awaited while the client is
        connected: one that has gone has its search dropped from the queue or stopped (`SearchPool.answer`).
        """
        job = self.pool.submit(client_of(request), lambda: checked(call))
        try:
            return await self.pool.answer(job, request.is_disconnected)
        except Abandoned as gone:  # nobody reads this answer: the status says why, for the log
            raise HTTPException(CLIENT_GONE, str(gone)) from None

    def mover(self, client: str) -> Mover:
        """How a table of `client` asks its agents: searches on the search workers, others on their own
        thread (`own_thread`)."""
        def move(agent: Agent, observation: dict[str, np.ndarray], who: str, seconds: float
                 ) -> tuple[int, float]:
            if isinstance(agent, SearchAgent):
                return self.pool.act(client, agent, observation, who, seconds)
            return own_thread(agent, observation, who, seconds)
        return move

    def search_agents(self) -> int:
        """Search agents held now, in games and replays."""
        return sum(entry.item.searches() for store in (self.store, self.replays) for entry in store.entries())

    def check_memory(self, more: int) -> None:
        """A 503 when `more` search agents would pass `max_search_agents`."""
        held, most = self.search_agents(), self.settings.max_search_agents
        if held + more <= most:
            return
        soonest = min((store.expires_in(e) for store in (self.store, self.replays) for e in store.entries()
                       if e.item.searches()), default=self.settings.search_idle_seconds)
        raise busy(503, soonest, f"the server holds its most search agents ({held} of {most}, about "
                                 f"{SEARCH_AGENT_MB} MB each): finish or delete a table with a search")

    def admit(self, client: str, search_ms: float, searches: int) -> None:
        """Refuse a new table with `searches` search seats costing `search_ms` a round, when it cannot be
        served: the client has its share of active search tables (429), or the server is at its memory or
        time bound (503). Called under `admission`, with the table stored right after."""
        if not searches:
            return
        warming = self.warming
        if warming is not None:
            raise busy(503, warming.seconds_left(), f"the server is warming up its searches (compiling their "
                                                    f"code: {warming.done} of {warming.total} ready)")
        s = self.settings
        now = self.store.clock()
        active = [e for e in self.store.entries() if e.search_ms and now - e.used < s.search_active_seconds]
        mine = [e for e in active if e.client == client]
        if len(mine) >= s.search_tables_per_client:
            raise busy(429, s.search_active_seconds - max(now - e.used for e in mine),
                       f"you have {len(mine)} tables with search opponents in play (at most "
                       f"{s.search_tables_per_client}): finish or delete one")
        self.check_memory(searches)
        load, most = sum(e.search_ms for e in active) / 1000, s.search_workers * s.search_round_seconds
        if search_ms / 1000 > most:
            raise HTTPException(400, f"the search seats of this table ask {search_ms / 1000:g} s of search a "
                                     f"round, more than this server's search workers give ({most:g} s): "
                                     "choose fewer or quicker search opponents")
        if load + search_ms / 1000 > most:
            raise busy(503, s.search_active_seconds - max(now - e.used for e in active),
                       f"the search workers are taken: the tables in play ask {load:.1f} s of search a round "
                       f"of {s.search_workers * s.search_round_seconds:g} s")
        wait = self.pool.wait_estimate()
        if wait > s.search_round_seconds:
            raise busy(503, wait, f"the search workers are {wait:.0f} s behind")

    def add_table(self, table: Any, client: str, search_ms: float) -> str:
        """Admit (`admit`) and store a new table; its key."""
        with self.admission:
            self.admit(client, search_ms, table.searches())
            return self.store.add(table, client, search_ms)

    def entry(self, key: str) -> Entry:
        return self.store.entry(key)

    def warm_up(self) -> Job:
        """Queue one decision of each offered search, first on the workers: its compiled code (minutes
        to compile on a fresh install) is then ready before a table's search runs against its time
        limit; searches asked meanwhile wait behind it, and their pages show the wait."""
        offered: list[tuple[str, str, int | None]] = [
            (c.spec, c.game, None) for c in self.catalogue.choices if c.search_ms and c.game is not None]
        offered += [(at_table(c, make_game(c.game, {"num_players": players})).spec, c.game, players)
                    for c in self.catalogue.choices if c.search_ms and c.game is not None
                    for players in sorted(get_spec(c.game).read_tables)]
        warming = self.warming = WarmUp(len(offered))

        def warm() -> list[str]:
            try:
                return [warming.count(warm_search(*one)) for one in offered]
            finally:
                self.warming = None

        return self.pool.submit(WARM_UP, warm, paced=False)


WARM_UP = "start-up"
"""the client the start-up's warm-up search is queued as"""
WARM_UP_GUESS = 3.0
"""the seconds a warm-up's decision is guessed to take before one has been timed"""


class WarmUp:
    """How far the start-up's warm-up is: its decisions done of `total`, and when it began.

    Why new search tables wait for its end rather than queue behind it: a
    decision of the warm-up may compile for a minute, so a table admitted
    meanwhile could not be promised its wait; it is refused at once with the
    time the rest should take (`seconds_left`).
    """

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.began = time.monotonic()

    def count(self, spec: str) -> str:
        """Count one more decision done; its spec."""
        self.done += 1
        return spec

    def seconds_left(self) -> float:
        """The time the decisions left should take, at the pace of those done (`WARM_UP_GUESS` before)."""
        each = (time.monotonic() - self.began) / self.done if self.done else WARM_UP_GUESS
        return each * (self.total - self.done)


def warm_search(spec: str, game_id: str, players: int | None = None) -> str:
    """Play one decision of the search `spec` on a first deal of `game_id` (default rules, `players` or the
    game's default number); its spec."""
    game = make_game(get_spec(game_id), {} if players is None else {"num_players": players})
    agent = make_agent(spec, game, seed=0)
    env = env_class(game.spec)(episode="hand", **game.rules.to_dict())
    env.reset(seed=0)
    while not agent_can_choose(env):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    show_table(agent, env, env.agent_selection)
    agent.act(env.observe(env.agent_selection))
    return spec


def agent_can_choose(env: Any) -> bool:
    """Whether the seat to move has more than one legal move (a search searches only then)."""
    return int(np.asarray(env.observe(env.agent_selection)["action_mask"]).sum()) > 1
