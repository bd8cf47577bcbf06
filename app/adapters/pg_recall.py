"""Recall on PostgreSQL: a word index written with each archive, searched without ever
loading an archive's body.

Sessions and archives are numbered (`compact_recall_sessions`, `compact_recall_archives`,
archives oldest first); `compact_recall_messages` holds each archived message's role,
tool, digest and text; `compact_recall_postings` one row per (session, bucket of words,
archive) holding, for each word of the bucket, which messages hold it, how often and
where first (`app.core.recall_postings`), under a primary key that a lookup of one word in
one session walks newest archive first. A row per (word, message) with the text keys on
every row made the index 16 to 28 times the size of the archives; packed, an archive
costs at most `BUCKETS` rows.

`prepare` reads the archive (the CPU work: every word of every message) before any
connection is taken; `write` copies the rows in chunks of at most `CHUNK_BYTES`, each a
step of the call (`Database.step`), so a large archive that is being written is never cut
by a bound sized for one small statement, in the archive's own transaction. Archives saved
before the index (`recall_indexed` false) are indexed by the next recalls of their
session, at most `BACKFILL_BYTES` of bodies each.

Every statement of a recall runs with a `statement_timeout` of the time left before its
deadline, so PostgreSQL stops the work too when it passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import cast

from app.adapters.archive_store import decode_archive
from app.adapters.pg_watchdog import Conn
from app.core.errors import ArchiveError
from app.core.ports import Archive
from app.core.recall import (
    SNIPPET_CHARS,
    Candidate,
    PostingBudget,
    Query,
    RecallEntry,
    RecallResult,
    TimeLeft,
    WordStat,
    bucket_of,
    check_deadline,
    decode_postings,
    find_postings,
    hit,
    index_archive,
    pack_buckets,
    postings_by_word,
    rank,
    snippet_bounds,
)

BACKFILL_BYTES = 32 * 1024 * 1024  # archive bodies a recall may read to index, at most
_BACKFILL_BATCH = 64  # archives a recall looks at to index, at most
CHUNK_BYTES = 4 * 1024 * 1024  # rows copied in one statement, at most (about)
_ROWS_AT_ONCE = 256  # buckets a recall holds at once while it reads them

Step = Callable[[int], None]  # before a step writing about that many bytes
# An archive a record of the session names, or one stored within the grace.
_RECORDED = (
    " AND (EXISTS (SELECT 1 FROM compact_records r WHERE r.session_id = s.session_id"
    "   AND r.record->>'archive_id' = a.archive_id)"
    " OR EXISTS (SELECT 1 FROM compact_archives c WHERE c.id = a.archive_id"
    "   AND c.stored_at >= now() - %s))"
)


@dataclass(frozen=True)
class IndexRows:
    """One archive's index, ready to copy: its messages, and its packed buckets of words."""

    session_id: str
    entries: tuple[RecallEntry, ...]
    buckets: dict[int, bytes]


def prepare(archive: Archive) -> IndexRows | None:
    """The archive's index rows; None for an archive without a session (never searched)."""
    session_id = archive.ref.session_id
    if session_id is None:
        return None
    entries = index_archive(archive.messages)
    found = postings_by_word((e.message_index, e.text) for e in entries)
    return IndexRows(session_id, entries, pack_buckets(found))


def write(conn: Conn, rows: IndexRows | None, archive_id: str, step: Step) -> None:
    """Writes the index (inside the caller's transaction) and marks the archive indexed."""
    if rows is not None:
        session_no = _session_no(conn, rows.session_id)
        archive_no = _archive_no(conn, archive_id, session_no)
        _copy(
            conn,
            "COPY compact_recall_messages (archive_no, message_index, length, role,"
            " tool_name, digest, text) FROM STDIN",
            (
                (
                    (
                        archive_no,
                        e.message_index,
                        len(e.text),
                        e.role,
                        e.tool_name,
                        e.digest,
                        e.text,
                    ),
                    len(e.text),
                )
                for e in rows.entries
            ),
            step,
        )
        _copy(
            conn,
            "COPY compact_recall_postings (session_no, archive_no, bucket, words) FROM STDIN",
            # bytes travel as hex in COPY's text format
            (((session_no, archive_no, b, w), 2 * len(w)) for b, w in rows.buckets.items()),
            step,
        )
    conn.execute("UPDATE compact_archives SET recall_indexed = true WHERE id = %s", (archive_id,))


