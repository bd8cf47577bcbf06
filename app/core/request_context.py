"""The id of the request being served, for every log line written while serving it.

A context variable: each request runs in its own context (worker threads get a copy), so
concurrent requests never see each other's id. Set by the API's request middleware, read
by the log formatter; None outside a request (start-up, background jobs' own lines).
"""

from __future__ import annotations

from contextvars import ContextVar

REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)
