"""The routes of the page (``/``, ``/static/...``, ``/api/options``) and of loaded replays
(``/api/replays...``).

A replay's step runs off the event loop (`Server.off_loop`), and a search's
advice on it on the search workers: the event loop only reads requests and
writes answers.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from cardlab.envs.game_spec import games, get_spec
from cardlab.serve.hand_replay import Replay
from cardlab.serve.limits import json_body
from cardlab.serve.routes_games import server_of
from cardlab.serve.server import checked, client_of
from cardlab.serve.table import MODES
from cardlab.serve.view import rule_fields

STATIC = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
"""The page's files, served by these fixed names only."""
router = APIRouter()
static = resources.files("cardlab.serve") / "static"


@router.get("/", response_class=HTMLResponse)
async def page() -> HTMLResponse:
    return HTMLResponse(static.joinpath("index.html").read_text(encoding="utf-8"))


@router.get("/static/{name}")
async def static_file(name: str) -> Response:
    if name not in STATIC:
        raise HTTPException(404, f"no file {name[:40]!r}")
    return Response(static.joinpath(name).read_text(encoding="utf-8"), media_type=STATIC[name])


@router.get("/api/options")
async def options(request: Request) -> dict[str, Any]:
    server = server_of(request)
    out = []
    for game_id in games():
        spec = get_spec(game_id)
        out.append({"id": spec.id, "title": spec.title, "summary": spec.summary, "rules": rule_fields(spec)})
    settings, catalogue = server.settings, server.catalogue
    return {"games": out, "agents": [c.public() for c in catalogue.choices], "modes": list(MODES),
            "table_bots": catalogue.table_bots, "delay_ms": settings.delay_ms,
            "default": {"game": settings.game, "opponent": settings.opponent}}


@router.post("/api/replays")
async def load_replay(request: Request) -> dict[str, Any]:
    server = server_of(request)
    data = await json_body(request)
    loaded: Replay = await server.off_loop(lambda: Replay(data))
    key = server.replays.add(loaded, client_of(request))
    return {"id": key, "game": loaded.game.id, "seat": loaded.seat, "steps": loaded.steps,
            "hand_number": loaded.hand_number}


@router.get("/api/replays/{key}/{step}")
async def replay_step(key: str, step: int, request: Request, advisor: str | None = Query(None, max_length=80),
                      top: int = Query(3, ge=1, le=10)) -> dict[str, Any]:
    server = server_of(request)
    loaded: Replay = server.replays.get(key)
    choice = None if advisor is None else checked(lambda: server.catalogue.choose(advisor, loaded.game))

    def frame() -> dict[str, Any]:
        return loaded.frame(step, choice and choice.spec, top, choice and choice.name)

    if choice is None or not choice.search_ms:
        view: dict[str, Any] = await server.off_loop(frame)
        return view
    if choice.spec not in loaded.advisors.agents:
        server.check_memory(1)
    searched: dict[str, Any] = await server.searched(request, frame)
    return searched


@router.delete("/api/replays/{key}", status_code=204)
def delete_replay(key: str, request: Request) -> Response:
    server_of(request).replays.delete(key)
    return Response(status_code=204)
