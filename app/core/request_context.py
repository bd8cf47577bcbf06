"""What the request being served carries down to code far below the API: its id, for every
log line written while serving it, and its deadline, for calls that could block.

Context variables: each request runs in its own context (worker threads get a copy), so
concurrent requests never see each other's values. Set by the API's middlewares (and a
background job's runner for the deadline); None outside a request.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)

# The moment (on the `time.monotonic` clock) by which a blocking call made for the current
# request or job must be over, so it fails in time for the answer to name the failure.
DEADLINE: ContextVar[float | None] = ContextVar("deadline", default=None)


def time_left() -> float | None:
    """Seconds before `DEADLINE` (0 once it has passed); None outside a request or job. An
    outbound call takes at most this long, whatever its own bound allows."""
    deadline = DEADLINE.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def answer_reserve(seconds: float) -> float:
    """The part of a deadline of `seconds` kept for answering after a blocking call failed:
    a fifth, at most one second."""
    return min(seconds / 5, 1.0)


@contextmanager
def deadline_at(moment: float) -> Iterator[None]:
    """Sets `DEADLINE` to `moment` inside the block, or keeps an earlier one already set."""
    outer = DEADLINE.get()
    token = DEADLINE.set(moment if outer is None else min(outer, moment))
    try:
        yield
    finally:
        DEADLINE.reset(token)
