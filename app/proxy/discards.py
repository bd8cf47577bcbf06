"""The proxy's compactions that are never put in leave nothing behind.

A background head superseded by a newer one or dropped once a head covering as much went
in, a standby never needed, a compaction made at once and not sent, the heads of a
session forgotten (`max_sessions`) or left when the proxy stops: each wrote an archive
and a `compacted` record, which would be recalled and counted though the agent never saw
them. `DiscardingCompactor` follows each head made (`Session.unsettled`); when a request
of the session has been planned, and no other is being planned (one may be about to put
in a head made meanwhile), every head that is neither put in nor still kept ready is
handed to `Discards.discard` in a worker thread, the request not waiting for it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from anyio import to_thread

from app.core.proxy import Head, JsonDict
from app.core.sessions import Discards
from app.proxy.compactor import ProxyCompactor
from app.proxy.counted import Count
from app.proxy.exchange import Exchange, Planned, ProxyPolicy
from app.proxy.parts import WRITTEN
from app.proxy.session import Session
from app.proxy.shared import ProxySessionStore
from app.service.compaction import CompactionService

T = TypeVar("T")


class DiscardingCompactor(ProxyCompactor):
    def __init__(
        self,
        background: CompactionService,
        immediate: CompactionService,
        policy: ProxyPolicy | None,
        discards: Discards,
        store: ProxySessionStore | None = None,
    ) -> None:
        super().__init__(background, immediate, policy, store)
        self._discards = discards
        self._planning: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()

    async def plan(self, ex: Exchange) -> Planned:
        return await self._settling(ex.session_id, super().plan(ex))

    async def retry(self, ex: Exchange, sent: list[JsonDict], limit: int | None) -> Planned | None:
        return await self._settling(ex.session_id, super().retry(ex, sent, limit))

    async def aclose(self) -> None:
        """Once the background compactions are done, the heads still kept ready go too:
        the sessions live in this process's memory only."""
        await super().aclose()
        for session_id, session in self._sessions.items():
            self._settle(session_id, session, ())
        await self.drained()

    async def drained(self) -> None:
        """Returns once the discards begun have ended."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _session(self, session_id: str) -> Session:
        evicted = None
        if session_id not in self._sessions and len(self._sessions) >= self.policy.max_sessions:
            evicted = next(iter(self._sessions.items()), None)
        session = super()._session(session_id)
        if session.unsettled is None:
            session.unsettled = []
        if evicted is not None and evicted[0] not in self._sessions:
            self._settle(*evicted, ())
        return session

    async def _compact(
        self,
        service: CompactionService,
        ex: Exchange,
        client: list[JsonDict],
        head: Head | None,
        counted: Count | None,
        squeeze: bool = False,
        later: bool = False,
        spare: bool = False,
    ) -> Head | None:
        """A head made at once is followed from here; one made in the background from
        when it is offered (`Session.offer`), as it may finish while a request is being
        planned. One cancelled once its archive was written (a head covering as much went
        in) is let go now."""
        written: list[str] = []
        token = WRITTEN.set(written)
        try:
            made = await super()._compact(service, ex, client, head, counted, squeeze, later, spare)
        except asyncio.CancelledError:
            for archive in written:
                self._discard(ex.session_id, archive)
            raise
        finally:
            WRITTEN.reset(token)
        session = self._sessions.get(ex.session_id)
        if made is not None and not later and session is not None:
            session.unsettled = [*(session.unsettled or []), made]
        return made

    async def _settling(self, session_id: str, planning: Awaitable[T]) -> T:
        self._planning[session_id] += 1
        try:
            return await planning
        finally:
            self._planning[session_id] -= 1
            session = self._sessions.get(session_id)
            if self._planning[session_id] <= 0:
                del self._planning[session_id]
                if session is not None:
                    ready = (session.ready, session.standby, session.kept_standby)
                    self._settle(session_id, session, ready)

    def _settle(self, session_id: str, session: Session, ready: Sequence[Head | None]) -> None:
        """Lets go of the session's heads but the one put in and those in `ready`."""
        kept = []
        for head in session.unsettled or ():
            if head is session.head:
                continue  # put in: its archive is the agent's history
            if any(head is other for other in ready):
                kept.append(head)
            elif head.archive is not None:
                self._discard(session_id, head.archive)
        session.unsettled = kept

    def _discard(self, session_id: str, archive_id: str) -> None:
        task = asyncio.create_task(
            to_thread.run_sync(self._discards.discard, session_id, archive_id)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
