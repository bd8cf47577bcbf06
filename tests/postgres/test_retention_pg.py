"""Retention on PostgreSQL: archives with their recall rows and records older than the
retention go; an archive no record names goes once older than the grace; the rest stays,
and recall still finds it. Each test has its own database: a sweep sees every row."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from app.adapters.pg_database import Database
from app.adapters.pg_retention import PgRetention
from app.adapters.pg_stores import PgArchiveStore, PgRecordStore
from app.core.ports import Archive, ArchiveRef
from app.core.recall.terms import parse_query
from app.core.sessions.records import CompactionRecord
from app.core.sessions.retention import RetentionPolicy, SweepCounts
from app.service.retention import Discarder, Retention

NOW = datetime.now(UTC)
POLICY = RetentionPolicy(keep=timedelta(days=30), grace=timedelta(seconds=420))
OLD = NOW - timedelta(days=31)
LATE = NOW - timedelta(seconds=421)


@pytest.fixture
def database(empty_database_url: str) -> Iterator[Database]:
    db = Database(empty_database_url)
    yield db
    db.close()


class Data:
    def __init__(self, database: Database) -> None:
        self.db = database
        self.archives = PgArchiveStore(database, POLICY.grace)
        self.records = PgRecordStore(database)

    def archive(self, archive_id: str, session: str | None, text: str, when: datetime) -> None:
        messages: list[dict[str, object]] = [{"role": "user", "content": text}]
        ref = ArchiveRef(id=archive_id, session_id=session, message_count=1, sha256="x")
        self.archives.save(Archive(ref=ref, created_at=when.isoformat(), messages=messages))
        self._age("compact_archives", "id", archive_id, when)

    def record(self, record_id: str, session: str, archive_id: str | None, when: datetime) -> None:
        self.records.append(
            CompactionRecord(
                id=record_id,
                session_id=session,
                timestamp=when.isoformat(),
                reason="llm_call",
                strategy="full",
                outcome="compacted",
                message_count_before=4,
                message_count_after=2,
                tokens_before=900,
                tokens_after=300,
                compacted_message_ids=[],
                archive_id=archive_id,
            )
        )
        self._age("compact_records", "id", record_id, when)

    def _age(self, table: str, column: str, key: str, when: datetime) -> None:
        with self.db.connection() as conn:
            conn.execute(f"UPDATE {table} SET stored_at = %s WHERE {column} = %s", (when, key))

    def found(self, session: str, query: str) -> list[str]:
        result = self.archives.search(session, parse_query(query), 10, lambda: 60.0)
        return [hit.archive_id for hit in result.hits]

    def rows(self, table: str) -> int:
        with self.db.connection() as conn:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert row is not None
        return int(row[0])


def sweep(database: Database, policy: RetentionPolicy = POLICY, batch: int = 500) -> SweepCounts:
    return Retention(PgRetention(database, batch), policy, clock=lambda: NOW).sweep()


def test_archives_their_recall_rows_and_records_older_than_the_retention_go(
    database: Database,
) -> None:
    data = Data(database)
    data.archive("a1", "s-1", "the old deploy key", OLD)
    data.record("r1", "s-1", "a1", OLD)
    data.archive("a2", "s-1", "the new deploy key", NOW)
    data.record("r2", "s-1", "a2", NOW)
    data.archive("a3", None, "no session", OLD)
    data.record("r3", "s-2", None, OLD)
    assert data.found("s-1", "deploy key") == ["a2", "a1"]
    assert data.rows("compact_recall_postings") > 0

    assert sweep(database, batch=1) == SweepCounts(archives=2, records=2, orphans=0)

    assert data.found("s-1", "deploy key") == ["a2"]
    assert data.archives.load("a1") is None
    assert data.archives.load("a3") is None
    assert data.archives.load("a2") is not None
    assert [r.id for r in data.records.list("s-1")] == ["r2"]
    assert data.records.list("s-2") == []
    assert data.rows("compact_recall_archives") == 1
    assert data.rows("compact_recall_messages") == 1
    with database.connection() as conn:
        left = conn.execute("SELECT DISTINCT archive_no FROM compact_recall_postings").fetchall()
        numbered = conn.execute("SELECT no FROM compact_recall_archives").fetchall()
    assert left == numbered
    assert sweep(database) == SweepCounts()


def test_an_archive_no_record_names_goes_after_the_grace(database: Database) -> None:
    data = Data(database)
    data.archive("a1", "s-1", "crashed compaction", LATE)
    data.archive("a2", "s-1", "running compaction", NOW)
    data.archive("a3", "s-1", "recorded compaction", LATE)
    data.record("r3", "s-1", "a3", LATE)
    data.archive("a4", None, "compaction without session", LATE)
    data.archive("a5", "s-2", "named by another session's record", LATE)
    data.record("r5", "s-1", "a5", LATE)
    # Recall leaves the leftover out before any sweep; the running one is found (first:
    # its message is the shorter).
    assert data.found("s-1", "compaction") == ["a2", "a3"]

    assert sweep(database) == SweepCounts(archives=0, records=0, orphans=2)

    assert [data.archives.load(a) is not None for a in ("a1", "a2", "a3", "a4", "a5")] == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert data.found("s-1", "compaction") == ["a2", "a3"]


def test_a_retention_of_zero_keeps_everything_but_the_leftovers(database: Database) -> None:
    data = Data(database)
    data.archive("a1", "s-1", "ancient", NOW - timedelta(days=900))
    data.record("r1", "s-1", "a1", OLD)
    data.archive("a2", "s-1", "crashed", OLD)
    forever = RetentionPolicy(keep=timedelta(0), grace=timedelta(seconds=420))
    assert sweep(database, forever) == SweepCounts(archives=0, records=0, orphans=1)
    assert data.archives.load("a1") is not None
    assert [r.id for r in data.records.list("s-1")] == ["r1"]


def test_a_discarded_compaction_leaves_no_archive_recall_rows_or_record(
    database: Database,
) -> None:
    data = Data(database)
    data.archive("a1", "s-1", "standby summary", NOW)
    data.record("r1", "s-1", "a1", NOW)
    data.archive("a2", "s-1", "kept summary", NOW)
    data.record("r2", "s-1", "a2", NOW)
    Discarder(data.archives, data.records).discard("s-1", "a1")
    assert data.archives.load("a1") is None
    assert [r.id for r in data.records.list("s-1")] == ["r2"]
    assert data.found("s-1", "summary") == ["a2"]
    assert data.rows("compact_recall_archives") == 1


def test_a_stopped_sweep_ends_before_the_next_batch(database: Database) -> None:
    data = Data(database)
    data.archive("a1", "s-1", "old", OLD)
    data.record("r1", "s-1", "a1", OLD)
    retention = Retention(PgRetention(database), POLICY, clock=lambda: NOW)
    retention.stop()
    assert retention.sweep() == SweepCounts()
    assert data.archives.load("a1") is not None


def test_the_proxy_s_sessions_unused_within_the_retention_go(database: Database) -> None:
    data = Data(database)
    with database.connection() as conn:
        for session, when in (("proxy-old", OLD), ("proxy-new", NOW)):
            conn.execute(
                "INSERT INTO compact_proxy_sessions (session_id, version, state, updated_at)"
                " VALUES (%s, 1, '{}'::jsonb, %s)",
                (session, when),
            )

    assert sweep(database, batch=1) == SweepCounts(proxy_sessions=1)

    with database.connection() as conn:
        left = conn.execute("SELECT session_id FROM compact_proxy_sessions").fetchall()
    assert left == [("proxy-new",)]
    assert data.rows("compact_proxy_sessions") == 1
    forever = RetentionPolicy(keep=timedelta(0), grace=POLICY.grace)
    assert sweep(database, forever) == SweepCounts()
