"""Archives as one JSON file each: `{data_dir}/archives/{id}.json`.

Recall searches a session's archives: each save with a session appends the archive's id to
`{data_dir}/archive_index/{session_id}.ids`, so a search opens only that session's
archives, and each archive's searchable text is kept in memory once read (archives never
change; least recently searched dropped first past `recall_cache_chars`). Archives saved
before the index existed are not found by recall (they stay readable by id).

A save is atomic and durable before it returns: write a unique temp file in the same
directory, fsync it, `os.replace` it onto the final name, fsync the directory. Any OSError
becomes an `ArchiveError` naming the errno, with the temp file removed; a failed fsync is
never retried (the page cache may already have dropped the data), so the caller must
write the whole archive again. Archives are immutable: an existing id is never replaced.
Numbers are written and read back as the agent sent them (app/core/json_numbers.py).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from typing import Any

import orjson

from app.adapters.files import (
    FILE_MODE,
    WRITE_FLAGS,
    ensure_dir,
    errno_name,
    fsync_dir,
    read_regular,
    temp_path,
    unlink_quietly,
    write_temp,
)
from app.core.errors import ArchiveError
from app.core.ids import is_valid_id
from app.core.json_numbers import dumps, loads
from app.core.ports import Archive, ArchiveRef
from app.core.recall import RecallEntry, RecallHit, index_archive, search

log = logging.getLogger("context_compact.archive")

ARCHIVES_DIRNAME = "archives"
INDEX_DIRNAME = "archive_index"  # one `{session_id}.ids` list of archive ids per session
RECALL_CACHE_CHARS = 64_000_000
_SUFFIX = ".json"


def _chars(entries: tuple[RecallEntry, ...]) -> int:
    return sum(2 * len(entry.text) for entry in entries)


class FileArchiveStore:
    """`ArchiveStore` on the local file system."""

    def __init__(self, data_dir: str, recall_cache_chars: int = RECALL_CACHE_CHARS) -> None:
        self._data_dir = data_dir
        self._dir = os.path.join(data_dir, ARCHIVES_DIRNAME)
        # Makes "refuse an existing id, then replace" atomic between threads of this process.
        self._publish_lock = threading.Lock()
        # Recall: each archive's entries, parsed once, least recently searched dropped first.
        self._cache: OrderedDict[str, tuple[str | None, tuple[RecallEntry, ...]]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._cache_chars = recall_cache_chars
        self._cached_chars = 0

    def save(self, archive: Archive) -> None:
        ref = archive.ref
        if not is_valid_id(ref.id):
            raise ArchiveError("invalid archive id")
        if ref.session_id is not None and not is_valid_id(ref.session_id):
            raise ArchiveError("invalid session id")
        data = encode_archive(archive)
        final = self._path(ref.id)
        temp = temp_path(self._dir, ref.id)
        published = False
        try:
            self._ensure_dir()
            write_temp(temp, data)
            with self._publish_lock:
                if self._exists(final):
                    raise ArchiveError("archive already exists")
                os.replace(temp, final)
            published = True
            fsync_dir(self._dir)
        except OSError as exc:
            if published:
                # The name may not survive a crash: withdraw it, so the caller writes the
                # whole archive again instead of trusting it.
                unlink_quietly(final)
            raise ArchiveError(f"archive write failed: {errno_name(exc)}") from exc
        finally:
            if not published:
                unlink_quietly(temp)
        if ref.session_id is not None:
            self._index(ref.session_id, ref.id)

    def _index(self, session_id: str, archive_id: str) -> None:
        """Appends the id to the session's list of archives, which recall reads instead of
        opening every archive. A failure is logged, not raised: the archive is safe, only
        recall will not find it."""
        path = self._session_index(session_id)
        try:
            ensure_dir(os.path.dirname(path), self._data_dir)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                os.write(fd, f"{archive_id}\n".encode())
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            log.warning(
                "archive not indexed for recall",
                extra={"archive_id": archive_id, "error": errno_name(exc)},
            )

    def search(self, session_id: str, query: str, limit: int) -> list[RecallHit]:
        if not is_valid_id(session_id):
            return []
        found = []
        for archive_id in self._session_archives(session_id):
            entries = self._entries(archive_id, session_id)
            if entries is not None:
                found.append((archive_id, entries))
        return search(found, query, limit)

    def _session_archives(self, session_id: str) -> list[str]:
        try:
            with open(self._session_index(session_id), "rb") as index:
                lines = index.read().decode("ascii", "replace").split()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ArchiveError(f"session index read failed: {errno_name(exc)}") from exc
        return list(dict.fromkeys(line for line in lines if is_valid_id(line)))

    def _entries(self, archive_id: str, session_id: str) -> tuple[RecallEntry, ...] | None:
        """The archive's searchable entries, from the cache (archives never change) or
        read once; None when it is gone or belongs to another session."""
        with self._cache_lock:
            cached = self._cache.get(archive_id)
            if cached is not None:
                self._cache.move_to_end(archive_id)
        if cached is None:
            archive = self.load(archive_id)
            if archive is None:
                return None
            cached = (archive.ref.session_id, index_archive(archive.messages))
            with self._cache_lock:
                self._cache[archive_id] = cached
                self._cached_chars += _chars(cached[1])
                while self._cached_chars > self._cache_chars and len(self._cache) > 1:
                    _, (_, dropped) = self._cache.popitem(last=False)
                    self._cached_chars -= _chars(dropped)
        owner, entries = cached
        return entries if owner == session_id else None

    def _session_index(self, session_id: str) -> str:
        return os.path.join(self._data_dir, INDEX_DIRNAME, session_id + ".ids")

    def load(self, archive_id: str) -> Archive | None:
        if not is_valid_id(archive_id):
            return None
        try:
            data = read_regular(self._path(archive_id))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ArchiveError(f"archive read failed: {errno_name(exc)}") from exc
        if data is None:
            raise ArchiveError("archive is not a regular file")
        return decode_archive(archive_id, data)

    def delete(self, archive_id: str) -> None:
        """Removes the archive of a compaction that was refused (its result was not kept);
        a missing one is already gone. Its parsed entries go too: a job writes its id
        again, and recall must read what is there, not what was."""
        if not is_valid_id(archive_id):
            raise ArchiveError("invalid archive id")
        with self._cache_lock:
            cached = self._cache.pop(archive_id, None)
            if cached is not None:
                self._cached_chars -= _chars(cached[1])
        try:
            os.unlink(self._path(archive_id))
            fsync_dir(self._dir)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ArchiveError(f"archive delete failed: {errno_name(exc)}") from exc

    def writable(self) -> bool:
        probe = temp_path(self._dir, "probe")
        try:
            self._ensure_dir()
            os.close(os.open(probe, WRITE_FLAGS, FILE_MODE))
            os.unlink(probe)
        except OSError:
            unlink_quietly(probe)
            return False
        return True

    def _path(self, archive_id: str) -> str:
        return os.path.join(self._dir, archive_id + _SUFFIX)

    def _ensure_dir(self) -> None:
        ensure_dir(self._dir, self._data_dir)

    @staticmethod
    def _exists(path: str) -> bool:
        try:
            os.lstat(path)
        except FileNotFoundError:
            return False
        return True


def encode_archive(archive: Archive) -> bytes:
    """The archive as one JSON document (what is written, byte for byte)."""
    ref = archive.ref
    document = {
        "id": ref.id,
        "session_id": ref.session_id,
        "created_at": archive.created_at,
        "message_count": ref.message_count,
        "sha256": ref.sha256,
        "messages": archive.messages,
    }
    try:
        return dumps(document)
    except orjson.JSONEncodeError as exc:
        raise ArchiveError("archive is not serializable as JSON") from exc


def decode_archive(archive_id: str, data: bytes) -> Archive:
    try:
        document, _ = loads(data, max_number_chars=None)  # numbers as they were sent
    except (ValueError, RecursionError) as exc:
        raise ArchiveError("archive is corrupt: not JSON") from exc
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
