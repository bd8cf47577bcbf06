"""Recall on PostgreSQL: the word index written with each archive, searched without
reading an archive's body, bounded by the recall's deadline."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import app.adapters.pg_recall as pg_recall
from app.adapters.archive_store import FileArchiveStore, encode_archive
from app.adapters.pg_database import Conn, Database
from app.adapters.pg_stores import PgArchiveStore
from app.core.errors import RecallDeadlineError
from app.core.ports import Archive, ArchiveRef
from app.core.recall.search import RecallResult, TimeLeft
from app.core.recall.terms import Query, parse_query
from app.core.sessions.ids import new_archive_id
from tests.corpus import FILES, load


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.close()


@pytest.fixture
def store(database: Database) -> PgArchiveStore:
    return PgArchiveStore(database)


def session() -> str:
    return f"s-{secrets.token_hex(6)}"


def save(store: PgArchiveStore, archive_id: str, session_id: str, *texts: str) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": t} for t in texts]
    ref = ArchiveRef(id=archive_id, session_id=session_id, message_count=len(texts), sha256="x")
    store.save(Archive(ref=ref, created_at="2026-11-25T00:00:00+00:00", messages=messages))


def recall(store: PgArchiveStore, session_id: str, query: str) -> RecallResult:
    return store.search(session_id, parse_query(query), 5, lambda: 60.0)


def test_recall_never_reads_an_archive_body(store: PgArchiveStore, database: Database) -> None:
    mine = session()
    save(store, f"0001-{mine}", mine, "x " * 5000 + "the deploy key is in vault", "ok")
    with database.connection() as conn:  # a body recall would have to read is now garbage
        conn.execute("UPDATE compact_archives SET body = 'garbage' WHERE session_id = %s", (mine,))
    [hit] = recall(store, mine, "deploy key").hits
    # Each word once, both there, and as typed: the scores come from the index alone.
    assert (hit.archive_id, hit.message_index, hit.score) == (f"0001-{mine}", 0, 11 + 11 + 20 + 30)
    assert hit.snippet.startswith("… x x")
    assert hit.snippet.endswith("the deploy key is in vault")


def test_a_snippet_holds_its_match_after_expanding_characters(store: PgArchiveStore) -> None:
    mine = session()
    save(store, f"0001-{mine}", mine, "İ" * 3000 + " needle-token-77 " + "after " * 500)
    [hit] = recall(store, mine, "NEEDLE-token-77").hits
    assert "needle-token-77 after" in hit.snippet


def test_the_same_message_in_two_archives_is_returned_once(store: PgArchiveStore) -> None:
    mine = session()
    save(store, f"0001-{mine}", mine, "KeyError: 'HASDATA'", "other")
    save(store, f"0002-{mine}", mine, "KeyError: 'HASDATA'", "other")
    hits = recall(store, mine, "keyerror hasdata").hits
    assert [(h.archive_id, h.message_index) for h in hits] == [(f"0002-{mine}", 0)]


def test_archives_saved_before_the_index_are_indexed_by_the_next_recalls(
    store: PgArchiveStore, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = session()
    for n in (1, 2, 3):
        save(store, f"000{n}-{mine}", mine, f"old note {n}")
    with database.connection() as conn:  # as written before migration 3
        for n in (1, 2, 3):
            pg_recall.delete(conn, f"000{n}-{mine}")
        conn.execute("DELETE FROM compact_recall_archives WHERE archive_id LIKE %s", (f"%-{mine}",))
        conn.execute(
            "UPDATE compact_archives SET recall_indexed = false WHERE session_id = %s", (mine,)
        )
    monkeypatch.setattr(pg_recall, "BACKFILL_BYTES", 1)
    first = recall(store, mine, "note")
    assert ([h.archive_id[:4] for h in first.hits], first.complete) == (["0003"], False)
    recall(store, mine, "note")
    last = recall(store, mine, "note")
    assert ([h.archive_id[:4] for h in last.hits], last.complete) == (
        ["0003", "0002", "0001"],
        True,
    )


def test_a_recall_stops_at_its_deadline(store: PgArchiveStore) -> None:
    mine = session()
    save(store, f"0001-{mine}", mine, "note")
    left = iter([1.0, 1.0, 0.0, 0.0])
    with pytest.raises(RecallDeadlineError):
        store.search(mine, parse_query("note"), 5, lambda: next(left))


def test_a_statement_running_past_the_deadline_is_cancelled_by_postgres(
    store: PgArchiveStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(
        conn: Conn, session_id: str, query: Query, limit: int, time_left: TimeLeft, *_: Any
    ) -> Any:
        pg_recall._time_out(conn, time_left)
        conn.execute("SELECT pg_sleep(5)")

    monkeypatch.setattr(pg_recall, "search", slow)
    with pytest.raises(RecallDeadlineError) as raised:
        store.search(session(), parse_query("note"), 5, lambda: 0.05)
    assert isinstance(raised.value.__cause__.__cause__, psycopg.errors.QueryCanceled)  # type: ignore[union-attr]


def test_deleting_an_archive_deletes_its_index(store: PgArchiveStore, database: Database) -> None:
    mine = session()
    save(store, f"0001-{mine}", mine, "refused compaction")
    store.delete(f"0001-{mine}")
    assert recall(store, mine, "refused").hits == []
    with database.connection() as conn:
        rows = [
            conn.execute(
                "SELECT count(*) FROM compact_recall_postings p JOIN compact_recall_sessions s"
                " ON s.no = p.session_no WHERE s.session_id = %s",
                (mine,),
            ).fetchone(),
            conn.execute(
                "SELECT count(*) FROM compact_recall_archives WHERE archive_id = %s",
                (f"0001-{mine}",),
            ).fetchone(),
        ]
    assert rows == [(0,), (0,)]


def test_text_postgres_cannot_store_is_indexed_in_place(store: PgArchiveStore) -> None:
    mine = session()
    save(store, f"0001-{mine}", mine, "a nul\x00 then needle")
    [hit] = recall(store, mine, "needle").hits
    assert hit.snippet == "a nul\ufffd then needle"


def _corpus_archives() -> list[Archive]:
    """The corpus's sessions as the archives of one session, with ids as the service makes
    them (a UUID session, time-sortable archive ids): the keys' sizes count."""
    session_id = "0b6f3c1e-6d0f-4c3e-9d55-2a7c1f0e9b42"
    archives = []
    for n, path in enumerate(FILES):
        messages = load(path)
        ref = ArchiveRef(
            id=new_archive_id(1_764_000_000_000_000_000 + n, "a1b2c3d4e5f6"),
            session_id=session_id,
            message_count=len(messages),
            sha256="x",
        )
        archives.append(Archive(ref=ref, created_at="2026-11-25T00:00:00+00:00", messages=messages))
    return archives


