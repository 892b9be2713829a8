"""The web app of `cardlab serve`: a table to play the bots in a browser, hints, replays.

The HTTP API (JSON in and out; every error is a 4xx with ``{"detail": message}``
and leaves the game as it was):

- ``GET /``: the page (``/static/app.js``, ``/static/style.css``);
- ``GET /api/options``: games, rule options, the agents that may sit at a table or advise, and
  ``table_bots`` (game -> table size -> its shipped bot, the page's default opponent there);
- ``POST /api/games``: a new game, ``{game, num_players, seat, opponents, rules, mode, seed?}``
  -> ``{id, frames}`` (a view after each move, the agents' first moves included; an opponent
  ``bot:GAME`` is the shipped bot of the table's size);
- ``GET /api/games/{id}``: the person's view of the table;
- ``POST /api/games/{id}/move``: ``{move: "play 9S", turn}`` -> ``{frames}`` (``turn``, the view's turn
  number the move was chosen at, is required: a move sent twice is played once);
- ``POST /api/games/{id}/next``: deal the next hand -> ``{frames}``;
- ``GET /api/games/{id}/advice?advisor=NAME&top=3``: the advisor's likeliest moves, with probabilities;
- ``GET /api/games/{id}/position``: the position for ``cardlab advise --state`` (on the person's turn);
- ``GET /api/games/{id}/hands/{n}/replay``: the replay of finished hand n, as a JSON file;
- ``DELETE /api/games/{id}``: forget a game;
- ``POST /api/replays``: load a replay -> ``{id, steps, ...}``;
- ``DELETE /api/replays/{id}``: forget a loaded replay;
- ``GET /api/replays/{id}/{step}?advisor=NAME``: the view after `step` moves, with advice on the
  person's turns.

Safety: views come from `cardlab.serve.view.seat_view` only (no hidden card
is ever sent); agents and advisors are named from a fixed list (the built-in
ones, the shipped bots, and the bot files given on the server's command line,
by name), so no request names a path; bodies are capped; games and loaded
replays live in two stores (so loading replays never locks out new games),
each with random ids, a cap and an idle expiry.
"""

from __future__ import annotations

import dataclasses
import pathlib
import secrets
import sys
import threading
import time
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from cardlab.agents.base import shipped_bots
from cardlab.agents.bot import RUN_BOT, bot_paths, load_bot
from cardlab.agents.failure import AgentFailure
from cardlab.envs.spec import games, get_spec, make_game
from cardlab.serve.catalogue import Catalogue
from cardlab.serve.guard import LOOPBACK_NAMES, SiteGuard, allowed_hosts, public_host_warning, without_paths
from cardlab.serve.limits import (
    BODY_SECONDS,
    BodyLimit,
    json_body,
    model_body,
    uvicorn_server,
    validation_message,
)
from cardlab.serve.table import AGENT_SECONDS, MODES, Player, Replay, Table
from cardlab.serve.view import rule_fields

STATIC = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
"""The page's files, served by these fixed names only."""
MAX_SEED = 2**63 - 1


@dataclasses.dataclass(frozen=True)
class Settings:
    """Limits and bots of one server (`cardlab serve` options)."""

    max_games: int = 100
    """games kept at once"""
    max_replays: int = 20
    """loaded replays kept at once (a store of their own: loading replays never locks out new games)"""
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
    """the time an agent may take for a move before its seat falls back (`cardlab.serve.table.FALLBACK`)"""


def named_bots(paths: list[pathlib.Path]) -> dict[str, pathlib.Path]:
    """``bot:NAME`` for each bot file given on the command line.

    NAME is the file name without suffix, or for a run's ``bot.json`` (or
    the run folder) the run folder's name: every run's file is ``bot.json``.
    """
    out: dict[str, pathlib.Path] = {}
    for path in paths:
        meta_path = bot_paths(path)[0].resolve()
        if not meta_path.is_file():
            raise ValueError(f"bot {path}: file not found")
        load_bot(meta_path)  # every check of load_bot now, so a bad file stops the start-up with one line
        stem = meta_path.stem
        name = f"bot:{meta_path.parent.name if stem == RUN_BOT and meta_path.parent.name else stem}"
        if name in out or name in shipped_bots():
            raise ValueError(f"two bots are named {name}: rename one of the files")
        if name[4:] in games():
            raise ValueError(f"bot {path}: {name} names the shipped bot of a table's size: rename the file")
        out[name] = meta_path
    return out


