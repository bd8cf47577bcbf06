"""Recall over a session's archives: bounded in time, in concurrency, off the event loop.

At most `slots` recalls run at once, each on a worker thread of their own limiter (so
recalls never take the threads that `/count` and `/compact` use); one that finds no slot
free within `wait` seconds gets `RecallBusyError` (503 `busy`). A running recall has
`deadline` seconds: the store checks the time left as it goes and stops with
`RecallDeadlineError` (504), so a late recall does not go on working for nobody. The query
is cut to its first `MAX_QUERY_TERMS` terms; the others are answered as dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from anyio import to_thread

from app.core.errors import CompactError
from app.core.ports import ArchiveStore
from app.core.recall import RecallHit, parse_query


class RecallBusyError(CompactError):
    """Every recall slot stayed taken: 503 with a retry hint."""

    status = 503
    code = "busy"
    retry_after_seconds = 1

    def __init__(self, limit: int, waited: float) -> None:
        super().__init__(f"all {limit} recall slots are busy (waited {waited:g} s); retry shortly")


@dataclass(frozen=True)
class RecallAnswer:
    hits: list[RecallHit]
    dropped_terms: tuple[str, ...]  # the query's terms past the cap, not searched
    complete: bool  # false when archives not indexed yet were left out


class Recaller:
    def __init__(
        self,
        store: ArchiveStore,
        *,
        slots: int,
        wait: float,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._slots = slots
        self._wait = wait
        self._deadline = deadline
        self._clock = clock
        self._semaphore = anyio.Semaphore(slots)
        self._threads = anyio.CapacityLimiter(slots)

    async def recall(
        self, session_id: str, query: str, limit: int, due: float | None = None
    ) -> RecallAnswer:
        """Raises `RecallBusyError`, `RecallDeadlineError` or `ArchiveError`. `due` (on
        `clock`) is the request's own deadline, when earlier than `deadline` from now: an
        upload's time counts too."""
        ends_at = self._clock() + self._deadline
        if due is not None:
            ends_at = min(ends_at, due)
        parsed = parse_query(query)
        await self._acquire()
        try:
            result = await to_thread.run_sync(
                self._store.search,
                session_id,
                parsed,
                limit,
                lambda: ends_at - self._clock(),
                limiter=self._threads,
            )
        finally:
            self._semaphore.release()
        return RecallAnswer(result.hits, parsed.dropped, result.complete)

    async def _acquire(self) -> None:
        try:
            self._semaphore.acquire_nowait()
            return
        except anyio.WouldBlock:
            pass
        with anyio.move_on_after(self._wait):
            await self._semaphore.acquire()
            return
        raise RecallBusyError(self._slots, self._wait)