def delete(conn: Conn, archive_id: str) -> None:
    """Deletes an archive's postings (its messages go with its number, by cascade)."""
    conn.execute(
        "DELETE FROM compact_recall_postings p USING compact_recall_archives a"
        " WHERE a.archive_id = %s AND p.session_no = a.session_no AND p.archive_no = a.no",
        (archive_id,),
    )


def _session_no(conn: Conn, session_id: str) -> int:
    conn.execute(
        "INSERT INTO compact_recall_sessions (session_id) VALUES (%s)"
        " ON CONFLICT (session_id) DO NOTHING",
        (session_id,),
    )
    row = conn.execute(
        "SELECT no FROM compact_recall_sessions WHERE session_id = %s", (session_id,)
    ).fetchone()
    assert row is not None  # inserted above, or by another transaction that committed
    return int(row[0])


def _archive_no(conn: Conn, archive_id: str, session_no: int) -> int:
    """The archive's number: new, or the one the migration gave an archive saved before."""
    row = conn.execute(
        "INSERT INTO compact_recall_archives (archive_id, session_no) VALUES (%s, %s)"
        " ON CONFLICT (archive_id) DO UPDATE SET session_no = EXCLUDED.session_no"
        " RETURNING no",
        (archive_id, session_no),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _copy(
    conn: Conn, statement: str, rows: Iterable[tuple[tuple[object, ...], int]], step: Step
) -> None:
    """Copies the rows (each with its size in bytes) in statements of about `CHUNK_BYTES`,
    each one step of the call."""
    for chunk, nbytes in _chunks(rows):
        step(nbytes)
        with conn.cursor().copy(statement) as copy:
            for row in chunk:
                copy.write_row(row)


def _chunks(
    rows: Iterable[tuple[tuple[object, ...], int]],
) -> Iterator[tuple[list[tuple[object, ...]], int]]:
    chunk: list[tuple[object, ...]] = []
    nbytes = 0
    for row, size in rows:
        chunk.append(row)
        nbytes += size + 32
        if nbytes >= CHUNK_BYTES:
            yield chunk, nbytes
            chunk, nbytes = [], 0
    if chunk:
        yield chunk, nbytes


def search(
    conn: Conn,
    session_id: str,
    query: Query,
    limit: int,
    time_left: TimeLeft,
    grace: timedelta | None = None,
) -> RecallResult:
    """The recall on `conn`; raises `psycopg.Error` (a statement cancelled at the
    deadline: `QueryCanceled`) and `RecallDeadlineError`. With `grace`, an archive no
    record of the session names and stored longer ago (a killed compaction's leftover)
    is left out."""
    complete = _backfill(conn, session_id, time_left)
    budget = PostingBudget(query.words)
    buckets = sorted({bucket_of(word) for word in query.words})
    _time_out(conn, time_left)
    # A server-side cursor: the buckets stream by, only the query's words' postings stay.
    with conn.cursor(name="recall_postings") as cursor:
        cursor.itersize = _ROWS_AT_ONCE
        cursor.execute(
            "SELECT b.bucket, a.no, a.archive_id, p.words"
            " FROM compact_recall_sessions s CROSS JOIN unnest(%s::integer[]) AS b(bucket)"
            " CROSS JOIN LATERAL ("
            "   SELECT archive_no, words FROM compact_recall_postings"
            "   WHERE session_no = s.no AND bucket = b.bucket"
            "   ORDER BY archive_no DESC LIMIT %s) AS p"
            " JOIN compact_recall_archives a ON a.no = p.archive_no"
            " WHERE s.session_id = %s" + (_RECORDED if grace is not None else ""),
            (buckets, budget.share + 1, session_id, *(() if grace is None else (grace,))),
        )
        found = _postings(query.words, cursor, budget)
    _time_out(conn, time_left)
    candidates = _candidates(conn, found)
    hits = []
    for ranked in rank(candidates, query, limit):
        c = ranked.candidate
        start, end = snippet_bounds(ranked.at, c.length, SNIPPET_CHARS)
        _time_out(conn, time_left)
        row = conn.execute(
            "SELECT substr(m.text, %s, %s) FROM compact_recall_messages m"
            " JOIN compact_recall_archives a ON a.no = m.archive_no"
            " WHERE a.archive_id = %s AND m.message_index = %s",
            (start + 1, end - start, c.archive_id, c.message_index),
        ).fetchone()
        hits.append(hit(ranked, str(row[0]) if row else ""))
    return RecallResult(hits, complete and not budget.cut)


# (archive number, archive id, message index) -> the query's words the message holds
_Found = dict[tuple[int, str, int], dict[str, WordStat]]


def _postings(
    words: Sequence[str], rows: Iterable[tuple[object, ...]], budget: PostingBudget
) -> _Found:
    """Each word's messages, newest first, as many as the budget lets it bring. A bucket
    that filled its rows may have older archives unread: the budget is then cut."""
    wanted: dict[int, list[str]] = {}
    for word in words:
        wanted.setdefault(bucket_of(word), []).append(word)
    seen: dict[int, int] = {}
    by_word: dict[str, list[tuple[int, str, bytes]]] = {}
    for bucket, archive_no, archive_id, packed in rows:
        number = int(str(bucket))
        seen[number] = seen.get(number, 0) + 1
        for word in wanted.get(number, ()):
            postings = find_postings(cast(bytes, packed), word)
            if postings is not None:
                by_word.setdefault(word, []).append(
                    (int(str(archive_no)), str(archive_id), postings)
                )
    budget.cut = budget.cut or any(n > budget.share for n in seen.values())
    found: _Found = {}
    for word in words:
        archives = sorted(by_word.get(word, ()), reverse=True)
        newest_first = (
            (archive_no, archive_id, index, stat)
            for archive_no, archive_id, postings in archives
            for index, stat in reversed(decode_postings(postings))
        )
        for archive_no, archive_id, index, stat in newest_first:
            if not budget.take(word):
                break
            found.setdefault((archive_no, archive_id, index), {})[word] = stat
    return found


def _candidates(conn: Conn, found: _Found) -> list[Candidate]:
    """The found messages with their role, tool, digest and length."""
    if not found:
        return []
    keys = list(found)
    meta = {
        (int(row[0]), int(row[1])): row[2:]
        for row in conn.execute(
            "SELECT m.archive_no, m.message_index, m.role, m.tool_name, m.digest, m.length"
            " FROM unnest(%s::bigint[], %s::integer[]) AS k(archive_no, message_index)"
            " JOIN compact_recall_messages m USING (archive_no, message_index)",
            ([k[0] for k in keys], [k[2] for k in keys]),
        ).fetchall()
    }
    order = {archive_id: n for n, archive_id in enumerate(sorted({k[1] for k in keys}))}
    candidates = []
    for (archive_no, archive_id, index), words in found.items():
        row = meta.get((archive_no, index))
        if row is None:
            continue
        role, tool_name, digest, length = row
        candidates.append(
            Candidate(
                order[archive_id],
                archive_id,
                index,
                str(role),
                None if tool_name is None else str(tool_name),
                str(digest),
                int(str(length)),
                words,
            )
        )
    return candidates


def _backfill(conn: Conn, session_id: str, time_left: TimeLeft) -> bool:
    """Indexes the session's archives saved before the index, newest first, each in its
    own transaction, within the budget; whether none is left."""
    _time_out(conn, time_left)
    rows = conn.execute(
        "SELECT id, length(body) FROM compact_archives"
        " WHERE session_id = %s AND NOT recall_indexed ORDER BY id DESC LIMIT %s",
        (session_id, _BACKFILL_BATCH),
    ).fetchall()
    budget = BACKFILL_BYTES
    for archive_id, size in rows:
        if budget <= 0:
            break
        _time_out(conn, time_left)
        _index_stored(conn, str(archive_id), time_left)
        conn.commit()
        budget -= int(size)
    if not rows:
        return True
    _time_out(conn, time_left)
    return not conn.execute(
        "SELECT 1 FROM compact_archives WHERE session_id = %s AND NOT recall_indexed LIMIT 1",
        (session_id,),
    ).fetchone()


def _index_stored(conn: Conn, archive_id: str, time_left: TimeLeft) -> None:
    """Indexes one stored archive, unless another recall is doing it or did."""
    row = conn.execute(
        "SELECT body, body_sha256 FROM compact_archives WHERE id = %s AND NOT recall_indexed"
        " FOR UPDATE SKIP LOCKED",
        (archive_id,),
    ).fetchone()
    if row is None:
        return
    body = bytes(row[0])
    if hashlib.sha256(body).hexdigest() != row[1]:
        raise ArchiveError(f"archive {archive_id} is corrupt: checksum mismatch")
    rows = prepare(decode_archive(archive_id, body))
    write(conn, rows, archive_id, lambda _: _time_out(conn, time_left))


def _time_out(conn: Conn, time_left: TimeLeft) -> None:
    """The next statements may run until the deadline, no longer."""
    check_deadline(time_left)
    milliseconds = max(1, int(time_left() * 1000))
    conn.execute(f"SET LOCAL statement_timeout = {milliseconds}")
