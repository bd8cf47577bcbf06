"""Job records as one JSON file each: `{data_dir}/jobs/{id}.json`, written atomically
(`app.adapters.files.replace_durably`), so a restart finds every finished result."""

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
from app.core.ids import is_valid_id
from app.core.jobs import JobStoreError

JOBS_DIRNAME = "jobs"
_SUFFIX = ".json"

log = logging.getLogger("context_compact.jobs")


class FileJobStore:
    """`JobStore` on the local file system."""

    def __init__(self, data_dir: str) -> None:
        self._data_dir = data_dir
        self._dir = os.path.join(data_dir, JOBS_DIRNAME)

    def save(self, job: dict[str, Any]) -> None:
        job_id = job.get("id")
        if not isinstance(job_id, str) or not is_valid_id(job_id):
            raise JobStoreError("invalid job id")
        try:
            data = orjson.dumps(job)
        except orjson.JSONEncodeError as exc:
            raise JobStoreError("job is not serializable as JSON") from exc
        try:
            ensure_dirs(self._data_dir, JOBS_DIRNAME)
            replace_durably(self._dir, job_id + _SUFFIX, data)
        except OSError as exc:
            raise JobStoreError(f"job write failed: {errno_name(exc)}") from exc

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
                document = orjson.loads(data) if data is not None else None
            except (OSError, orjson.JSONDecodeError) as exc:
                log.warning("skipping unreadable job file", extra={"job": name, "error": str(exc)})
                continue
            if isinstance(document, dict) and document.get("id") == job_id:
                jobs.append(document)
            else:
                log.warning("skipping corrupt job file", extra={"job": name})
        return jobs

    def delete(self, job_id: str) -> None:
        if not is_valid_id(job_id):
            return
        try:
            os.unlink(os.path.join(self._dir, job_id + _SUFFIX))
            fsync_dir(self._dir)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise JobStoreError(f"job delete failed: {errno_name(exc)}") from exc
