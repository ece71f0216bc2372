"""The dashboard's guard: what every request must pass before any route sees it.

The server listens on 127.0.0.1 only, and a page that any other site opens in the same
browser must not be able to drive it. So, in this order:

* **Host** must be the loopback address and port the server serves (``127.0.0.1:<port>``,
  or ``localhost:<port>``): a DNS-rebinding page reaches the server under its own host
  name and is refused (403 ``forbidden_host``).
* **The token.** Each process makes a random token; the URL printed at start carries it
  (``/?token=...``). That request trades it for a cookie (``HttpOnly``,
  ``SameSite=Strict``, path ``/``) and is redirected to ``/`` so the token leaves the
  address bar. Every other request must carry the cookie (or an ``Authorization: Bearer``
  header, for scripts; the scheme in any case): 401 ``unauthorized`` otherwise, whatever
  its Origin. Tokens are compared in constant time.
* **Origin** on a write (any method but GET and HEAD) with the token must be the server's
  own origin (403 ``forbidden_origin``); a write with no Origin at all is refused too
  unless it carries the bearer header.
* **Headers**: a strict Content-Security-Policy (scripts, styles, images and connections
  from the server itself only; no frames, no form posts elsewhere), ``no-referrer``,
  ``nosniff`` and ``DENY`` framing on every response.
"""

from __future__ import annotations

import hmac
import json
import secrets
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_SECURITY_POLICY", "COOKIE_NAME", "Guard", "new_token"]

COOKIE_NAME = "raw_dashboard"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:;"
    # mermaid writes a <style> element into each diagram it draws.
    " style-src 'self' 'unsafe-inline'; font-src 'self'; base-uri 'none'; form-action 'none';"
    " frame-ancestors 'none'"
)

_SAFE_METHODS = frozenset({"GET", "HEAD"})


def new_token() -> str:
    """A fresh random token for one server process (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; the scheme's name in any
    case (RFC 9110: auth schemes are case-insensitive)."""
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _security_headers() -> list[tuple[bytes, bytes]]:
    return [
        (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
        (b"referrer-policy", b"no-referrer"),
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"cross-origin-resource-policy", b"same-origin"),
    ]


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *_security_headers(),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware enforcing the checks of the module docstring around ``app``.

    ``port`` is the port the server listens on; it is read when a request arrives, so a
    server started with port 0 sets it once bound (:meth:`bind`)."""

    def __init__(self, app: ASGIApp, *, token: str, port: int = 0) -> None:
        self.app = app
        self.token = token
        self.port = port

    def bind(self, port: int) -> None:
        """The port the server is bound to (for a server started on port 0)."""
        self.port = port

    @property
    def origin(self) -> str:
        """The server's own origin, ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def _host_ok(self, host: str | None) -> bool:
        return host in {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def _token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # the dashboard serves no WebSocket
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = _headers(scope)
        if not self._host_ok(headers.get("host")):
            await _refuse(
                send,
                403,
                "forbidden_host",
                "this server answers only to its own loopback address and port",
            )
            return
        method = scope["method"]
        if scope["path"] == "/" and method == "GET":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = query.get("token", [None])[0]
            if given is not None:
                await self._exchange(given, send)
                return
        by_header = self._token_ok(_bearer(headers.get("authorization", "")))
        if not by_header and not self._token_ok(_cookie(headers.get("cookie", ""), COOKIE_NAME)):
            await _refuse(
                send,
                401,
                "unauthorized",
                "open the URL `raw dashboard` printed: it carries this process's token",
            )
            return
        if method not in _SAFE_METHODS and not by_header:
            origin = headers.get("origin")
            if origin != self.origin and origin != f"http://localhost:{self.port}":
                await _refuse(
                    send, 403, "forbidden_origin", "a write must come from the dashboard's own page"
                )
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [*message.get("headers", []), *_security_headers()],
                }
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _exchange(self, given: str, send: Send) -> None:
        """``/?token=...``: set the cookie and send the browser to ``/``; a wrong token
        is 401 like any other."""
        if not self._token_ok(given):
            await _refuse(send, 401, "unauthorized", "the token is not this process's token")
            return
        cookie = f"{COOKIE_NAME}={self.token}; HttpOnly; SameSite=Strict; Path=/"
        response: dict[str, Any] = {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", b"/"),
                (b"set-cookie", cookie.encode()),
                (b"cache-control", b"no-store"),
                (b"content-length", b"0"),
                *_security_headers(),
            ],
        }
        await send(response)
        await send({"type": "http.response.body", "body": b""})
