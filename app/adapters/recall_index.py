"""The file store's recall index: one small file beside each archive.

`{data_dir}/archive_index/{archive_id}.recall` holds the archive's session, each message's
role, tool, digest and length and where it stands in the archive, and every word's
postings (the messages holding it, each with the word's count and first offset:
`app.core.recall.pack_words`). It holds no text: a snippet is read from the archive, the
one gzip member holding its message (`app.adapters.archive_file`); an index written for
an archive without those places (indexed by a recall, from an archive written before
compression) reads its snippets from the whole archive. The text and a row per (word,
message) made the SQLite index twice the size of the archive it indexed.

After `MAGIC`: a codec byte, the number of parts and where each starts, then the parts,
each compressed on its own: the meta (JSON), then the words in buckets by a stable hash.
Postings packed in fewer than `WHOLE_BELOW` bytes (every archive of a proxied session, as
measured) are one bucket, LZMA (the smallest; read whole, it is small); larger ones are
buckets of about `BUCKET_BYTES`, zlib (fast to read), and a recall decompresses only the
buckets of its query's words.

Indexes written before this format are SQLite files (each message's text, a row per
(word, message)); they are read as they are (`_SqliteIndex`), never rewritten.

Written once, into a temp file renamed over the final name, and never changed, so replicas
sharing the data directory need no locks. A read past the recall's deadline stops.
"""

from __future__ import annotations

import lzma
import os
import sqlite3
import struct
import zlib
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import orjson

from app.adapters.archive_file import Member, Span
from app.adapters.files import read_regular, temp_path, unlink_quietly, write_temp
from app.core.errors import ArchiveError, RecallDeadlineError
from app.core.recall import (
    Candidate,
    Posting,
    PostingBudget,
    PostingsError,
    RecallEntry,
    TimeLeft,
    WordStat,
    decode_postings,
    find_postings,
    pack_words,
    postings_by_word,
)

SUFFIX = ".recall"
MAGIC = b"compact-recall/2\n"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_U32 = struct.Struct(">I")
WHOLE_BELOW = 64 * 1024  # postings packed in fewer bytes: one part, LZMA
BUCKET_BYTES = 4 * 1024  # of packed postings per bucket, about, past `WHOLE_BELOW`
_MAX_BUCKETS = 4096
_LZMA = [{"id": lzma.FILTER_LZMA2, "preset": 6, "dict_size": WHOLE_BELOW}]
Place = tuple[Span, tuple[Member, ...]]  # where a message stands in its archive
_PROGRESS_STEPS = 10_000  # SQLite instructions between two looks at the deadline


