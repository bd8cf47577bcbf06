"""What a client is configured with, besides its connection: the address and token (given, or
from the environment), the timeouts (one for `/compact`, which may wait on an LLM, one for
every other call) and the retry policy.

Retries: an answer of 429 or 503 (the server's `busy`, `queue_full`: refused before any work
was done, so sending again is safe) is sent again up to `max_retries` times. The wait is the
answer's `Retry-After` (seconds or an HTTP date) when it has one, else an exponential backoff
(`backoff`, doubling, at most `max_backoff`). A `Retry-After` longer than `max_retry_after`
is not waited for: the error is raised at once, carrying `retry_after`, for the caller to
decide. Nothing else is retried: a timeout may have done the work, a 4xx will not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

ENV_URL = "COMPACT_URL"
ENV_TOKEN = "COMPACT_API_TOKEN"
DEFAULT_BASE_URL = "http://127.0.0.1:8080"
# Every call but `/compact`: counting, deciding, reading archives and jobs.
DEFAULT_TIMEOUT = 30.0
# `/compact` may summarize with an LLM for the server's whole retry deadline (120 s).
COMPACT_TIMEOUT = 180.0
RETRIED_STATUSES = frozenset({429, 503})


def base_url_from(given: str | None, environ: Mapping[str, str]) -> str:
    """The address given, else `COMPACT_URL`, else the local default."""
    return given or environ.get(ENV_URL) or DEFAULT_BASE_URL


def token_from(given: str | None, environ: Mapping[str, str]) -> str | None:
    """The token given, else `COMPACT_API_TOKEN` (the server's own variable), else none."""
    return given if given is not None else environ.get(ENV_TOKEN) or None


@dataclass(frozen=True)
class Options:
    """Timeouts and the retry policy (module docstring)."""

    timeout: float = DEFAULT_TIMEOUT
    compact_timeout: float = COMPACT_TIMEOUT
    max_retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 30.0

    def timeout_for(self, slow: bool) -> float:
        return self.compact_timeout if slow else self.timeout

    def wait_before_retry(self, retry: int, response: httpx.Response) -> float | None:
        """Seconds to wait before retry number `retry` (from 1) of this answer, or None:
        not retried."""
        if response.status_code not in RETRIED_STATUSES or retry > self.max_retries:
            return None
        asked = retry_after_seconds(response.headers.get("retry-after"))
        if asked is not None:
            return asked if asked <= self.max_retry_after else None
        return min(self.max_backoff, self.backoff * 2.0 ** (retry - 1))


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """A `Retry-After` header in seconds: a number, or an HTTP date from `now`."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = float((when - (now or datetime.now(UTC))).total_seconds())
    return max(0.0, seconds)
