"""Schema migrations: from an empty database, from the previous version, and with several
replicas starting at once (the advisory lock lets exactly one apply them)."""

from __future__ import annotations

import threading

import psycopg
import pytest

from app.adapters.pg_database import (
    SCHEMA_VERSION,
    Database,
    PoolLimits,
    migrate,
    schema_version,
)


def _indexes(conn: psycopg.Connection[tuple[object, ...]], table: str) -> set[str]:
    rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", (table,))
    return {str(r[0]) for r in rows.fetchall()}


def test_an_empty_database_is_migrated_to_the_latest_version(empty_database_url: str) -> None:
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        assert schema_version(conn) == 0
        assert migrate(conn) == [1, 2, 3, 4, 5, 6]
        assert schema_version(conn) == SCHEMA_VERSION == 6
        assert "compact_archives_session" in _indexes(conn, "compact_archives")
        assert migrate(conn) == []  # a second start applies nothing


def test_version_1_is_migrated_to_2_keeping_its_rows(empty_database_url: str) -> None:
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        assert migrate(conn, upto=1) == [1]
        conn.execute(
            "INSERT INTO compact_archives (id, session_id, created_at, message_count, sha256,"
            " body, body_sha256) VALUES ('a1', 's1', 't', 1, 'x', 'b', 'y')"
        )
        assert "compact_archives_session" not in _indexes(conn, "compact_archives")
        assert migrate(conn, upto=2) == [2]
        assert "compact_archives_session" in _indexes(conn, "compact_archives")
        assert conn.execute("SELECT id FROM compact_archives").fetchall() == [("a1",)]
        versions = conn.execute("SELECT version FROM compact_schema ORDER BY 1").fetchall()
        assert versions == [(1,), (2,)]


def test_version_2_is_migrated_to_3_its_archives_waiting_for_recall_to_index_them(
    empty_database_url: str,
) -> None:
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        assert migrate(conn, upto=2) == [1, 2]
        conn.execute(
            "INSERT INTO compact_archives (id, session_id, created_at, message_count, sha256,"
            " body, body_sha256) VALUES ('a1', 's1', 't', 1, 'x', 'b', 'y')"
        )
        assert migrate(conn, upto=3) == [3]
        rows = conn.execute("SELECT id, recall_indexed FROM compact_archives").fetchall()
        assert rows == [("a1", False)]
        assert "compact_recall_words_pkey" in _indexes(conn, "compact_recall_words")


def test_version_3_is_migrated_to_4_its_archives_numbered_oldest_first_to_index_again(
    empty_database_url: str,
) -> None:
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        assert migrate(conn, upto=3) == [1, 2, 3]
        for archive_id, session_id in [("a2", "s1"), ("a1", "s1"), ("a3", "s2"), ("a4", None)]:
            conn.execute(
                "INSERT INTO compact_archives (id, session_id, created_at, message_count, sha256,"
                " body, body_sha256, recall_indexed) VALUES (%s, %s, 't', 1, 'x', 'b', 'y', true)",
                (archive_id, session_id),
            )
        assert migrate(conn, upto=4) == [4]
        numbered = conn.execute(
            "SELECT a.archive_id, s.session_id FROM compact_recall_archives a"
            " JOIN compact_recall_sessions s ON s.no = a.session_no ORDER BY a.no"
        ).fetchall()
        assert numbered == [("a1", "s1"), ("a2", "s1"), ("a3", "s2")]
        waiting = conn.execute(
            "SELECT id FROM compact_archives WHERE NOT recall_indexed ORDER BY id"
        ).fetchall()
        assert waiting == [("a1",), ("a2",), ("a3",)]  # a4 has no session: never searched
        assert _indexes(conn, "compact_recall_postings") == {"compact_recall_postings_pkey"}


def test_version_4_is_migrated_to_5_its_records_stored_when_they_were_written(
    empty_database_url: str,
) -> None:
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        assert migrate(conn, upto=4) == [1, 2, 3, 4]
        conn.execute(
            "INSERT INTO compact_records (session_id, id, record) VALUES ('s1', 'r1',"
            ' \'{"timestamp": "2026-11-01T12:00:00+00:00", "archive_id": "a1"}\')'
        )
        assert migrate(conn, upto=5) == [5]
        rows = conn.execute(
            "SELECT id, stored_at = '2026-11-01T12:00:00+00:00'::timestamptz FROM compact_records"
        ).fetchall()
        assert rows == [("r1", True)]
        assert {"compact_records_stored", "compact_records_archive"} <= _indexes(
            conn, "compact_records"
        )
        assert "compact_archives_stored" in _indexes(conn, "compact_archives")


def test_replicas_starting_together_migrate_once(empty_database_url: str) -> None:
    results: list[list[int]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def start() -> None:
        try:
            with psycopg.connect(empty_database_url, autocommit=True) as conn:
                barrier.wait()
                results.append(migrate(conn))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(results) == [[], [], [], [], [], [1, 2, 3, 4, 5, 6]]


def test_the_pool_migrates_on_first_use(empty_database_url: str) -> None:
    database = Database(empty_database_url)
    try:
        assert database.unavailable_reason() is None
        with database.connection() as conn:
            assert schema_version(conn) == SCHEMA_VERSION
    finally:
        database.close()


def test_the_statement_timeout_and_pool_size_are_the_settings(database_url: str) -> None:
    database = Database(database_url, PoolLimits(min_size=0, max_size=2, statement_timeout=0.2))
    try:
        with database.connection() as conn:
            assert conn.execute("SHOW statement_timeout").fetchone() == ("200ms",)
            with pytest.raises(psycopg.errors.QueryCanceled):
                conn.execute("SELECT pg_sleep(2)")
        assert database.pool.max_size == 2
    finally:
        database.close()