def _bytes_under(root: Path, suffix: str, kept: bool) -> int:
    return sum(
        p.stat().st_size for p in root.rglob("*") if p.is_file() and p.name.endswith(suffix) == kept
    )


@pytest.mark.slow
def test_the_word_index_is_a_few_times_the_archives_size(
    empty_database_url: str, tmp_path: Path
) -> None:
    """A row per (word, message), with the session and archive ids on each, made the
    PostgreSQL index 16 times the archives' size here; packed by bucket it keeps each
    message's text besides (compressed by PostgreSQL's TOAST when long). The file store's,
    without text and compressed, is about the size of its gzip-compressed archives, each a
    fourth of the archives' JSON."""
    archives = _corpus_archives()
    files = FileArchiveStore(tmp_path)
    for archive in archives:
        files.save(archive)
    file_index = _bytes_under(tmp_path, ".recall", True)
    file_archives = _bytes_under(tmp_path / "archives", ".json", True)
    plain = sum(len(encode_archive(a)) for a in archives)
    database = Database(empty_database_url)
    try:
        pg = PgArchiveStore(database)
        for archive in archives:
            pg.save(archive)
        with database.connection() as conn:
            row = conn.execute(
                "SELECT (SELECT sum(pg_total_relation_size(oid)) FROM pg_class"
                "  WHERE relkind = 'r' AND relname LIKE 'compact_recall%%'),"
                " (SELECT sum(length(body)) FROM compact_archives)"
            ).fetchone()
    finally:
        database.close()
    assert row is not None
    pg_ratio = float(row[0]) / float(row[1])
    assert pg_ratio < 3.5, pg_ratio
    assert (file_index < plain / 3, file_archives < plain / 4) == (True, True)
