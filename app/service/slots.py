"""A bound on compactions that summarize at once, so a burst never queues without end.

`/compact` callers wait at most `wait` seconds for a slot, then get `BusyError` (the API
answers 503 `busy` with `Retry-After`): an agent with a deadline of its own is better off
retrying than hanging. Background jobs wait as long as it takes: their own worker pool
already bounds them, and with fewer workers than slots they can never take every slot
from the synchronous callers.

A slot is held from writing the archive to the end of the summary, so a refused request
has written nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from app.core.errors import CompactError


class BusyError(CompactError):
    """Every summary slot stayed busy: 503 with a retry hint, nothing written."""

    status = 503
    code = "busy"
    retry_after_seconds = 2

    def __init__(self, limit: int, waited: float) -> None:
        super().__init__(f"all {limit} summary slots are busy (waited {waited:g} s); retry shortly")
        self.limit = limit


class SummarySlots:
    def __init__(self, limit: int, wait: float) -> None:
        if limit < 1:
            raise ValueError("at least one summary slot is needed")
        self.limit = limit
        self.wait = wait
        self._semaphore = anyio.Semaphore(limit)

    @property
    def in_use(self) -> int:
        return self.limit - self._semaphore.value

    @asynccontextmanager
    async def hold(self, *, background: bool = False) -> AsyncIterator[None]:
        """Holds a slot for the block; raises `BusyError` (foreground only) when none frees
        within `wait`."""
        if background:
            await self._semaphore.acquire()
        else:
            await self._acquire_within(self.wait)
        try:
            yield
        finally:
            self._semaphore.release()

    async def _acquire_within(self, seconds: float) -> None:
        try:
            self._semaphore.acquire_nowait()
            return
        except anyio.WouldBlock:
            pass
        acquired = False
        with anyio.move_on_after(seconds):
            await self._semaphore.acquire()
            acquired = True
        if not acquired:
            raise BusyError(self.limit, seconds)
