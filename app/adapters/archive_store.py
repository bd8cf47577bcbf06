"""Archives as one JSON file each: `{data_dir}/archives/{id}.json`.

A save is atomic and durable before it returns: write a unique temp file in the same
directory, fsync it, `os.replace` it onto the final name, fsync the directory. Any OSError
becomes an `ArchiveError` naming the errno, with the temp file removed; a failed fsync is
never retried (the page cache may already have dropped the data), so the caller must
write the whole archive again. Archives are immutable: an existing id is never replaced.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
from typing import Any

import orjson

from app.core.errors import ArchiveError
from app.core.ids import is_valid_id
from app.core.ports import Archive, ArchiveRef

ARCHIVES_DIRNAME = "archives"
_SUFFIX = ".json"
_DIR_MODE = 0o700
_FILE_MODE = 0o600
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_DIR_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY


def _errno_name(exc: OSError) -> str:
    if exc.errno is None:
        return type(exc).__name__
    return errno.errorcode.get(exc.errno, f"errno {exc.errno}")


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, _DIR_FLAGS)
    try:
        os.fsync(fd)
    finally:
        _close_quietly(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "short write")
        view = view[written:]


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
        data = self._encode(archive)
        final = self._path(ref.id)
        temp = os.path.join(self._dir, f".{ref.id}.{secrets.token_hex(8)}.tmp")
        published = False
        try:
            self._ensure_dir()
            self._write_temp(temp, data)
            with self._publish_lock:
                if self._exists(final):
                    raise ArchiveError("archive already exists")
                os.replace(temp, final)
            published = True
            _fsync_dir(self._dir)
        except OSError as exc:
            if published:
                # The name may not survive a crash: withdraw it, so the caller writes the
                # whole archive again instead of trusting it.
                _unlink_quietly(final)
            raise ArchiveError(f"archive write failed: {_errno_name(exc)}") from exc
        finally:
            if not published:
                _unlink_quietly(temp)

    def load(self, archive_id: str) -> Archive | None:
        if not is_valid_id(archive_id):
            return None
        try:
            data = self._read(self._path(archive_id))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ArchiveError(f"archive read failed: {_errno_name(exc)}") from exc
        if data is None:
            raise ArchiveError("archive is not a regular file")
        return _decode(archive_id, data)

    def writable(self) -> bool:
        probe = os.path.join(self._dir, f".probe.{secrets.token_hex(8)}.tmp")
        try:
            self._ensure_dir()
            os.close(os.open(probe, _WRITE_FLAGS, _FILE_MODE))
            os.unlink(probe)
        except OSError:
            _unlink_quietly(probe)
            return False
        return True

    def _path(self, archive_id: str) -> str:
        return os.path.join(self._dir, archive_id + _SUFFIX)

    def _ensure_dir(self) -> None:
        if os.path.isdir(self._dir):
            return
        os.makedirs(self._dir, mode=_DIR_MODE, exist_ok=True)
        _fsync_dir(self._data_dir)

    @staticmethod
    def _exists(path: str) -> bool:
        try:
            os.lstat(path)
        except FileNotFoundError:
            return False
        return True

    @staticmethod
    def _encode(archive: Archive) -> bytes:
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

    @staticmethod
    def _write_temp(path: str, data: bytes) -> None:
        fd = os.open(path, _WRITE_FLAGS, _FILE_MODE)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError:
            _close_quietly(fd)
            raise
        os.close(fd)

    @staticmethod
    def _read(path: str) -> bytes | None:
        """The file's bytes, or None when it is not a regular file (FIFO, device, dir)."""
        fd = os.open(path, _READ_FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            _close_quietly(fd)


def _decode(archive_id: str, data: bytes) -> Archive:
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
