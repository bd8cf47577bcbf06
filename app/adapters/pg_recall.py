"""Recall on PostgreSQL: a word index written with each archive, searched without ever
loading an archive's body.

`compact_recall_messages` holds each archived message's role, tool, digest and text;
`compact_recall_words` each (session, word, archive, message) with the word's count and
first offset, under a primary key that a lookup of one word in one session walks
newest archive first. `write_words` fills both in the archive's own transaction.
Archives saved before the index (`recall_indexed` false) are indexed by the next recalls
of their session, at most `BACKFILL_BYTES` of bodies each.

Every statement of a recall runs with a `statement_timeout` of the time left before its
deadline, so PostgreSQL stops the work too when it passes.
"""

from __future__ import annotations

import hashlib

from app.adapters.archive_store import decode_archive
from app.adapters.pg_watchdog import Conn
from app.core.errors import ArchiveError
from app.core.ports import Archive
from app.core.recall import (
    SNIPPET_CHARS,
    Candidate,
    PostingBudget,
    Query,
    RecallResult,
    TimeLeft,
    WordStat,
    check_deadline,
    hit,
    index_archive,
    rank,
    snippet_bounds,
    word_stats,
)

BACKFILL_BYTES = 32 * 1024 * 1024  # archive bodies a recall may read to index, at most
_BACKFILL_BATCH = 64  # archives a recall looks at to index, at most


def write_words(conn: Conn, archive: Archive) -> None:
    """Indexes the archive's messages (inside the caller's transaction); an archive
    without a session is never searched, so it has nothing to index."""
    session_id = archive.ref.session_id
    if session_id is not None:
        entries = index_archive(archive.messages)
        with conn.cursor().copy(
            "COPY compact_recall_messages (archive_id, message_index, role, tool_name,"
            " digest, length, text) FROM STDIN"
        ) as copy:
            for e in entries:
                copy.write_row(
                    (
                        archive.ref.id,
                        e.message_index,
                        e.role,
                        e.tool_name,
                        e.digest,
                        len(e.text),
                        e.text,
                    )
                )
        with conn.cursor().copy(
            "COPY compact_recall_words (session_id, word, archive_id, message_index, count,"
            " first) FROM STDIN"
        ) as copy:
            for e in entries:
                for word, s in word_stats(e.text).items():
                    copy.write_row(
                        (session_id, word, archive.ref.id, e.message_index, s.times, s.first)
                    )
    conn.execute(
        "UPDATE compact_archives SET recall_indexed = true WHERE id = %s", (archive.ref.id,)
    )


def search(
    conn: Conn, session_id: str, query: Query, limit: int, time_left: TimeLeft
) -> RecallResult:
    """The recall on `conn`; raises `psycopg.Error` (a statement cancelled at the
    deadline: `QueryCanceled`) and `RecallDeadlineError`."""
    complete = _backfill(conn, session_id, time_left)
    budget = PostingBudget(query.words)
    _time_out(conn, time_left)
    rows = conn.execute(
        "SELECT q.word, w.archive_id, w.message_index, w.count, w.first, m.role,"
        " m.tool_name, m.digest, m.length"
        " FROM unnest(%s::text[]) AS q(word) CROSS JOIN LATERAL ("
        "   SELECT archive_id, message_index, count, first FROM compact_recall_words"
        "   WHERE session_id = %s AND word = q.word"
        "   ORDER BY archive_id DESC, message_index DESC LIMIT %s) AS w"
        " JOIN compact_recall_messages m USING (archive_id, message_index)"
        " ORDER BY w.archive_id DESC, w.message_index DESC",
        (list(query.words), session_id, budget.share + 1),
    ).fetchall()
    found = _candidates(rows, budget)
    hits = []
    for ranked in rank(found, query, limit):
        c = ranked.candidate
        start, end = snippet_bounds(ranked.at, c.length, SNIPPET_CHARS)
        _time_out(conn, time_left)
        row = conn.execute(
            "SELECT substr(text, %s, %s) FROM compact_recall_messages"
            " WHERE archive_id = %s AND message_index = %s",
            (start + 1, end - start, c.archive_id, c.message_index),
        ).fetchone()
        hits.append(hit(ranked, str(row[0]) if row else ""))
    return RecallResult(hits, complete and not budget.cut)


def _candidates(rows: list[tuple[object, ...]], budget: PostingBudget) -> list[Candidate]:
    archive_ids = sorted({str(row[1]) for row in rows})
    order = {archive_id: n for n, archive_id in enumerate(archive_ids)}
    found: dict[tuple[str, int], tuple[tuple[str, str | None, str, int], dict[str, WordStat]]]
    found = {}
    for word, archive_id, index, count, first, role, tool_name, digest, length in rows:
        if budget.take(str(word)):
            key = (str(archive_id), int(str(index)))
            meta = (
                str(role),
                None if tool_name is None else str(tool_name),
                str(digest),
                int(str(length)),
            )
            _, stats = found.setdefault(key, (meta, {}))
            stats[str(word)] = WordStat(int(str(count)), int(str(first)))
    return [
        Candidate(order[archive_id], archive_id, index, *meta, stats)
        for (archive_id, index), (meta, stats) in found.items()
    ]


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
        _index_stored(conn, str(archive_id))
        conn.commit()
        budget -= int(size)
    if not rows:
        return True
    _time_out(conn, time_left)
    return not conn.execute(
        "SELECT 1 FROM compact_archives WHERE session_id = %s AND NOT recall_indexed LIMIT 1",
        (session_id,),
    ).fetchone()


def _index_stored(conn: Conn, archive_id: str) -> None:
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
    write_words(conn, decode_archive(archive_id, body))


def _time_out(conn: Conn, time_left: TimeLeft) -> None:
    """The next statements may run until the deadline, no longer."""
    check_deadline(time_left)
    milliseconds = max(1, int(time_left() * 1000))
    conn.execute(f"SET LOCAL statement_timeout = {milliseconds}")
