"""The file store's formats before compression, written as that code wrote them: what a
data directory may still hold, and must stay readable."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from app.adapters.archive_file import encode_archive
from app.core.ports import Archive
from app.core.recall import index_archive
from app.core.recall.terms import word_stats

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


def write_plain_archive(data_dir: Path, archive: Archive) -> Path:
    """The archive as plain JSON, and its id in its session's list, without a word index."""
    path = data_dir / "archives" / f"{archive.ref.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_archive(archive))
    if archive.ref.session_id is not None:
        listing = data_dir / "archive_index" / f"{archive.ref.session_id}.ids"
        listing.parent.mkdir(parents=True, exist_ok=True)
        with listing.open("a") as f:
            f.write(f"{archive.ref.id}\n")
    return path


def write_sqlite_index(data_dir: Path, archive: Archive) -> Path:
    """The archive's word index as SQLite, each message's text in it."""
    path = data_dir / "archive_index" / f"{archive.ref.id}.recall"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.executescript(_SCHEMA)
        db.execute("INSERT INTO archive VALUES (?)", (archive.ref.session_id,))
        for e in index_archive(archive.messages):
            db.execute(
                "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                (e.message_index, e.role, e.tool_name, e.digest, len(e.text), e.text),
            )
            db.executemany(
                "INSERT INTO words VALUES (?, ?, ?, ?)",
                ((w, e.message_index, s.times, s.first) for w, s in word_stats(e.text).items()),
            )
        db.commit()
    return path
