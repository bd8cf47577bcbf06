"""The PostgreSQL stores behind the file stores' ports: what they keep, what they refuse."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.adapters.pg_database import Database
from app.adapters.pg_stores import PgArchiveStore, PgJobStore, PgRecordStore, PgSeenStore
from app.core.errors import ArchiveError
from app.core.ports import Archive, ArchiveRef
from app.core.recall.search import RecallHit
from app.core.recall.terms import parse_query
from app.core.sessions.jobs import JobTakenOverError
from app.core.sessions.records import CompactionRecord


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.close()


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def archive(archive_id: str, session_id: str | None) -> Archive:
    messages = [{"role": "user", "content": "é \u2028 ünïcode", "n": 1.0}]
    return Archive(
        ref=ArchiveRef(id=archive_id, session_id=session_id, message_count=1, sha256="abc"),
        created_at="2026-11-25T00:00:00+00:00",
        messages=messages,
    )


def test_an_archive_comes_back_byte_for_byte_and_is_kept_once(database: Database) -> None:
    store = PgArchiveStore(database)
    session = unique("s")
    first, second = archive("0001-" + session, session), archive("0002-" + session, session)
    store.save(second)
    store.save(first)
    assert store.load(first.ref.id) == first
    assert store.load(second.ref.id) == second
    assert store.load(unique("missing")) is None
    with pytest.raises(ArchiveError, match="already exists"):
        store.save(first)


def test_a_refused_compactions_archive_is_deleted_and_a_second_delete_is_harmless(
    database: Database,
) -> None:
    store = PgArchiveStore(database)
    session = unique("s")
    kept, refused = archive("0001-" + session, session), archive("0002-" + session, session)
    store.save(kept)
    store.save(refused)
    store.delete(refused.ref.id)
    store.delete(refused.ref.id)
    assert store.load(refused.ref.id) is None
    assert store.load(kept.ref.id) == kept
    with pytest.raises(ArchiveError, match="invalid archive id"):
        store.delete("../x")


def test_recall_searches_only_the_sessions_own_archives(database: Database) -> None:
    store = PgArchiveStore(database)
    mine, other = unique("s"), unique("s")

    def saved(archive_id: str, session_id: str, text: str) -> None:
        messages = [{"role": "user", "content": text}]
        ref = ArchiveRef(id=archive_id, session_id=session_id, message_count=1, sha256="abc")
        store.save(Archive(ref=ref, created_at="2026-11-25T00:00:00+00:00", messages=messages))

    saved("0001-" + mine, mine, "the migration failed with E999 IndentationError")
    saved("0002-" + mine, mine, "nothing to see here")
    saved("0003-" + other, other, "IndentationError in another session")
    hits = find(store, mine, "IndentationError")
    assert [(h.archive_id, h.message_index, h.role) for h in hits] == [("0001-" + mine, 0, "user")]
    assert "IndentationError" in hits[0].snippet
    assert find(store, unique("s"), "IndentationError") == []
    assert find(store, "../x", "IndentationError") == []


def find(store: PgArchiveStore, session_id: str, query: str) -> list[RecallHit]:
    return store.search(session_id, parse_query(query), 10, lambda: 60.0).hits


def test_a_corrupted_archive_is_refused_not_returned(database: Database) -> None:
    store = PgArchiveStore(database)
    saved = archive(unique("a"), None)
    store.save(saved)
    with database.connection() as conn:
        conn.execute(
            "UPDATE compact_archives SET body = overlay(body placing 'X'::bytea from 20)"
            " WHERE id = %s",
            (saved.ref.id,),
        )
    with pytest.raises(ArchiveError, match="checksum mismatch"):
        store.load(saved.ref.id)


def test_records_are_kept_in_order_and_seen_times_replaced(database: Database) -> None:
    records, seen = PgRecordStore(database), PgSeenStore(database)
    session = unique("s")
    made = [
        CompactionRecord(
            id=f"r{i}",
            session_id=session,
            timestamp=f"2026-11-25T00:00:0{i}+00:00",
            outcome="compacted",
            strategy="full",
            reason="manual",
            message_count_before=10,
            message_count_after=3,
            tokens_before=1000,
            tokens_after=100,
            compacted_message_ids=["m1"],
        )
        for i in (2, 1)
    ]
    for record in made:
        records.append(record)
    assert [r.id for r in records.list(session)] == ["r1", "r2"]
    assert seen.last_seen(session, "src/a.py") is None
    seen.remember(session, "src/a.py", 5)
    seen.remember(session, "src/a.py", 7)
    assert seen.last_seen(session, "src/a.py") == 7


def job(job_id: str, session: str, owner: str, state: str = "queued") -> dict[str, Any]:
    now = datetime(2026, 11, 25, tzinfo=UTC)
    return {
        "id": job_id,
        "session_id": session,
        "state": state,
        "format": "anthropic",
        "created_at": now.isoformat(),
        "finished_at": None,
        "sent_count": 1,
        "sent_sha256": "x",
        "sent_hashes": ["x"],
        "owner": owner,
        "heartbeat_at": now.isoformat(),
    }


def test_one_job_in_flight_per_session_is_the_database_s_rule(database: Database) -> None:
    store = PgJobStore(database)
    session = unique("s")
    first, second = unique("j"), unique("j")
    assert store.create(job(first, session, "A"), {"messages": []}) is None
    assert store.create(job(second, session, "B"), {"messages": []}) == first
    assert store.load(second) is None
    store.save({**job(first, session, "A"), "state": "done"})
    assert store.create(job(second, session, "B"), {"messages": []}) is None


def test_an_abandoned_job_is_claimed_once_and_its_old_owner_s_writes_refused(
    database: Database,
) -> None:
    store = PgJobStore(database)
    session = unique("s")
    job_id = unique("j")
    store.create(job(job_id, session, "A", "running"), {"messages": ["m"]})
    later = datetime(2026, 11, 25, tzinfo=UTC) + timedelta(minutes=1)
    claimed = store.take_over("B", later, later - timedelta(seconds=30), 10, job_id)
    assert [(j["id"], j["owner"], j["state"], r) for j, r in claimed] == [
        (job_id, "B", "queued", {"messages": ["m"]})
    ]
    assert store.take_over("C", later, later - timedelta(seconds=30), 10, job_id) == []
    with pytest.raises(JobTakenOverError):
        store.save(job(job_id, session, "A", "running"))
    store.save({**job(job_id, session, "B", "done")})
    assert store.load(job_id)["state"] == "done"  # type: ignore[index]
