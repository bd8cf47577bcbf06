"""The file store's recall index: one small SQLite file beside each archive.

`{data_dir}/archive_index/{archive_id}.recall` holds the archive's session, each
message's role, tool, digest and text, and per message each word's count and first
offset (`app.core.recall.terms`), under a primary key on (word, message): a recall looks
up the query's words and reads ~400 characters of text per hit, never a whole archive.

Written once, into a temp file renamed over the final name, and never changed: readers
open it read-only and immutable, so replicas sharing the data directory need no locks
(SQLite's locking is unreliable on network file systems; an immutable file needs none).
A read past the recall's deadline is interrupted inside SQLite.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from urllib.parse import quote

from app.adapters.files import temp_path, unlink_quietly
from app.core.errors import ArchiveError, RecallDeadlineError
from app.core.recall import Candidate, PostingBudget, RecallEntry, TimeLeft, WordStat, word_stats

SUFFIX = ".recall"
_SCHEMA = """
CREATE TABLE archive (session_id TEXT);
CREATE TABLE messages (
    idx INTEGER PRIMARY KEY, role TEXT NOT NULL, tool_name TEXT, digest TEXT NOT NULL,
    length INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE TABLE words (
    word TEXT NOT NULL, idx INTEGER NOT NULL, count INTEGER NOT NULL, first INTEGER NOT NULL,
    PRIMARY KEY (word, idx)
) WITHOUT ROWID;
"""
_PROGRESS_STEPS = 10_000  # SQLite instructions between two looks at the deadline


def write_index(path: str, session_id: str | None, entries: Sequence[RecallEntry]) -> None:
    """Writes the index of one archive's entries at `path`, atomically; raises `OSError`
    or `sqlite3.Error`."""
    temp = temp_path(os.path.dirname(path), os.path.basename(path))
    try:
        with closing(sqlite3.connect(temp)) as db:
            db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + _SCHEMA)
            db.execute("INSERT INTO archive VALUES (?)", (session_id,))
            for e in entries:
                db.execute(
                    "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                    (e.message_index, e.role, e.tool_name, e.digest, len(e.text), e.text),
                )
                db.executemany(
                    "INSERT INTO words VALUES (?, ?, ?, ?)",
                    (
                        (word, e.message_index, s.times, s.first)
                        for word, s in word_stats(e.text).items()
                    ),
                )
            db.commit()
        fd = os.open(temp, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    finally:
        unlink_quietly(temp)


@contextmanager
def open_index(path: str, time_left: TimeLeft) -> Iterator[sqlite3.Connection]:
    """The index read-only; a query running past the deadline raises
    `RecallDeadlineError`, an unreadable file `ArchiveError`."""
    try:
        db = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise ArchiveError(f"recall index unreadable: {exc}") from exc
    db.set_progress_handler(lambda: int(time_left() <= 0), _PROGRESS_STEPS)
    try:
        yield db
    except sqlite3.OperationalError as exc:
        if time_left() <= 0:
            raise RecallDeadlineError("the recall passed its deadline") from exc
        raise ArchiveError(f"recall index unreadable: {exc}") from exc
    except sqlite3.Error as exc:
        raise ArchiveError(f"recall index unreadable: {exc}") from exc
    finally:
        db.close()


def owner(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT session_id FROM archive").fetchone()
    return str(row[0]) if row and row[0] is not None else None


def find(
    db: sqlite3.Connection, order: int, archive_id: str, budget: PostingBudget
) -> list[Candidate]:
    """The archive's messages holding the query's words, latest first, each word within
    its budget, with those words' stats."""
    words = budget.open_words()
    if not words:
        return []
    marks = ",".join("?" * len(words))
    rows = db.execute(
        f"SELECT idx, word, count, first FROM words WHERE word IN ({marks}) ORDER BY idx DESC",
        tuple(words),
    ).fetchall()
    found: dict[int, dict[str, WordStat]] = {}
    for idx, word, count, first in rows:
        if budget.take(word):
            found.setdefault(idx, {})[word] = WordStat(count, first)
    if not found:
        return []
    meta: dict[int, tuple[str, str | None, str, int]] = {
        idx: (role, tool_name, digest, length)
        for idx, role, tool_name, digest, length in db.execute(
            "SELECT idx, role, tool_name, digest, length FROM messages"
        )
    }
    candidates = []
    for idx, stats in found.items():
        role, tool_name, digest, length = meta[idx]
        candidates.append(Candidate(order, archive_id, idx, role, tool_name, digest, length, stats))
    return candidates


def window(db: sqlite3.Connection, message_index: int, start: int, end: int) -> str:
    """Characters `start`..`end` of the message's text (SQLite counts characters)."""
    row = db.execute(
        "SELECT substr(text, ?, ?) FROM messages WHERE idx = ?",
        (start + 1, end - start, message_index),
    ).fetchone()
    return str(row[0]) if row else ""
