"""Compaction records as one JSON file each:
`{data_dir}/sessions/{session_id}/compactions/{record_id}.json`.

One file per record, under a unique time-sortable name, written with
`app.adapters.files.replace_durably`: concurrent compactions of one session, in one process
or in several replicas sharing the data directory, never overwrite each other's records
(no read-modify-write of a shared file). Listing sorts the names, which is time order.
"""

from __future__ import annotations

import contextlib
import logging
import os

import orjson
from pydantic import ValidationError

from app.adapters.files import (
    ensure_dirs,
    errno_name,
    final_names,
    fsync_dir,
    read_regular,
    replace_durably,
)
from app.core.errors import RecordStoreError
from app.core.sessions import CompactionRecord, is_valid_id

SESSIONS_DIRNAME = "sessions"
RECORDS_DIRNAME = "compactions"
_SUFFIX = ".json"

log = logging.getLogger("context_compact.records")


class FileRecordStore:
    """`RecordStore` on the local file system. Errors are `RecordStoreError`."""

    def __init__(self, data_dir: str) -> None:
        self._data_dir = data_dir
        self._sessions = os.path.join(data_dir, SESSIONS_DIRNAME)

    def append(self, record: CompactionRecord) -> None:
        if not (is_valid_id(record.id) and is_valid_id(record.session_id)):
            raise RecordStoreError("invalid record or session id")
        try:
            directory = ensure_dirs(
                self._data_dir, SESSIONS_DIRNAME, record.session_id, RECORDS_DIRNAME
            )
            replace_durably(directory, record.id + _SUFFIX, orjson.dumps(record.model_dump()))
        except OSError as exc:
            raise RecordStoreError(f"record write failed: {errno_name(exc)}") from exc

    def withdraw(self, session_id: str, archive_id: str) -> None:
        """Deletes the session's record naming `archive_id` (`app.core.sessions.retention`), looked
        for newest first: the proxy withdraws a compaction it has just made."""
        if not is_valid_id(session_id):
            raise RecordStoreError("invalid session id")
        directory = os.path.join(self._sessions, session_id, RECORDS_DIRNAME)
        try:
            for name in reversed(final_names(directory, _SUFFIX)):
                path = os.path.join(directory, name)
                data = _read(path)
                if data is not None and _names(data, archive_id):
                    with contextlib.suppress(FileNotFoundError):  # withdrawn twice at once
                        os.unlink(path)
                    fsync_dir(directory)
                    return
        except OSError as exc:
            raise RecordStoreError(f"record delete failed: {errno_name(exc)}") from exc

    def list(self, session_id: str) -> list[CompactionRecord]:
        """Every readable record of the session, oldest first; corrupt files are skipped."""
        if not is_valid_id(session_id):
            return []
        directory = os.path.join(self._sessions, session_id, RECORDS_DIRNAME)
        try:
            names = final_names(directory, _SUFFIX)
        except OSError as exc:
            raise RecordStoreError(f"record directory unreadable: {errno_name(exc)}") from exc
        records = []
        for name in names:
            try:
                data = _read(os.path.join(directory, name))
                if data is not None:
                    records.append(CompactionRecord.model_validate(orjson.loads(data)))
            except (OSError, orjson.JSONDecodeError, ValidationError) as exc:
                log.warning("skipping unreadable record", extra={"record": name, "error": str(exc)})
        return records


def _read(path: str) -> bytes | None:
    """The record's bytes; None when it is not a regular file, or is gone since the
    directory was listed (withdrawn, or swept by retention)."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None


def _names(data: bytes, archive_id: str) -> bool:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(document, dict) and document.get("archive_id") == archive_id
