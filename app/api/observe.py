"""Every request observed once: its id, its metrics, one log line.

- `X-Request-ID`: a sane incoming id (1-128 of letters, digits and `._:-`) is kept, any
  other is replaced by a new one; it is set for every log line of the request and
  returned in the response header, errors included.
- Metrics by route *template* (`/archives/{archive_id}`), so routes added later are
  labelled without listing them, and raw paths (ids, scanners' probes) never become
  series: a path no route matches is `unmatched`.
- One `request` log line with method, route, status and duration; never a body. Probes
  and scrapes log at debug, so they do not drown the rest.

Pure ASGI rather than `BaseHTTPMiddleware`: no extra task per request, and the response
is streamed through untouched. It is added last, so it is the outermost middleware and
sees the 413s and 401s of the ones inside it.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.request_context import REQUEST_ID
from app.service.metrics import Metrics

log = logging.getLogger("context_compact.http")

_HEADER = b"x-request-id"
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics"})
# Any other method is labelled `other`: clients choose methods, series must stay few.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    """The caller's `X-Request-ID` when it is sane, else a new one (32 hex digits)."""
    for name, value in headers:
        if name.lower() == _HEADER:
            text = value.decode("latin-1")
            if _VALID_ID.match(text):
                return text
            break
    return uuid.uuid4().hex


def route_template(scope: Scope) -> str:
    """The path template of the route that served (or would have served) this request.

    Routing leaves its route in the scope; a request answered before routing (413 by the
    body limit, 401 by auth) is matched here against the app's routes."""
    path = getattr(scope.get("route"), "path", None)
    if isinstance(path, str):
        return path
    router = getattr(scope.get("app"), "router", None)
    for route in _leaf_routes(getattr(router, "routes", ())):
        match, _ = route.matches(scope)
        if match is not Match.NONE:
            return str(route.path)
    return "unmatched"


def _leaf_routes(routes: Iterable[Any]) -> Iterator[Any]:
    """Routes with a path, through included routers (FastAPI wraps each in a router of
    its own; the routers here are included without a prefix)."""
    for route in routes:
        if isinstance(getattr(route, "path", None), str):
            yield route
            continue
        inner = getattr(getattr(route, "original_router", None), "routes", None)
        yield from _leaf_routes(inner if inner is not None else getattr(route, "routes", ()))


class ObserveRequests:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope.get("headers") or [])
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        status = 500  # until the response starts

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != _HEADER]
                message = {**message, "headers": [*kept, (_HEADER, request_id.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # Starlette's outer error middleware answers the 500: the id stays set for its
            # log line and its header (uvicorn serves each request in a context of its own).
            self._observe(scope, 500, started)
            raise
        self._observe(scope, status, started)
        REQUEST_ID.reset(token)

    def _observe(self, scope: Scope, status: int, started: float) -> None:
        seconds = time.perf_counter() - started
        route = route_template(scope)
        method = scope["method"] if scope["method"] in METHODS else "other"
        self.metrics.observe_request(method, route, status, seconds)
        log.log(
            logging.DEBUG if route in QUIET_ROUTES else logging.INFO,
            "request",
            extra={
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 1),
            },
        )
