"""Retention on PostgreSQL (`app.core.sessions.retention`): an archive's age is its `stored_at`,
a record's its own `stored_at` (migration 5), a proxy session's its `updated_at`
(migration 6).

Each batch of at most `BATCH` rows is one short transaction (its rows locked with
`SKIP LOCKED`, so replicas sweeping at once share the work): an archive's postings are
deleted with it (they have no foreign key), its numbered recall rows and messages go by
cascade. An archive is an orphan when no record of its session names it
(`compact_records_archive` answers that from an index).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from app.adapters.pg_database import Database
from app.adapters.pg_watchdog import Conn
from app.core.sessions import Stopped, SweepCounts, never

BATCH = 500
_Batch = Callable[[Conn], int]  # deletes up to a batch on the connection; how many

_OLD_ARCHIVES = (
    "SELECT id FROM compact_archives WHERE stored_at < %(before)s"
    " ORDER BY stored_at LIMIT %(batch)s FOR UPDATE SKIP LOCKED"
)
_ORPHANS = (
    "SELECT a.id FROM compact_archives a"
    " WHERE a.session_id IS NOT NULL AND a.stored_at < %(before)s"
    " AND NOT EXISTS (SELECT 1 FROM compact_records r"
    "   WHERE r.session_id = a.session_id AND r.record->>'archive_id' = a.id)"
    " ORDER BY a.stored_at LIMIT %(batch)s FOR UPDATE OF a SKIP LOCKED"
)


class PgRetention:
    """`RetentionSweeper` on the database."""

    def __init__(self, database: Database, batch: int = BATCH) -> None:
        self._db = database
        self._batch = batch
        self._stopped: Stopped = never

    def sweep(
        self, before: datetime | None, orphans_before: datetime, stopped: Stopped = never
    ) -> SweepCounts:
        """Raises `psycopg.Error`; what was deleted before it stays deleted."""
        self._stopped = stopped
        archives = records = sessions = 0
        n = self._batch
        if before is not None:
            archives = self._until_done(lambda conn: _archives(conn, _OLD_ARCHIVES, before, n))
            records = self._until_done(lambda conn: _records(conn, before, n))
            sessions = self._until_done(lambda conn: _proxy_sessions(conn, before, n))
        orphans = self._until_done(lambda conn: _archives(conn, _ORPHANS, orphans_before, n))
        return SweepCounts(archives, records, orphans, sessions)

    def _until_done(self, batch: _Batch) -> int:
        total = 0
        while not self._stopped():
            with self._db.connection() as conn:
                deleted = batch(conn)
            total += deleted
            if deleted < self._batch:
                break
        return total


def _archives(conn: Conn, select: str, before: datetime, batch: int) -> int:
    ids = [row[0] for row in conn.execute(select, {"before": before, "batch": batch}).fetchall()]
    if ids:
        conn.execute(
            "DELETE FROM compact_recall_postings p USING compact_recall_archives a"
            " WHERE a.archive_id = ANY(%s) AND p.session_no = a.session_no"
            " AND p.archive_no = a.no",
            (ids,),
        )
        conn.execute("DELETE FROM compact_archives WHERE id = ANY(%s)", (ids,))
    return len(ids)


def _records(conn: Conn, before: datetime, batch: int) -> int:
    return conn.execute(
        "DELETE FROM compact_records WHERE ctid IN (SELECT ctid FROM compact_records"
        " WHERE stored_at < %s LIMIT %s FOR UPDATE SKIP LOCKED)",
        (before, batch),
    ).rowcount


def _proxy_sessions(conn: Conn, before: datetime, batch: int) -> int:
    """The proxy's shared sessions (migration 6) last written before `before`: a session
    that comes back after it starts anew, as on a replica that never saw it."""
    return conn.execute(
        "DELETE FROM compact_proxy_sessions WHERE session_id IN (SELECT session_id"
        " FROM compact_proxy_sessions WHERE updated_at < %s LIMIT %s FOR UPDATE SKIP LOCKED)",
        (before, batch),
    ).rowcount