def write_index(
    path: str,
    session_id: str | None,
    entries: Sequence[RecallEntry],
    spans: Sequence[Span] | None = None,
    members: Sequence[Member] | None = None,
) -> None:
    """Writes the index of one archive's entries at `path`, atomically, with where each
    message stands in the archive (`spans`, by message index, and `members`) when known;
    raises `OSError`."""
    meta = {
        "session_id": session_id,
        "messages": [
            [e.message_index, e.role, e.tool_name, e.digest, len(e.text)] for e in entries
        ],
        "spans": None if spans is None else [spans[e.message_index] for e in entries],
        "members": None if members is None else list(members),
    }
    found = postings_by_word((e.message_index, e.text) for e in entries)
    whole = pack_words(found)
    if len(whole) < WHOLE_BELOW:
        codec, parts = b"x", [orjson.dumps(meta), whole]
    else:
        count = min(_MAX_BUCKETS, len(whole) // BUCKET_BYTES)
        buckets: dict[int, dict[str, list[Posting]]] = {}
        for word, postings in found.items():
            buckets.setdefault(_bucket(word, count), {})[word] = postings
        codec = b"z"
        parts = [orjson.dumps(meta), *(pack_words(buckets.get(n, {})) for n in range(count))]
    data = _frame(codec, [_compress(codec, part) for part in parts])
    temp = temp_path(os.path.dirname(path), os.path.basename(path))
    try:
        write_temp(temp, data)
        os.replace(temp, path)
    finally:
        unlink_quietly(temp)


def _frame(codec: bytes, parts: list[bytes]) -> bytes:
    """`MAGIC`, the codec, the number of parts and where each starts, then the parts: the
    meta, then the buckets."""
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    table = b"".join(_U32.pack(o) for o in offsets)
    return b"".join((MAGIC, codec, _U32.pack(len(parts)), table, *parts))


def _compress(codec: bytes, data: bytes) -> bytes:
    if codec == b"x":
        return lzma.compress(data, format=lzma.FORMAT_RAW, filters=_LZMA)
    return zlib.compress(data, 9, wbits=-15)


def _decompress(codec: bytes, data: bytes) -> bytes:
    if codec == b"x":
        return lzma.decompress(data, format=lzma.FORMAT_RAW, filters=_LZMA)
    return zlib.decompress(data, wbits=-15)


def _bucket(word: str, count: int) -> int:
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % count


class Index(Protocol):
    def owner(self) -> str | None: ...

    def find(self, order: int, archive_id: str, budget: PostingBudget) -> list[Candidate]:
        """The archive's messages holding the query's words, latest first, each word within
        its budget, with those words' stats."""
        ...

    def window(self, message_index: int, start: int, end: int) -> str | None:
        """Characters `start`..`end` of the message's text; None when the index holds no
        text (read it from the archive, at `place`)."""
        ...

    def place(self, message_index: int) -> Place | None:
        """Where the message stands in the compressed archive; None when not known."""
        ...


@contextmanager
def open_index(path: str, time_left: TimeLeft) -> Iterator[Index]:
    """The index read-only; a read past the deadline raises `RecallDeadlineError`, an
    unreadable file `ArchiveError`."""
    try:
        data = read_regular(path)
    except OSError as exc:
        raise ArchiveError(f"recall index unreadable: {exc.strerror}") from exc
    if data is None:
        raise ArchiveError("recall index is not a regular file")
    if data.startswith(_SQLITE_MAGIC):
        with _sqlite(path, time_left) as db:
            yield db
        return
    if time_left() <= 0:
        raise RecallDeadlineError("the recall passed its deadline")
    yield PackedIndex(data)


@dataclass(frozen=True)
class _Message:
    role: str
    tool_name: str | None
    digest: str
    length: int
    span: Span | None


class PackedIndex:
    """An index in this format: its parts decompressed as a recall needs them, the meta
    once, a bucket once."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 1 + _U32.size:
            raise ArchiveError("recall index unreadable: unknown format")
        at = len(MAGIC)
        self._codec = data[at : at + 1]
        (count,) = _U32.unpack_from(data, at + 1)
        table = at + 1 + _U32.size
        start = table + (count + 1) * _U32.size
        if self._codec not in (b"x", b"z") or count < 2 or start > len(data):
            raise ArchiveError("recall index unreadable: unexpected header")
        offsets = [start + o for (o,) in _U32.iter_unpack(data[table:start])]
        if offsets[-1] != len(data) or offsets != sorted(offsets):
            raise ArchiveError("recall index unreadable: cut short")
        self._data, self._offsets = data, offsets
        self._parts: dict[int, bytes] = {}
        self._meta: tuple[str | None, dict[int, _Message], tuple[Member, ...] | None] | None
        self._meta = None

    def _part(self, n: int) -> bytes:
        part = self._parts.get(n)
        if part is None:
            raw = self._data[self._offsets[n] : self._offsets[n + 1]]
            try:
                part = self._parts[n] = _decompress(self._codec, raw)
            except (lzma.LZMAError, zlib.error) as exc:
                raise ArchiveError(f"recall index unreadable: {exc}") from exc
        return part

    def _read_meta(self) -> tuple[str | None, dict[int, _Message], tuple[Member, ...] | None]:
        if self._meta is None:
            self._meta = _meta(self._part(0))
        return self._meta

    def owner(self) -> str | None:
        return self._read_meta()[0]

    def find(self, order: int, archive_id: str, budget: PostingBudget) -> list[Candidate]:
        found: dict[int, dict[str, WordStat]] = {}
        buckets = len(self._offsets) - 2
        try:
            for word in budget.open_words():
                packed = find_postings(self._part(1 + _bucket(word, buckets)), word)
                for idx, stat in reversed(decode_postings(packed) if packed else []):
                    if not budget.take(word):
                        break
                    found.setdefault(idx, {})[word] = stat
        except PostingsError as exc:
            raise ArchiveError(f"recall index is corrupt: {exc}") from exc
        messages = self._read_meta()[1] if found else {}
        candidates = []
        for idx, stats in sorted(found.items(), reverse=True):
            m = messages.get(idx)
            if m is None:
                raise ArchiveError("recall index is corrupt: a posting of no message")
            candidates.append(
                Candidate(order, archive_id, idx, m.role, m.tool_name, m.digest, m.length, stats)
            )
        return candidates

    def window(self, message_index: int, start: int, end: int) -> str | None:
        return None

    def place(self, message_index: int) -> Place | None:
        _, messages, members = self._read_meta()
        m = messages.get(message_index)
        if m is None or m.span is None or members is None:
            return None
        return m.span, members


def _meta(data: bytes) -> tuple[str | None, dict[int, _Message], tuple[Member, ...] | None]:
    """The session, the messages and the archive's members of an index's meta part."""
    try:
        meta: dict[str, Any] = orjson.loads(data)
        spans = meta["spans"] or [None] * len(meta["messages"])
        messages = {
            int(idx): _Message(
                str(role),
                None if tool is None else str(tool),
                str(digest),
                int(length),
                None if span is None else (int(span[0]), int(span[1])),
            )
            for (idx, role, tool, digest, length), span in zip(meta["messages"], spans, strict=True)
        }
        members = meta["members"]
        session_id = meta["session_id"]
    except orjson.JSONDecodeError as exc:
        raise ArchiveError(f"recall index unreadable: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ArchiveError("recall index unreadable: unexpected fields") from exc
    return (
        None if session_id is None else str(session_id),
        messages,
        None if members is None else tuple((int(u), int(c)) for u, c in members),
    )


class _SqliteIndex:
    """An index written before `MAGIC`: SQLite, each message's text in it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def owner(self) -> str | None:
        row = self._db.execute("SELECT session_id FROM archive").fetchone()
        return str(row[0]) if row and row[0] is not None else None

    def find(self, order: int, archive_id: str, budget: PostingBudget) -> list[Candidate]:
        words = budget.open_words()
        if not words:
            return []
        marks = ",".join("?" * len(words))
        rows = self._db.execute(
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
            for idx, role, tool_name, digest, length in self._db.execute(
                "SELECT idx, role, tool_name, digest, length FROM messages"
            )
        }
        candidates = []
        for idx, stats in found.items():
            role, tool_name, digest, length = meta[idx]
            candidates.append(
                Candidate(order, archive_id, idx, role, tool_name, digest, length, stats)
            )
        return candidates

    def window(self, message_index: int, start: int, end: int) -> str | None:
        """SQLite counts characters."""
        row = self._db.execute(
            "SELECT substr(text, ?, ?) FROM messages WHERE idx = ?",
            (start + 1, end - start, message_index),
        ).fetchone()
        return str(row[0]) if row else ""

    def place(self, message_index: int) -> Place | None:
        return None


@contextmanager
def _sqlite(path: str, time_left: TimeLeft) -> Iterator[_SqliteIndex]:
    """Opened read-only and immutable (no locks); a query past the deadline is
    interrupted inside SQLite."""
    try:
        db = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise ArchiveError(f"recall index unreadable: {exc}") from exc
    db.set_progress_handler(lambda: int(time_left() <= 0), _PROGRESS_STEPS)
    with closing(db):
        try:
            yield _SqliteIndex(db)
        except sqlite3.OperationalError as exc:
            if time_left() <= 0:
                raise RecallDeadlineError("the recall passed its deadline") from exc
            raise ArchiveError(f"recall index unreadable: {exc}") from exc
        except sqlite3.Error as exc:
            raise ArchiveError(f"recall index unreadable: {exc}") from exc
