"""Retention at work (`app.core.sessions.retention`): the store's sweep at start and every
`policy.every` seconds, in a worker thread; and the discard of a compaction the proxy
never put in, its record first, so that a failure between the two leaves an archive
without a record, which the sweep takes, never a record naming a missing archive."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import datetime

from anyio import to_thread

from app.core.errors import ArchiveError, RecordStoreError
from app.core.ports import ArchiveStore
from app.core.sessions import RetentionPolicy, RetentionSweeper, SweepCounts, Withdraws
from app.service.clock import utc_now

log = logging.getLogger("context_compact.retention")


class Retention:
    def __init__(
        self,
        sweeper: RetentionSweeper,
        policy: RetentionPolicy,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.sweeper = sweeper
        self.policy = policy
        self._clock = clock
        self._stop = threading.Event()

    def sweep(self) -> SweepCounts:
        """One sweep now; raises what the store raises."""
        before, orphans_before = self.policy.cutoffs(self._clock())
        counts = self.sweeper.sweep(before, orphans_before, self._stop.is_set)
        if counts != SweepCounts():
            log.info(
                "retention sweep",
                extra={
                    "archives": counts.archives,
                    "records": counts.records,
                    "orphans": counts.orphans,
                    "proxy_sessions": counts.proxy_sessions,
                },
            )
        return counts

    def stop(self) -> None:
        """Ends the sweep running in its thread early (a cancelled task waits for its
        thread): the service's stop need not wait for a long first sweep."""
        self._stop.set()

    async def run(self) -> None:
        """Sweeps now and then every `policy.every` seconds (`0`: now only), until
        cancelled; a failing sweep is logged and tried again next time."""
        while True:
            try:
                await to_thread.run_sync(self.sweep)
            except Exception:
                log.exception("retention sweep failed")
            if self.policy.every <= 0:
                return
            await asyncio.sleep(self.policy.every)


class Discarder:
    """`Discards` over the archive store and the records."""

    def __init__(self, archive: ArchiveStore, records: Withdraws) -> None:
        self._archive = archive
        self._records = records

    def discard(self, session_id: str, archive_id: str) -> None:
        try:
            self._records.withdraw(session_id, archive_id)
            self._archive.delete(archive_id)
        except (RecordStoreError, ArchiveError) as exc:
            log.warning(
                "unused compaction not discarded",
                extra={"archive_id": archive_id, "error": str(exc)},
            )
