"""What a request may cost the server: its body (size, time to arrive), its JSON, the words echoed back.

- `BodyLimit` (ASGI middleware): a body over the cap gets 413 before it is
  read whole, and one that takes more than `BODY_SECONDS` to arrive gets 408
  and the connection is closed;
- `TimedH11`: uvicorn's HTTP/1.1 protocol with a deadline for a request's
  headers too (`HEADER_SECONDS`), so a client sending a byte now and then
  holds no connection for long; idle kept-alive connections close after
  `KEEP_ALIVE_SECONDS`;
- `json_body`, `model_body`: the body through the one checked JSON reader,
  then a request model;
- `validation_message`: a refused body as one line, every echoed name cut
  to `MAX_ECHO` characters.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar

import uvicorn
from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from cardlab.envs.checked_json import read_json

BODY_SECONDS = 10.0
"""the time a request body may take to arrive whole"""
HEADER_SECONDS = 10.0
"""the time a request's headers may take to arrive, from the connection or the end of the last answer"""
KEEP_ALIVE_SECONDS = 5
"""an idle kept-alive connection is closed after this long"""
MAX_ECHO = 40
"""the longest name (a key, a field) an error message repeats whole"""


def uvicorn_server(app: ASGIApp, host: str, port: int) -> uvicorn.Server:
    """The uvicorn server of `cardlab serve`, with this module's timeouts (tests start it too)."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", http=TimedH11,
                            timeout_keep_alive=KEEP_ALIVE_SECONDS)
    return uvicorn.Server(config)


class TimedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request headers take over `HEADER_SECONDS`.

    uvicorn times out idle kept-alive connections, but not a request whose
    headers come a byte at a time; the timer is set when the connection opens
    and after each answer, and closes the connection if no new request has
    begun by then (the body has its own deadline, in `BodyLimit`).
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._time_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._time_headers()

    def _time_headers(self) -> None:
        waiting_after = self.cycle  # the request answered last (None: none yet)
        self.loop.call_later(HEADER_SECONDS, self._headers_late, waiting_after)

    def _headers_late(self, waiting_after: object) -> None:
        if self.cycle is waiting_after and not self.transport.is_closing():
            self.transport.close()


M = TypeVar("M", bound=BaseModel)


async def json_body(request: Request) -> Any:
    """The request body through the one checked JSON reader: too deep, huge numbers or bad JSON are a 400."""
    try:
        return read_json(await request.body(), "it")
    except ValueError as err:
        raise HTTPException(400, f"malformed JSON in the request body: {err}") from None


async def model_body(request: Request, model: type[M]) -> M:
    """`json_body`, then the model's checks (a 422 through the app's `RequestValidationError` handler)."""
    data = await json_body(request)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise RequestValidationError(err.errors()) from None


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 before the app reads it whole, and one
    that takes more than `seconds` to arrive gets 408 (a slow client holds no connection for long)."""

    def __init__(self, app: ASGIApp, limit: int, seconds: float = BODY_SECONDS) -> None:
        self.app, self.limit, self.seconds = app, limit, seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await _refuse(send, 413, f"request body too large: at most {self.limit} bytes")
            return
        seen = 0
        started = arrived = False
        deadline = asyncio.get_running_loop().time() + self.seconds

        async def counted() -> Message:
            nonlocal seen, arrived
            if arrived:  # the body is whole: later reads wait for the client's disconnect, untimed
                return await receive()
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(left, 0.0))
            except TimeoutError:
                raise _TooSlow from None
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            arrived = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await _refuse(send, 413, f"request body too large: at most {self.limit} bytes")
        except _TooSlow:
            if not started:
                await _refuse(send, 408, f"the request body took more than {self.seconds:g} s to arrive: "
                                         "send it whole at once")


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _TooSlow(Exception):
    pass


class _TooLarge(Exception):
    pass


def cut(text: str, limit: int = MAX_ECHO) -> str:
    """`text`, or its first `limit` characters and how many more there were."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def validation_message(err: RequestValidationError) -> tuple[int, str]:
    """(status, one readable line) of a request that does not fit its model."""
    errors = err.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return 400, "malformed JSON in the request body"
    parts = []
    for e in errors[:5]:  # every echoed name cut (a key may be half a megabyte long)
        where = ".".join(cut(str(x)) for x in e.get("loc", ()) if x != "body")
        parts.append(f"{where or 'body'}: {cut(str(e.get('msg', 'invalid')), 200)}")
    return 422, "bad request: " + "; ".join(parts)


