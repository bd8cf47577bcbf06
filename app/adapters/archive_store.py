"""Archives as one JSON file each: `{data_dir}/archives/{id}.json`.

A save is atomic and durable before it returns: write a unique temp file in the same
directory, fsync it, `os.replace` it onto the final name, fsync the directory. Any OSError
becomes an `ArchiveError` naming the errno, with the temp file removed; a failed fsync is
never retried (the page cache may already have dropped the data), so the caller must
write the whole archive again. Archives are immutable: an existing id is never replaced.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import orjson

from app.adapters.files import (
    FILE_MODE,
    STALE_TEMP_SECONDS,
    WRITE_FLAGS,
    ensure_dir,
    errno_name,
    fsync_dir,
    read_regular,
    remove_stale_temps,
    temp_path,
    unlink_quietly,
    write_temp,
)
from app.core.errors import ArchiveError
from app.core.ids import is_valid_id
from app.core.ports import Archive, ArchiveRef

log = logging.getLogger("context_compact.archive")

ARCHIVES_DIRNAME = "archives"
_SUFFIX = ".json"


class FileArchiveStore:
    """`ArchiveStore` on the local file system."""

    def __init__(self, data_dir: str) -> None:
        self._data_dir = data_dir
        self._dir = os.path.join(data_dir, ARCHIVES_DIRNAME)
        # Makes "refuse an existing id, then replace" atomic between threads of this process.
        self._publish_lock = threading.Lock()

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
        a missing one is already gone."""
        if not is_valid_id(archive_id):
            raise ArchiveError("invalid archive id")
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

    def remove_stale_temps(self, older_than: float = STALE_TEMP_SECONDS) -> list[str]:
        """Deletes temp files of writes killed mid-way (run at start-up); the names removed."""
        removed = remove_stale_temps(self._dir, older_than)
        if removed:
            log.warning("removed stale archive temp files", extra={"count": len(removed)})
        return removed

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
        return orjson.dumps(document)
    except orjson.JSONEncodeError as exc:
        raise ArchiveError("archive is not serializable as JSON") from exc


def decode_archive(archive_id: str, data: bytes) -> Archive:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
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
