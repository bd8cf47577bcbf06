"""An example error answer per status, and per operation where one operation's answer
differs (a 503 is `busy` for `/compact`, `queue_full` for `/compactions`): Swagger UI and
ReDoc show each status with what the service really answers, not one 422 for every code."""

from __future__ import annotations

from typing import Any

CONTENT_TYPE = "headers.content-type"
JOB = "3f2a9c4e8b7d4a1f9e6c5b4a3d2e1f00"


def _error(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    details = [{"field": field, "message": message}] if field else []
    shown = f"{field}: {message}" if field in ("body",) else message
    return {"error": code, "message": shown, "details": details}


BY_STATUS: dict[str, dict[str, Any]] = {
    "400": _error("invalid_json", "not valid JSON: Expecting value at character 16", "body"),
    "401": _error("unauthorized", "this server needs an `Authorization: Bearer <token>` header"),
    "404": _error("not_found", f"no job {JOB} (unknown or expired)", "job_id"),
    "409": _error("session_busy", f"the session already has a job in flight: {JOB}", "session_id"),
    "413": _error("request_too_large", "request body exceeds 33554432 bytes"),
    "415": _error(
        "unsupported_media_type",
        "the request body must be JSON with a `content-type: application/json` header; "
        "got `application/x-www-form-urlencoded`",
        CONTENT_TYPE,
    ),
    "503": _error("busy", "all 64 summary slots are busy (waited 1 s); retry shortly"),
    "504": _error("deadline_exceeded", "the request took longer than 300 s"),
}
BY_OPERATION: dict[tuple[str, str], dict[str, Any]] = {
    ("startCompaction", "503"): _error("queue_full", "64 jobs are already waiting for a worker"),
    ("getCompaction", "503"): _error("job_store_failed", "cannot read the job: disk I/O error"),
    ("cancelCompaction", "503"): _error("job_store_failed", "cannot write the job: disk I/O error"),
    ("applyCompaction", "409"): _error("job_not_done", "the job is running, not done", "job_id"),
    ("applyCompaction", "503"): _error("job_store_failed", "cannot read the job: disk I/O error"),
    ("getArchive", "404"): _error("not_found", "no archive 20261125-210000-5f1c", "archive_id"),
    ("getArchive", "503"): _error("archive_unreadable", "cannot read the archive: disk I/O error"),
    ("listCompactions", "503"): _error(
        "records_unreadable", "cannot read the session records: disk I/O error"
    ),
    ("recall", "503"): _error("archive_unreadable", "cannot read the archive: disk I/O error"),
}


def error_example(operation_id: str, status: str) -> dict[str, Any] | None:
    """The example for this operation's `status` answer; `None` for 422 (the
    `ErrorResponse` schema's own example is a 422) and statuses without one."""
    return BY_OPERATION.get((operation_id, status)) or BY_STATUS.get(status)
