"""The routes of games (``/api/games...``): a new table, its view, moves, next hand, advice, positions,
replays.

Calls that may wait for the agents (a new table's first moves, a move, the
next hand, a search's advice) run on the server's waiting threads
(`Server.off_loop`), a search on its search workers; views and deletes are
quick and never wait for a move (`Table.view`).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from cardlab.envs.declared import check_that
from cardlab.envs.game_spec import get_spec, make_game
from cardlab.serve.catalogue import AgentChoice
from cardlab.serve.limits import model_body
from cardlab.serve.server import Server, checked, client_of
from cardlab.serve.table import Player, Table

MAX_SEED = 2**63 - 1
router = APIRouter()


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


def server_of(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def build(server: Server, body: NewGame, client: str) -> tuple[Table, float]:
    """The table a `NewGame` asks for (its agents built, nothing played) and its seats' search cost in ms."""
    rules = dict(body.rules)
    if body.num_players is not None:  # the table size given twice must agree: neither silently wins
        check_that(rules.get("num_players", body.num_players) == body.num_players, "rules.num_players",
                   rules.get("num_players"), f"not the request's num_players={body.num_players}",
                   "the table size once, as num_players (or rules.num_players equal to it)")
        rules["num_players"] = body.num_players
    game = make_game(get_spec(body.game), rules)
    n = game.num_players
    if body.seat >= n:
        raise ValueError(f"seat {body.seat} is not at a {n}-player table: choose 0 to {n - 1}")
    if len(body.opponents) != n - 1:
        raise ValueError(f"give {n - 1} opponents (one per other seat, in seat order), "
                         f"got {len(body.opponents)}")
    names = iter(body.opponents)
    choices: list[AgentChoice | None] = [
        None if seat == body.seat else server.catalogue.choose(next(names), game, body.mode)
        for seat in range(n)]
    players = [Player("you") if c is None else Player(c.name, c.spec, c.about) for c in choices]
    table = Table(game, body.seat, players, body.mode, body.seed, server.settings.agent_seconds,
                  mover=server.mover(client))
    return table, sum(c.search_ms for c in choices if c is not None)


@router.post("/api/games")
async def new_game(request: Request) -> dict[str, Any]:
    server, client = server_of(request), client_of(request)
    body = await model_body(request, NewGame)
    table, search_ms = await server.off_loop(lambda: build(server, body, client))
    key = server.add_table(table, client, search_ms)  # or a 429/503 before the table plays
    return {"id": key, "frames": await server.off_loop(table.start)}


@router.get("/api/games/{key}")
def get_game(key: str, request: Request) -> dict[str, Any]:
    table: Table = server_of(request).store.get(key)
    return table.view()


@router.delete("/api/games/{key}", status_code=204)
def delete_game(key: str, request: Request) -> Response:
    server_of(request).store.delete(key)
    return Response(status_code=204)


@router.post("/api/games/{key}/move")
async def move(key: str, request: Request) -> dict[str, Any]:
    server = server_of(request)
    table: Table = server.store.get(key)
    body = await model_body(request, Move)
    return {"frames": await server.off_loop(lambda: table.move(body.move, body.turn))}


@router.post("/api/games/{key}/next")
async def next_hand(key: str, request: Request) -> dict[str, Any]:
    server = server_of(request)
    table: Table = server.store.get(key)
    return {"frames": await server.off_loop(table.next_hand)}


@router.get("/api/games/{key}/advice")
async def advice(key: str, request: Request, advisor: str = Query(max_length=80),
                 top: int = Query(3, ge=1, le=10)) -> dict[str, Any]:
    server = server_of(request)
    entry = server.store.entry(key)
    table: Table = entry.item
    choice = checked(lambda: server.catalogue.choose(advisor, table.game, table.mode))

    def ask() -> tuple[int, list[Any]]:
        return table.advice(choice.spec, top, choice.name)

    if not choice.search_ms:
        turn, moves = await server.off_loop(ask)
    else:
        if choice.spec not in table.advisors.agents:
            server.check_memory(1)
        turn, moves = await server.searched(request, ask)
    return {"advisor": advisor, "turn": turn, "moves": [m._asdict() for m in moves]}


@router.get("/api/games/{key}/position")
def position(key: str, request: Request) -> JSONResponse:
    table: Table = server_of(request).store.get(key)
    data = checked(table.position)
    return download(data, f"{table.game.id}-position-turn{data['turn']}.json")


@router.get("/api/games/{key}/hands/{number}/replay")
def replay(key: str, number: int, request: Request) -> JSONResponse:
    table: Table = server_of(request).store.get(key)
    data = checked(lambda: table.replay(number))
    return download(data, f"{table.game.id}-hand{number}-replay.json")


def download(data: Any, filename: str) -> JSONResponse:
    return JSONResponse(data, headers={"content-disposition": f'attachment; filename="{filename}"'})