# ---------------------------------------------------------------- the store
class Store:
    """Games (or replays) by random id, at most `cap` at once, forgotten after `idle` seconds unused."""

    def __init__(self, cap: int, idle: float, noun: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.cap, self.idle, self.noun, self.clock = cap, idle, noun, clock
        self.items: dict[str, tuple[float, Any]] = {}
        self.lock = threading.RLock()
        """requests run on several threads (a slow bot does not hold up the other games)"""

    def purge(self) -> None:
        with self.lock:
            now = self.clock()
            for key in [k for k, (used, _) in self.items.items() if now - used > self.idle]:
                del self.items[key]

    def add(self, item: Any) -> str:
        with self.lock:
            return self._add(item)

    def _add(self, item: Any) -> str:
        self.purge()
        if len(self.items) >= self.cap:
            raise HTTPException(429, f"too many {self.noun}s open ({self.cap}): finish or delete one, "
                                     "or wait until idle ones expire")
        key = secrets.token_urlsafe(16)
        self.items[key] = (self.clock(), item)
        return key

    def get(self, key: str) -> Any:
        with self.lock:
            return self._get(key)

    def _get(self, key: str) -> Any:
        self.purge()
        found = self.items.get(key)
        if found is None:
            raise HTTPException(404, f"unknown {self.noun} id {key[:40]!r}: it may have expired")
        self.items[key] = (self.clock(), found[1])
        return found[1]

    def delete(self, key: str) -> None:
        """Forget `key` (a 404 if it is not here)."""
        with self.lock:
            self._get(key)
            del self.items[key]


# ---------------------------------------------------------------- requests
class Strict(BaseModel):
    """A request body: no unknown keys, and no coercion (``true`` is not a seat, ``1.0`` not true)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class NewGame(Strict):
    game: str = Field(max_length=40)
    num_players: int | None = Field(None, ge=1, le=100)
    seat: int = Field(0, ge=0, le=100)
    opponents: list[str] = Field(max_length=100)
    rules: dict[str, bool | int | float | str] = Field(default_factory=dict, max_length=40)
    """passed as they are: the game's own checks refuse a value of the wrong type, naming the option"""
    mode: Literal["hand", "match"] = "hand"
    seed: int | None = Field(None, ge=0, le=MAX_SEED)


class Move(Strict):
    """A move and the turn it was chosen at: required, so a copy sent again after the first was played (a
    double click, a retried request) is refused as stale instead of played at the next turn."""

    move: str = Field(max_length=200)
    turn: int = Field(ge=0)



# ---------------------------------------------------------------- the app
def create_app(settings: Settings | None = None) -> FastAPI:
    """The web app; every game lives in this app's store.

    The handlers of games are plain functions, run on a thread pool, so a
    bot's slow move does not hold up the other games; each `Table` takes its
    own lock (a second move of one game while one is applied is refused). The
    handlers of loaded replays are coroutines: they run one at a time.
    """
    settings = settings or Settings()
    if settings.game is not None and settings.game not in games():
        raise ValueError(f"unknown game {settings.game!r} to open the page on: use {', '.join(games())}")
    app = FastAPI(title="cardlab", docs_url=None, redoc_url=None, openapi_url=None)
    catalogue = Catalogue(settings.bots)
    if settings.opponent is not None:
        catalogue.check_name(settings.opponent, "the default opponent (--opponent)")
    store = Store(settings.max_games, settings.idle_seconds, "game")
    replays = Store(settings.max_replays, settings.idle_seconds, "replay")
    app.state.store, app.state.replays = store, replays
    app.state.catalogue, app.state.settings = catalogue, settings
    app.add_middleware(BodyLimit, limit=settings.max_body, seconds=settings.body_seconds)
    app.add_middleware(SiteGuard, hosts=settings.hosts)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
        status, message = validation_message(err)
        return JSONResponse({"detail": message}, status_code=status)

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

    static = resources.files("cardlab.serve") / "static"

    @app.get("/", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        return HTMLResponse(static.joinpath("index.html").read_text(encoding="utf-8"))

    @app.get("/static/{name}")
    async def static_file(name: str) -> Response:
        if name not in STATIC:
            raise HTTPException(404, f"no file {name[:40]!r}")
        return Response(static.joinpath(name).read_text(encoding="utf-8"), media_type=STATIC[name])

    @app.get("/api/options")
    async def options() -> dict[str, Any]:
        out = []
        for game_id in games():
            spec = get_spec(game_id)
            out.append({"id": spec.id, "title": spec.title, "summary": spec.summary,
                        "rules": rule_fields(spec)})
        return {"games": out, "agents": [c.public() for c in catalogue.choices], "modes": list(MODES),
                "table_bots": catalogue.table_bots, "delay_ms": settings.delay_ms,
                "default": {"game": settings.game, "opponent": settings.opponent}}

    @app.post("/api/games")
    async def new_game(request: Request) -> dict[str, Any]:
        body = await model_body(request, NewGame)

        def build() -> Table:
            rules = dict(body.rules)
            if body.num_players is not None:
                rules["num_players"] = body.num_players
            game = make_game(get_spec(body.game), rules)
            n = game.num_players
            if body.seat >= n:
                raise ValueError(f"seat {body.seat} is not at a {n}-player table: choose 0 to {n - 1}")
            if len(body.opponents) != n - 1:
                raise ValueError(f"give {n - 1} opponents (one per other seat, in seat order), "
                                 f"got {len(body.opponents)}")
            names = iter(body.opponents)
            players = []
            for seat in range(n):
                choice = None if seat == body.seat else catalogue.choose(next(names), game)
                players.append(Player("you", None) if choice is None else Player(choice.name, choice.spec))
            return Table(game, body.seat, players, body.mode, body.seed, settings.agent_seconds)

        table = await run_in_threadpool(checked, build)  # off the event loop: a table's lock may wait
        key = store.add(table)
        return {"id": key, "frames": await run_in_threadpool(table.start)}

    @app.get("/api/games/{key}")
    def get_game(key: str) -> dict[str, Any]:
        table: Table = store.get(key)
        return table.view()

    @app.delete("/api/games/{key}", status_code=204)
    def delete_game(key: str) -> Response:
        store.delete(key)
        return Response(status_code=204)

    @app.post("/api/games/{key}/move")
    async def move(key: str, request: Request) -> dict[str, Any]:
        table: Table = store.get(key)
        body = await model_body(request, Move)
        return {"frames": await run_in_threadpool(checked, lambda: table.move(body.move, body.turn))}

    @app.post("/api/games/{key}/next")
    def next_hand(key: str) -> dict[str, Any]:
        table: Table = store.get(key)
        return {"frames": checked(table.next_hand)}

    @app.get("/api/games/{key}/advice")
    def advice(key: str, advisor: str = Query(max_length=80), top: int = Query(3, ge=1, le=10)
                     ) -> dict[str, Any]:
        table: Table = store.get(key)
        choice = checked(lambda: catalogue.choose(advisor, table.game))
        moves = checked(lambda: table.advice(choice.spec, top, choice.name))
        return {"advisor": advisor, "turn": table.hand.env.game_state.turn,
                "moves": [m._asdict() for m in moves]}

    @app.get("/api/games/{key}/position")
    def position(key: str) -> JSONResponse:
        table: Table = store.get(key)
        data = checked(table.position)
        return _download(data, f"{table.game.id}-position-turn{data['turn']}.json")

    @app.get("/api/games/{key}/hands/{number}/replay")
    def replay(key: str, number: int) -> JSONResponse:
        table: Table = store.get(key)
        data = checked(lambda: table.replay(number))
        return _download(data, f"{table.game.id}-hand{number}-replay.json")

    @app.post("/api/replays")
    async def load_replay(request: Request) -> dict[str, Any]:
        data = await json_body(request)
        loaded: Replay = checked(lambda: Replay(data))
        key = replays.add(loaded)
        return {"id": key, "game": loaded.game.id, "seat": loaded.seat, "steps": loaded.steps,
                "hand_number": loaded.hand_number}

    @app.get("/api/replays/{key}/{step}")
    async def replay_step(key: str, step: int, advisor: str | None = Query(None, max_length=80),
                          top: int = Query(3, ge=1, le=10)) -> dict[str, Any]:
        loaded: Replay = replays.get(key)
        choice = None if advisor is None else checked(lambda: catalogue.choose(advisor, loaded.game))
        return checked(lambda: loaded.frame(step, choice and choice.spec, top, choice and choice.name))

    @app.delete("/api/replays/{key}", status_code=204)
    def delete_replay(key: str) -> Response:
        replays.delete(key)
        return Response(status_code=204)

    return app


def _download(data: Any, filename: str) -> JSONResponse:
    return JSONResponse(data, headers={"content-disposition": f'attachment; filename="{filename}"'})


def serve(host: str, port: int, settings: Settings) -> None:
    """Run the app with uvicorn until interrupted."""
    app = create_app(dataclasses.replace(settings, hosts=allowed_hosts(host)))  # its checks before any output
    warning = public_host_warning(host)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    print(f"cardlab serve: open http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    uvicorn_server(app, host, port).run()
