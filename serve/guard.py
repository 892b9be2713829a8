"""The web app against other sites: which requests it answers, the headers it sends, what errors show.

The app listens on 127.0.0.1 by default, which any web page the person
opens may also send requests to. So (in `SiteGuard`, an ASGI middleware):

- a request whose ``Host`` header is not exactly a name of the bound
  address, with an optional port, is refused (a DNS-rebinding page reaches
  127.0.0.1 under its own name; ``evil.example@127.0.0.1`` is no name);
- a request whose ``Origin`` header is not exactly this server's
  (``http://`` plus its Host) is refused (a page's cross-site POST carries
  its origin, and another scheme is another site);
- a request body must be ``application/json`` (a ``text/plain`` POST is a
  CORS "simple request" that any page may send without asking);
- a request with two ``Host``, ``Origin`` or ``Content-Type`` headers is
  refused (which one a check reads and which one the app reads may differ);
- every answer says ``X-Content-Type-Options: nosniff``,
  ``X-Frame-Options: DENY`` and a ``Content-Security-Policy`` that allows the
  page's own files only.

`without_paths` keeps the server's file paths out of error messages.
"""

from __future__ import annotations

import ipaddress
import json
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""the names a browser on this machine uses for a loopback address"""
ANY_ADDRESS = ("0.0.0.0", "::", "")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""the page's own script, style and API; data: for the empty favicon; never in a frame"""
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", CSP.encode()),
    (b"referrer-policy", b"no-referrer"),
]
BODY_METHODS = ("POST", "PUT", "PATCH")
_PATH = re.compile(r"(?<![\w.:])(?:[A-Za-z]:)?[/\\](?:[^\s'\"/\\]+[/\\])+([^\s'\"/\\:]+)")


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, brackets allowed) is this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> frozenset[str] | None:
    """The Host names to accept when listening on `host`; None (any) when it listens on every address."""
    name = host.strip("[]").lower()
    if name in ANY_ADDRESS:
        return None
    return LOOPBACK_NAMES | {name} if is_loopback(name) else frozenset({name})


def public_host_warning(host: str) -> str | None:
    """The warning `cardlab serve` prints when `host` lets other machines in (None for a loopback one)."""
    if is_loopback(host):
        return None
    return (f"warning: --host {host} is not a loopback address: anyone who can reach this machine on the "
            "network can open the page, play and load replays (there is no password); use --host 127.0.0.1 "
            "to keep it to this machine")


def without_paths(message: str) -> str:
    """`message` with every absolute file path cut to its file name: the browser is told no server path."""
    return _PATH.sub(lambda m: m.group(1), message)


_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?")
"""a Host header value: a name or an address (IPv6 in brackets), then an optional port; nothing else"""
SINGLE_HEADERS = ("host", "origin", "content-type")
"""headers a request may send once only"""


def _host_name(value: str) -> str | None:
    """The name of a ``Host`` header value without its port (``[::1]:8000`` -> ``::1``); None if malformed."""
    match = _HOST.fullmatch(value)
    return None if match is None else match.group(1).strip("[]").lower()


class SiteGuard:
    """ASGI middleware: the Host, Origin and Content-Type checks and the security headers (module doc)."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await _answer(send, *refusal)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, message) for a request from another site or with a body that is not JSON; else None."""
        pairs = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers") or []]
        names = [k for k, _ in pairs]
        twice = [name for name in SINGLE_HEADERS if names.count(name) > 1]
        if twice:
            return 400, f"the request has {names.count(twice[0])} {twice[0]} headers: send it once"
        headers = dict(pairs)
        host = headers.get("host", "")
        name = _host_name(host)
        if name is None or (self.hosts is not None and name not in self.hosts):
            allowed = "its bound address" if self.hosts is None else ", ".join(sorted(self.hosts))
            return 421, (f"this server answers to {allowed} only, not to the host {host[:60]!r}: open the "
                         "address cardlab serve printed")
        origin = headers.get("origin")
        own = f"{scope.get('scheme', 'http')}://{host}".lower()
        if origin is not None and origin.lower() != own:
            return 403, (f"requests from another site ({origin[:60]!r}) are refused: use the page this "
                         "server serves")
        has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
        if scope.get("method") in BODY_METHODS and has_body:
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return 415, (f"a request body must be JSON, sent with Content-Type: application/json, "
                             f"not {media[:60] or 'no content type'!r}")
        return None


async def _answer(send: Send, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
