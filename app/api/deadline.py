"""A deadline on every request that does work: past it, 504 `deadline_exceeded`.

The whole request runs in a cancel scope, body upload included, so a slow client and a
slow LLM are bounded alike. What is cancelled: every await (the upload, an LLM call, a
retry's sleep). What is not: a tokenizer or file read already running in a worker thread
finishes first (threads cannot be interrupted), then the request is cancelled. A database
call is bounded by the deadline too (`DEADLINE`, minus a reserve for the answer), so a
stalled database fails the call in time for the route to give its own defined answer. An
archive written before the deadline stays (nothing is lost; the caller keeps its messages).
"""

from __future__ import annotations

import logging
import time

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import error_response
from app.api.schemas import ErrorResponse
from app.core.request_context import answer_reserve, deadline_at

log = logging.getLogger("context_compact.api")

# Probes and metrics answer at once and must never be cut off or locked.
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
DEADLINE_STATE = "deadline_at"  # request.state key: time.monotonic() when the 504 is due


class RequestDeadline:
    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        # Work that runs in a thread and stops itself (recall) reads when the answer is due.
        scope.setdefault("state", {})[DEADLINE_STATE] = time.monotonic() + self.seconds
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        calls_end = time.monotonic() + self.seconds - answer_reserve(self.seconds)
        with anyio.move_on_after(self.seconds) as scope_, deadline_at(calls_end):
            await self.app(scope, receive, tracking_send)
        if not scope_.cancelled_caught:
            return
        log.warning(
            "request deadline exceeded",
            extra={"path": scope["path"], "seconds": self.seconds, "answered": started},
        )
        if started:  # too late for a status: the client sees a truncated answer
            return
        response = error_response(
            504,
            ErrorResponse(
                error="deadline_exceeded",
                message=f"the request took longer than {self.seconds:g} s",
            ),
        )
        await response(scope, receive, send)
