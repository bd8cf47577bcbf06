"""A WebSocket upgrade, refused the way Codex reads as "no WebSocket here".

Codex (0.1xx) first opens a WebSocket on `/v1/responses` and falls back to HTTP for the
rest of the session at once when the handshake is answered `426 Upgrade Required`; any
other answer (a 404, a plain GET's, a dropped connection) goes through its retries and
backoff first, seconds before the first request reaches the provider (openai/codex#43353,
ranxianglei/billion-context#169). The proxy compacts HTTP bodies only, so every upgrade
is refused so, in the provider's error shape, after the proxy token's check and before
any route. Served with `ws="none"` (`app.serving`) an upgrade arrives as a plain HTTP
request with `Upgrade: websocket`; a server with a WebSocket library hands it over as a
`websocket` scope, answered with the same 426 where it allows an HTTP answer (the
`websocket.http.response` extension), else (or without the proxy token) closed before
it is accepted (a 403).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from email.utils import formatdate
from typing import Any

from app.proxy.errors import Api, error_body

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
MESSAGE = "this proxy does not serve WebSockets: send the request over HTTP"


def asks_websocket(named: Mapping[str, str]) -> bool:
    """Whether a request's headers (lower-case names) ask to upgrade to a WebSocket."""
    return "websocket" in named.get("upgrade", "").lower()


def _answer(api: Api) -> tuple[list[tuple[bytes, bytes]], bytes]:
    body = error_body(api, 426, MESSAGE)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        (b"date", formatdate(usegmt=True).encode()),
    ]
    return headers, body


async def refuse_upgrade(send: Send, api: Api) -> None:
    """An HTTP request asking for a WebSocket answered 426."""
    headers, body = _answer(api)
    await send({"type": "http.response.start", "status": 426, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def refuse_websocket(
    scope: Mapping[str, Any], receive: Receive, send: Send, allowed: bool = True
) -> None:
    """A `websocket` scope answered 426 where the server allows an HTTP answer, else (or
    when not `allowed`: without the proxy token) closed before it is accepted."""
    if (await receive())["type"] != "websocket.connect":
        return
    if not allowed or "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    headers, body = _answer("openai")
    await send({"type": "websocket.http.response.start", "status": 426, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})
