"""Retention: what the stores let go, and when.

Archives (with their recall entries) and compaction records are kept `keep` after they
were stored, then deleted; `keep` of zero keeps them forever. An archive of a session that
no record names is a compaction that never finished (its process was killed between the
archive and the record): once older than `grace`, the longest a compaction may take, it
is deleted too, whatever `keep` says, since nothing will ever name it. A compaction the
proxy made and never put in (`discard`) leaves neither archive nor record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol


@dataclass(frozen=True)
class SweepCounts:
    """What one sweep deleted."""

    archives: int = 0
    records: int = 0
    orphans: int = 0  # archives no record named
    proxy_sessions: int = 0  # the proxy's shared sessions no request used within the retention


@dataclass(frozen=True)
class RetentionPolicy:
    keep: timedelta  # zero: forever
    grace: timedelta  # an archive without a record is a leftover once this old
    every: float = 3600.0  # seconds between two sweeps; 0: at start only

    def cutoffs(self, now: datetime) -> tuple[datetime | None, datetime]:
        """Before when archives and records go (None: never), and before when an archive
        without a record goes."""
        before = now - self.keep if self.keep > timedelta(0) else None
        return before, now - self.grace


Stopped = Callable[[], bool]  # whether a sweep is to end now (the service stops)


def never() -> bool:
    return False


class RetentionSweeper(Protocol):
    """A store's sweep. Several replicas may sweep at once: deleting twice is fine."""

    def sweep(
        self, before: datetime | None, orphans_before: datetime, stopped: Stopped = never
    ) -> SweepCounts:
        """Deletes the archives (their recall entries with them) and records stored
        before `before` (none when it is None), and the archives of a session stored
        before `orphans_before` that no record names; returns early, with what it did,
        once `stopped()`."""
        ...


class Withdraws(Protocol):
    """Records that can be taken back: those of a compaction the proxy never put in."""

    def withdraw(self, session_id: str, archive_id: str) -> None:
        """Deletes the session's record naming `archive_id`, if any."""
        ...


class Discards(Protocol):
    """What the proxy calls with a compaction it made and never put in."""

    def discard(self, session_id: str, archive_id: str) -> None:
        """Deletes its record and its archive; never raises (a failure is logged, and
        what is left is swept with the rest)."""
        ...
