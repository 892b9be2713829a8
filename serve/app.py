"""The web app of `cardlab serve`: a table to play the bots in a browser, hints, replays.

The HTTP API (JSON in and out; every error is a 4xx with ``{"detail": message}``
and leaves the game as it was) is listed in docs/web.md; its routes are in
`cardlab.serve.routes_games` and `cardlab.serve.routes_pages`.

Safety: views come from `cardlab.serve.view.seat_view` only (no hidden card
is ever sent); agents and advisors are named from a fixed list (the built-in
ones, the shipped bots, and the bot files given on the server's command line,
by name), so no request names a path; bodies are capped; games and loaded
replays live in two stores (so loading replays never locks out new games),
each with random ids, a cap and an idle expiry. Searches (a search seat's
move, a search's advice) run on a few search workers, each client in turn
(`cardlab.serve.searchpool`); a table with search seats is admitted before it
plays, or refused with a 429 or 503 and ``Retry-After``
(`cardlab.serve.server.Server.admit`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
import sys
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from cardlab.agents.bot import BOT_FILES, RUN_BOT, bot_paths, load_bot
from cardlab.agents.bot_catalogue import shipped_bots
from cardlab.envs.declared import missing_file
from cardlab.envs.game_spec import games
from cardlab.serve import routes_games, routes_pages
from cardlab.serve.guard import SiteGuard, allowed_hosts, public_host_warning
from cardlab.serve.limits import BodyLimit, uvicorn_server, validation_message
from cardlab.serve.server import Server, Settings

__all__ = ["Settings", "create_app", "named_bots", "serve"]


def named_bots(paths: list[pathlib.Path]) -> dict[str, pathlib.Path]:
    """``bot:NAME`` for each bot file given on the command line.

    NAME is the file name without suffix, or for a run's ``bot.json`` (or
    the run folder) the run folder's name: every run's file is ``bot.json``.
    """
    out: dict[str, pathlib.Path] = {}
    for path in paths:
        meta_path = bot_paths(path)[0].resolve()
        if not meta_path.is_file():
            raise missing_file("bot", meta_path, BOT_FILES)
        load_bot(meta_path)  # every check of load_bot now, so a bad file stops the start-up with one line
        stem = meta_path.stem
        name = f"bot:{meta_path.parent.name if stem == RUN_BOT and meta_path.parent.name else stem}"
        if name in out or name in shipped_bots():
            raise ValueError(f"two bots are named {name}: rename one of the files")
        if name[4:] in games():
            raise ValueError(f"bot {path}: {name} names the shipped bot of a table's size: rename the file")
        out[name] = meta_path
    return out


def create_app(settings: Settings | None = None) -> FastAPI:
    """The web app; every game lives in this app's `Server` (``app.state.server``).

    The handlers that may wait for agents run on threads apart from the
    quick ones (`Server.off_loop`), searches on the search workers; each
    `Table` takes its own lock (a second move of one game while one is
    applied is refused, and so is a read of it: a view answers the last one
    made).
    """
    settings = settings or Settings()
    if settings.game is not None and settings.game not in games():
        raise ValueError(f"unknown game {settings.game!r} to open the page on: use {', '.join(games())}")
    server = Server(settings)
    if settings.opponent is not None:
        server.catalogue.check_name(settings.opponent, "the default opponent (--opponent)")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        server.pool.close()

    app = FastAPI(title="cardlab", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.server = server
    app.state.store, app.state.replays = server.store, server.replays
    app.state.catalogue, app.state.settings = server.catalogue, settings
    app.add_middleware(BodyLimit, limit=settings.max_body, seconds=settings.body_seconds)
    app.add_middleware(SiteGuard, hosts=settings.hosts)
    app.add_exception_handler(RequestValidationError, bad_request)  # type: ignore[arg-type]
    app.include_router(routes_pages.router)
    app.include_router(routes_games.router)
    return app


async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
    status, message = validation_message(err)
    return JSONResponse({"detail": message}, status_code=status)


def serve(host: str, port: int, settings: Settings) -> None:
    """Run the app with uvicorn until interrupted."""
    app = create_app(dataclasses.replace(settings, hosts=allowed_hosts(host)))  # its checks before any output
    warning = public_host_warning(host)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    print(f"cardlab serve: open http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    app.state.server.warm_up()  # the searches' compiled code, before a table's search needs it
    uvicorn_server(app, host, port).run()
