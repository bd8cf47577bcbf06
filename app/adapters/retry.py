"""The one retry loop of the service, around any `Summarizer`.

Policy:
- Only a `SummarizerError` with `retryable=True` is retried; any other error, a
  non-retryable `SummarizerError` included, propagates at once and unchanged.
- At most `attempts` calls in total. Before retry n (n = 0, 1, ...) we wait the server's
  `retry_after` if it gave one, else `base_delay * 2**n` scaled by a jitter factor in
  [0.5, 1); either way at most `max_delay`.
- `attempt_timeout` seconds bound each call as a whole (`timeout`, retryable). The
  adapters' own HTTP timeouts bound only the gap between bytes: an LLM that sends one byte
  a second would hold a call for as long as it likes.
- `deadline` seconds, counted from the first call, bound the whole loop, calls included:
  a call still running at the deadline is cancelled (`deadline`, not retryable), and a
  wait that would end past it is not started (the last error is raised instead).
- Inside a request or background job, the loop ends by its deadline too (`DEADLINE`, less
  the reserve to answer in): the call is cut there (`deadline`, not retryable) and no wait
  past it is started, so the service gives its defined answer instead of a 504.
- When the loop gives up, the last error is raised, same type, its message ending with
  how many attempts were made.

The adapters below it make one attempt each (the Anthropic SDK's retries are turned off),
so the policy is visible and tested here only.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from app.core.errors import SummarizerError
from app.core.ports import Summarizer, SummaryRequest
from app.core.request_context import time_left

_log = logging.getLogger(__name__)

# The settings a user changes when calls run out of time (named in the errors).
TIMEOUT_SETTING = "COMPACT_SUMMARY_TIMEOUT"
DEADLINE_SETTING = "COMPACT_SUMMARY_DEADLINE"
REQUEST_DEADLINE_SETTING = "COMPACT_REQUEST_TIMEOUT"
# Statuses below 500 that a later attempt may get past (timeout, conflict, rate limit).
RETRYABLE_4XX = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long (see module doc): calls in all, the backoff's base and cap,
    the whole loop's deadline and each call's bound, in seconds."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    deadline: float = 120.0
    attempt_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")


class RetryingSummarizer:
    """A `Summarizer` that retries its inner one on retryable errors (see module doc);
    `sleep`, `clock` and `jitter` are the time it waits on (tests give fake ones)."""

    def __init__(
        self,
        inner: Summarizer,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        policy = policy or RetryPolicy()
        self._inner = inner
        self._attempts = policy.attempts
        self._base_delay = policy.base_delay
        self._max_delay = policy.max_delay
        self._deadline = policy.deadline
        self._attempt_timeout = policy.attempt_timeout
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter

    @property
    def name(self) -> str:
        return self._inner.name

    async def summarize(self, request: SummaryRequest) -> str:
        left = time_left()
        by_request = left is not None and left < self._deadline
        ends_at = self._clock() + (left if left is not None and by_request else self._deadline)
        made = 0
        while True:
            made += 1
            try:
                return await self._attempt(request, ends_at, by_request)
            except SummarizerError as exc:
                if exc.reason == "deadline":
                    _note_attempts(exc, made, "")
                if not exc.retryable:
                    raise
                if made >= self._attempts:
                    _note_attempts(exc, made, "")
                    raise
                wait = self._wait_before_retry(made - 1, exc.retry_after)
                if self._clock() + wait > ends_at:
                    why = (
                        f"deadline of the request or job, {REQUEST_DEADLINE_SETTING}"
                        if by_request
                        else f"retry deadline {self._deadline:g}s"
                    )
                    _note_attempts(exc, made, f" ({why})")
                    raise
                _log.warning(
                    "summarizer %s failed (%s); attempt %d of %d in %.2fs",
                    self.name,
                    exc,
                    made + 1,
                    self._attempts,
                    wait,
                )
                await self._sleep(wait)

    @property
    def reads_prompt(self) -> bool:
        return self._inner.reads_prompt

    async def _attempt(self, request: SummaryRequest, ends_at: float, by_request: bool) -> str:
        """One call, cut off at the attempt timeout or the deadline (the summary's, or the
        request's when `by_request`), whichever comes first."""
        left = max(0.0, ends_at - self._clock())
        bound = left if self._attempt_timeout is None else min(self._attempt_timeout, left)
        try:
            with anyio.fail_after(bound):
                return await self._inner.summarize(request)
        except TimeoutError:
            if self._attempt_timeout is not None and self._attempt_timeout < left:
                raise SummarizerError(
                    f"summary attempt took longer than {bound:g}s ({TIMEOUT_SETTING})",
                    retryable=True,
                    reason="timeout",
                ) from None
            said = (
                f"summary cut at the deadline of its request or job ({REQUEST_DEADLINE_SETTING})"
                if by_request
                else f"summary deadline of {self._deadline:g}s passed ({DEADLINE_SETTING})"
            )
            raise SummarizerError(said, retryable=False, reason="deadline") from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _wait_before_retry(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            wait = retry_after
        else:
            wait = self._base_delay * 2**retry * (0.5 + self._jitter() / 2)
        return min(self._max_delay, wait)


def _note_attempts(exc: SummarizerError, made: int, why: str) -> None:
    """Appends to the error's message how many attempts were made; type and fields stay."""
    noun = "attempt" if made == 1 else "attempts"
    exc.args = (f"{exc.args[0]} after {made} {noun}{why}", *exc.args[1:])


def status_reason(status: int) -> str:
    """The failure reason of a retryable HTTP status: `rate_limited` (429) or
    `server_error` (5xx, 408, 409)."""
    return "rate_limited" if status == 429 else "server_error"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `retry-after` header; None when absent or not a number of seconds."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
