"""An archive's bytes on the file store: its JSON document, gzip-compressed in members cut
at message boundaries, so that recall reads one message's snippet without the rest.

The document is the one `encode_archive` writes (the same JSON, byte for byte, once
decompressed: `gzip -dc archives/{id}.json` reads it). A new gzip member starts at the
first message boundary past `MEMBER_BYTES` of the document; deflate looks back 32 KiB at
most, so the cuts cost almost nothing of the ratio. `Packed.spans` says where each message
stands in the document and `Packed.members` where each member starts, in the document and
in the file: the word index keeps both (`app.adapters.recall_index`), and `read_message`
decompresses only the member holding a message.

Archives written before compression are plain JSON under the same name: `decode_archive`
tells them apart by gzip's magic bytes (a JSON document opens with `{`).
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from app.adapters.files import close_quietly, errno_name
from app.core.errors import ArchiveError
from app.core.json_numbers import dumps, loads
from app.core.ports import Archive, ArchiveRef

GZIP_MAGIC = b"\x1f\x8b"
MEMBER_BYTES = 64 * 1024  # of the document, at least, in one member (but the last)
_LEVEL = 6
_MAX_MESSAGE_BYTES = 1 << 30  # a span read back, at most: a bound on a corrupt index

Span = tuple[int, int]  # a message's start and end in the document
Member = tuple[int, int]  # a member's start in the document, and in the file


@dataclass(frozen=True)
class Packed:
    """What is written, with where each message and each member stands."""

    data: bytes
    spans: tuple[Span, ...]
    members: tuple[Member, ...]


def _opening(archive: Archive) -> bytes:
    """The document up to the messages' `[`."""
    ref = archive.ref
    head: dict[str, object] = {
        "id": ref.id,
        "session_id": ref.session_id,
        "created_at": archive.created_at,
        "message_count": ref.message_count,
        "sha256": ref.sha256,
        "messages": [],
    }
    return _dumps(head).removesuffix(b"]}")


def _dumps(value: object) -> bytes:
    try:
        return dumps(value)
    except orjson.JSONEncodeError as exc:
        raise ArchiveError("archive is not serializable as JSON") from exc


def encode_archive(archive: Archive) -> bytes:
    """The archive as one JSON document: its opening, each message's JSON joined by
    commas, then `]}`."""
    return _opening(archive) + b",".join(_dumps(m) for m in archive.messages) + b"]}"


def pack_archive(archive: Archive) -> Packed:
    """The archive's document compressed, in members cut at message boundaries, each
    compressed as soon as it is full (the whole document is never held uncompressed)."""
    out = bytearray()
    spans: list[Span] = []
    members: list[Member] = []
    current = bytearray(_opening(archive))
    done = 0  # document bytes in the members before `current`

    def close() -> None:
        members.append((done, len(out)))
        out.extend(gzip.compress(current, compresslevel=_LEVEL, mtime=0))

    for n, message in enumerate(archive.messages):
        if n:
            current += b","
        if len(current) >= MEMBER_BYTES:
            close()
            done += len(current)
            current = bytearray()
        start = done + len(current)
        current += _dumps(message)
        spans.append((start, done + len(current)))
    current += b"]}"
    close()
    return Packed(bytes(out), tuple(spans), tuple(members))


def decode_archive(archive_id: str, data: bytes) -> Archive:
    """The archive in `data`: compressed (`pack_archive`) or plain JSON (written before
    compression, or by the PostgreSQL store)."""
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ArchiveError("archive is corrupt: not gzip") from exc
    try:
        document, _ = loads(data, max_number_chars=None)  # numbers as they were sent
    except (ValueError, RecursionError) as exc:
        raise ArchiveError("archive is corrupt: not JSON") from exc
    return _archive(archive_id, document)


def _archive(archive_id: str, document: object) -> Archive:
    if not isinstance(document, dict):
        raise ArchiveError("archive is corrupt: not an object")
    session_id = document.get("session_id")
    messages = document.get("messages")
    message_count = document.get("message_count")
    if (
        document.get("id") != archive_id
        or not (session_id is None or isinstance(session_id, str))
        or not isinstance(document.get("created_at"), str)
        or not isinstance(message_count, int)
        or isinstance(message_count, bool)
        or not isinstance(document.get("sha256"), str)
        or not isinstance(messages, list)
        or not all(isinstance(m, dict) for m in messages)
    ):
        raise ArchiveError("archive is corrupt: unexpected fields")
    typed_messages: list[dict[str, Any]] = messages
    ref = ArchiveRef(
        id=archive_id,
        session_id=session_id,
        message_count=message_count,
        sha256=document["sha256"],
    )
    return Archive(ref=ref, created_at=document["created_at"], messages=typed_messages)


def read_message(path: str, span: Span, members: Sequence[Member]) -> dict[str, Any] | None:
    """The message at `span` of the compressed archive at `path`, reading only the member
    that holds it; None when the file is gone. A file that does not hold it there (cut
    short, or replaced) is an `ArchiveError`."""
    first, offset, size = _member(span, members)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ArchiveError(f"archive read failed: {errno_name(exc)}") from exc
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        data = _read(fd, size)
    except OSError as exc:
        raise ArchiveError(f"archive read failed: {errno_name(exc)}") from exc
    finally:
        close_quietly(fd)
    return _message(data, first, span)


def read_message_from(data: bytes, span: Span, members: Sequence[Member]) -> dict[str, Any]:
    """The message at `span` of the compressed archive `data` (`read_message`)."""
    first, offset, size = _member(span, members)
    return _message(data[offset : None if size < 0 else offset + size], first, span)


def _member(span: Span, members: Sequence[Member]) -> tuple[int, int, int]:
    """The member holding `span`: its start in the document, in the file, and its size in
    the file (-1: to the end)."""
    start, end = span
    holding = [m for m in members if m[0] <= start]
    if not holding or not 0 <= start < end or end - start > _MAX_MESSAGE_BYTES:
        raise ArchiveError("recall index is corrupt: bad span")
    first, offset = holding[-1]
    later = [m[1] for m in members if m[0] > first]
    return first, offset, (min(later) - offset) if later else -1


def _message(data: bytes, first: int, span: Span) -> dict[str, Any]:
    """The message at `span` in `data`, a member starting at `first` of the document."""
    start, end = span
    try:
        piece = zlib.decompressobj(wbits=31).decompress(data, end - first)
        message, _ = loads(piece[start - first : end - first], max_number_chars=None)
    except (zlib.error, ValueError, RecursionError) as exc:
        raise ArchiveError("archive is corrupt: a message unreadable") from exc
    if not isinstance(message, dict):
        raise ArchiveError("archive is corrupt: a message unreadable")
    return message


def _read(fd: int, size: int) -> bytes:
    """`size` bytes from `fd` (-1: to the end), fewer at the file's end."""
    chunks = []
    left = size
    while left != 0:
        chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left = left - len(chunk) if left > 0 else left
    return b"".join(chunks)
