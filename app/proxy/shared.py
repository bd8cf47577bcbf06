"""A proxied session kept in step with the store that replicas share (`app.core.proxy.stored`).

Before a request is planned the session is read again when the store holds a later write
(one small query: nothing comes back when this replica's copy is current); after it, what
judges the next request is written back, with the head when the request put one in. The
writes run beside the forwarded request, one session's in order, so none is on its path.
The store failing is logged and the request planned from memory, as without a store.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from app.core.proxy import Head, MemorySessionStore, ProxySessionStore, SessionState
from app.proxy.exchange import Exchange
from app.proxy.session import Session

__all__ = ["ProxySessionStore", "Session", "Shared", "in_step"]

log = logging.getLogger("context_compact.proxy")

# Seconds between two log lines about the store failing (one per request would flood).
LOG_EVERY = 60.0


P = ParamSpec("P")
T = TypeVar("T")


class _Sharing(Protocol):
    shared: Shared

    def _session(self, session_id: str) -> Session: ...


S = TypeVar("S", bound=_Sharing)


def in_step(
    method: Callable[Concatenate[S, Exchange, P], Awaitable[T]],
) -> Callable[Concatenate[S, Exchange, P], Awaitable[T]]:
    """A compactor's method on a request (`Exchange`), run with the request's session
    brought up to the store's copy first and written back after (`Shared.around`)."""

    @functools.wraps(method)
    async def planned(self: S, ex: Exchange, /, *args: P.args, **kwargs: P.kwargs) -> T:
        async with self.shared.around(ex.session_id, self._session(ex.session_id)):
            return await method(self, ex, *args, **kwargs)

    return planned


class Shared:
    def __init__(self, store: ProxySessionStore | None, max_sessions: int) -> None:
        self.store: ProxySessionStore = store or MemorySessionStore(max_sessions)
        self._writes: dict[str, asyncio.Task[None]] = {}
        self._logged_at = -LOG_EVERY

    @asynccontextmanager
    async def around(self, session_id: str, session: Session) -> AsyncIterator[None]:
        """`session` brought up to the store's copy; written back after the block (not
        when it raised: the request then goes as it came)."""
        await self.load(session_id, session)
        head = session.head
        yield
        self.save(session_id, session, session.head if session.head is not head else None)

    async def load(self, session_id: str, session: Session) -> None:
        """`session` replaced by the store's copy when another replica wrote it since. Not
        asked while this replica's write of it is under way (normally long done): it would
        read its own write back, or wait on a database that stalls."""
        if session_id in self._writes:
            return  # this replica's own write is the latest it knows, still under way
        try:
            stored = await self.store.load(session_id, session.version, session.head_version)
        except Exception as exc:
            self._failed("read", exc)
            return
        if stored is None:
            return
        session.version = stored.version
        state = stored.state
        session.ratio, session.made = state.ratio, state.made
        session.quiet_below, session.pace = state.quiet_below, replace(state.pace)
        if stored.head_version != session.head_version:
            session.head, session.head_version = stored.head, stored.head_version
            session.drop_older()

    def save(self, session_id: str, session: Session, head: Head | None = None) -> None:
        """Writes `session` (and `head`, just put in) in the background, after its previous
        write."""
        pace = replace(session.pace)
        state = SessionState(session.ratio, session.made, session.quiet_below, pace)
        previous = self._writes.get(session_id)

        async def write() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            try:
                version = await self.store.save(session_id, state, head)
            except Exception as exc:
                self._failed("write", exc)
                return
            session.version = version
            if head is not None:
                session.head_version = version

        task = asyncio.create_task(write())
        self._writes[session_id] = task

        def done(task: asyncio.Task[None]) -> None:
            if self._writes.get(session_id) is task:
                del self._writes[session_id]

        task.add_done_callback(done)

    async def aclose(self, wait: float) -> None:
        """Lets the writes in flight finish for up to `wait` seconds: a restart then finds
        the heads put in last."""
        tasks = set(self._writes.values())
        if tasks:
            await asyncio.wait(tasks, timeout=wait)
        for task in tasks:
            task.cancel()

    def _failed(self, what: str, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY:
            self._logged_at = now
            log.warning(
                "proxy session store %s failed; the proxy goes on from memory",
                what,
                extra={"error": f"{type(exc).__name__}: {exc}"[:300]},
            )
