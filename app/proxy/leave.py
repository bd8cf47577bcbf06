"""A request served only while its client stays: the work raced against `http.disconnect`.

A client that leaves (an agent's timeout, a user's Ctrl-C) ends its upstream call at once:
a non-streamed call to a reasoning model otherwise goes on generating, and billing, after
the agent gave up (50 clients leaving once held 25 upstream calls open). The receive
channel is watched from the end of the request's body through the compaction, the upstream
call, its retry and the answer's last byte. What must not stop halfway (a compaction,
which changes its session's state) runs detached: the client leaving ends the waiting for
it, not the work, whose head the agent's next try then finds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("context_compact.proxy")

T = TypeVar("T")
Receive = Callable[[], Awaitable[dict[str, Any]]]


async def until_gone(receive: Receive, work: Coroutine[Any, Any, None]) -> None:
    """`work` run until it ends or the client leaves, whichever comes first; `work`'s
    own errors raised as they are. `receive` is only read here meanwhile."""
    serving = asyncio.ensure_future(work)
    watching = asyncio.ensure_future(_gone(receive))
    try:
        await asyncio.wait({serving, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watching.cancel()
        if not serving.done():
            serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        with contextlib.suppress(asyncio.CancelledError):
            await serving


async def _gone(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class Detached:
    """Work that goes on when its waiter is cancelled, held until it ends."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return await asyncio.shield(task)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("detached work failed: %s", type(error).__name__)

    async def aclose(self, wait: float) -> None:
        """Lets the work finish for up to `wait` seconds, then cancels the rest."""
        tasks = set(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=wait)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
