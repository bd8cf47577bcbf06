"""A request served only while its client stays: the work raced against `http.disconnect`.

A client that leaves (an agent's timeout, a user's Ctrl-C) ends its upstream call at once:
a non-streamed call to a reasoning model otherwise goes on generating, and billing, after
the agent gave up (50 clients leaving once held 50 upstream calls open). The receive
channel is watched from the end of the request's body through the compaction, the upstream
call, its retry and the answer's last byte. A compaction, which changes its session's
state, is not cut halfway (`Leave.held`): the work stops when it ends, before any call,
and its head is the session's for the agent's next try. It is held in the request's own
task, not one of its own, which every request on the compacting routes would pay for.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
Receive = Callable[[], Awaitable[dict[str, Any]]]


class Leave:
    """Whether the client left, and the parts of the work it does not cut."""

    def __init__(self) -> None:
        self.gone = False
        self._held = 0

    async def held(self, work: Awaitable[T]) -> T:
        """`work` done whole even if the client leaves meanwhile; then, if it did, the
        request's work cancelled."""
        self._held += 1
        try:
            result = await work
        finally:
            self._held -= 1
        if self.gone:
            raise asyncio.CancelledError
        return result


async def until_gone(receive: Receive, work: Coroutine[Any, Any, None], leave: Leave) -> None:
    """`work` run until it ends or the client leaves, whichever comes first (or, in a part
    `leave` holds, until that part ends); `work`'s own errors raised as they are.
    `receive` is only read here meanwhile."""
    serving = asyncio.ensure_future(work)
    watching = asyncio.ensure_future(_gone(receive))
    try:
        await asyncio.wait({serving, watching}, return_when=asyncio.FIRST_COMPLETED)
        if not serving.done():
            leave.gone = True
            if not leave._held:
                serving.cancel()
            await asyncio.wait({serving})
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
