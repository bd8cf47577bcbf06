"""Job records as one JSON file each: `{data_dir}/jobs/{id}.json`, written atomically
(`app.adapters.files.replace_durably`), so a restart, or another replica on the same data
directory, finds every result.

Beside them: `{id}.cancel`, an empty file, a cancel request for a job another replica runs
(only the owner writes a live job's record, so a request never races with its heartbeat);
and `sessions/{session_id}`, holding the id of the session's latest job, so a submit finds
a session's job in flight with one read instead of reading every record."""

from __future__ import annotations

import logging
import os
from typing import Any

import orjson

from app.adapters.files import (
    ensure_dirs,
    errno_name,
    final_names,
    fsync_dir,
    read_regular,
    replace_durably,
)
from app.core.json_numbers import dumps, loads
from app.core.sessions import JobStoreError, is_valid_id

JOBS_DIRNAME = "jobs"
SESSIONS_DIRNAME = "sessions"
_SUFFIX = ".json"
_CANCEL_SUFFIX = ".cancel"

log = logging.getLogger("context_compact.jobs")


class FileJobStore:
    """`JobStore` on the local file system."""

    def __init__(self, data_dir: str) -> None:
        self._data_dir = data_dir
        self._dir = os.path.join(data_dir, JOBS_DIRNAME)
        self._sessions = os.path.join(self._dir, SESSIONS_DIRNAME)

    def save(self, job: dict[str, Any]) -> None:
        job_id = job.get("id")
        if not isinstance(job_id, str) or not is_valid_id(job_id):
            raise JobStoreError("invalid job id")
        try:
            data = dumps(job)  # a result's messages hold numbers as sent
        except orjson.JSONEncodeError as exc:
            raise JobStoreError("job is not serializable as JSON") from exc
        try:
            ensure_dirs(self._data_dir, JOBS_DIRNAME)
            replace_durably(self._dir, job_id + _SUFFIX, data)
        except OSError as exc:
            raise JobStoreError(f"job write failed: {errno_name(exc)}") from exc

    def load(self, job_id: str) -> dict[str, Any] | None:
        """The record, or None when there is none or it is corrupt (logged). Raises
        `JobStoreError` when it cannot be read."""
        if not is_valid_id(job_id):
            return None
        try:
            data = read_regular(os.path.join(self._dir, job_id + _SUFFIX))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JobStoreError(f"job read failed: {errno_name(exc)}") from exc
        return _document(job_id, data)

    def load_all(self) -> list[dict[str, Any]]:
        """Every readable record; unreadable or corrupt files are logged and skipped."""
        try:
            names = final_names(self._dir, _SUFFIX)
        except OSError as exc:
            raise JobStoreError(f"job directory unreadable: {errno_name(exc)}") from exc
        jobs = []
        for name in names:
            job_id = name.removesuffix(_SUFFIX)
            if not is_valid_id(job_id):
                continue
            try:
                data = read_regular(os.path.join(self._dir, name))
            except FileNotFoundError:  # deleted meanwhile by another replica
                continue
            except OSError as exc:
                log.warning("skipping unreadable job file", extra={"job": name, "error": str(exc)})
                continue
            document = _document(job_id, data)
            if document is not None:
                jobs.append(document)
        return jobs

    def delete(self, job_id: str) -> None:
        """Deletes the record and its cancel request; deleting what another replica
        already deleted is fine."""
        if not is_valid_id(job_id):
            return
        removed = [
            _unlink(os.path.join(self._dir, job_id + suffix))
            for suffix in (_SUFFIX, _CANCEL_SUFFIX)
        ]
        if any(removed):
            _sync(self._dir, "job delete failed")

    def request_cancel(self, job_id: str) -> None:
        if not is_valid_id(job_id):
            raise JobStoreError("invalid job id")
        try:
            ensure_dirs(self._data_dir, JOBS_DIRNAME)
            replace_durably(self._dir, job_id + _CANCEL_SUFFIX, b"")
        except OSError as exc:
            raise JobStoreError(f"cancel request not written: {errno_name(exc)}") from exc

    def cancel_requested(self, job_id: str) -> bool:
        return is_valid_id(job_id) and os.path.isfile(
            os.path.join(self._dir, job_id + _CANCEL_SUFFIX)
        )

    def set_session_job(self, session_id: str, job_id: str) -> None:
        if not is_valid_id(session_id) or not is_valid_id(job_id):
            raise JobStoreError("invalid session or job id")
        try:
            ensure_dirs(self._data_dir, JOBS_DIRNAME, SESSIONS_DIRNAME)
            replace_durably(self._sessions, session_id, job_id.encode())
        except OSError as exc:
            raise JobStoreError(f"session index write failed: {errno_name(exc)}") from exc

    def session_job(self, session_id: str) -> str | None:
        if not is_valid_id(session_id):
            return None
        try:
            data = read_regular(os.path.join(self._sessions, session_id))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JobStoreError(f"session index unreadable: {errno_name(exc)}") from exc
        job_id = data.decode("ascii", "replace") if data is not None else ""
        return job_id if is_valid_id(job_id) else None

    def session_jobs(self) -> dict[str, str]:
        try:
            names = sorted(n for n in os.listdir(self._sessions) if is_valid_id(n))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise JobStoreError(f"session index unreadable: {errno_name(exc)}") from exc
        index = {}
        for name in names:
            job_id = self.session_job(name)
            if job_id is not None:
                index[name] = job_id
        return index

    def delete_session(self, session_id: str, job_id: str) -> None:
        """Deletes the entry if it still names `job_id` (a submit may have replaced it
        since it was listed; the window left between this read and the unlink is tiny)."""
        if self.session_job(session_id) != job_id:
            return
        if _unlink(os.path.join(self._sessions, session_id)):
            _sync(self._sessions, "session index delete failed")


def _unlink(path: str) -> bool:
    """True when the file was there. Raises `JobStoreError` for failures but a missing
    file."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise JobStoreError(f"job delete failed: {errno_name(exc)}") from exc
    return True


def _sync(directory: str, what: str) -> None:
    try:
        fsync_dir(directory)
    except OSError as exc:
        raise JobStoreError(f"{what}: {errno_name(exc)}") from exc


def _document(job_id: str, data: bytes | None) -> dict[str, Any] | None:
    try:
        document = loads(data, max_number_chars=None)[0] if data is not None else None
    except (ValueError, RecursionError) as exc:
        log.warning("skipping unreadable job file", extra={"job": job_id, "error": str(exc)})
        return None
    if isinstance(document, dict) and document.get("id") == job_id:
        return document
    log.warning("skipping corrupt job file", extra={"job": job_id})
    return None
