"""Last-seen modification times per session: `{data_dir}/sessions/{session_id}/seen/{key}`.

One small JSON file per (session, file), named by the sha256 of the file's normalised
location, written with `replace_durably` (temp file, fsync, atomic rename, fsync the
directory). Two requests that record different files never touch the same file, and two
that record the same file each replace it whole, so no update is ever half-written or lost
to a read-modify-write of a shared index; every replica reading the same data directory
sees the same times. Kept in process memory instead, they would give each replica its
own idea of what the session has seen.
"""

from __future__ import annotations

import os

import orjson

from app.adapters.files import ensure_dirs, errno_name, read_regular, replace_durably
from app.core.errors import SeenStoreError
from app.core.restore import seen_key
from app.core.sessions import is_valid_id

SESSIONS_DIRNAME = "sessions"
SEEN_DIRNAME = "seen"


class FileSeenStore:
    """`SeenStore` on the local file system."""

    def __init__(self, data_dir: str) -> None:
        self._data_dir = data_dir
        self._sessions = os.path.join(data_dir, SESSIONS_DIRNAME)

    def last_seen(self, session_id: str, location: str) -> int | None:
        path = os.path.join(self._dir(session_id), seen_key(location))
        try:
            data = read_regular(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SeenStoreError(f"seen time unreadable: {errno_name(exc)}") from exc
        try:
            record = orjson.loads(data) if data is not None else None
        except orjson.JSONDecodeError:
            record = None
        if not isinstance(record, dict) or record.get("location") != location:
            raise SeenStoreError("seen time record is damaged")
        mtime = record.get("mtime_ns")
        if not isinstance(mtime, int):
            raise SeenStoreError("seen time record is damaged")
        return mtime

    def remember(self, session_id: str, location: str, mtime_ns: int) -> None:
        directory = self._dir(session_id)
        data = orjson.dumps({"location": location, "mtime_ns": mtime_ns})
        try:
            ensure_dirs(self._data_dir, SESSIONS_DIRNAME, session_id, SEEN_DIRNAME)
            replace_durably(directory, seen_key(location), data)
        except OSError as exc:
            raise SeenStoreError(f"seen time write failed: {errno_name(exc)}") from exc

    def _dir(self, session_id: str) -> str:
        if not is_valid_id(session_id):
            raise SeenStoreError("invalid session id")
        return os.path.join(self._sessions, session_id, SEEN_DIRNAME)
