"""Background compaction jobs: their record, expiry, and the prefix swap.

A job remembers what the agent sent as one sha256 per message (in the request's format),
so `apply` can name the first message of the agent's current list that differs without
keeping a second copy of the messages. A job in flight also names its `owner` (the
replica running it) and when that owner last said it was alive (`heartbeat_at`): past
the lease, any replica may declare it interrupted. Everything here is pure: times come
in as arguments.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, get_args

import orjson

from app.core.assemble import CONTINUE
from app.core.errors import CompactError
from app.core.json_numbers import dumps
from app.core.messages import Message
from app.core.provider import OpenAIForms, Violation, violations
from app.core.vocabulary import Format

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
IN_FLIGHT: frozenset[JobState] = frozenset({"queued", "running"})

JsonDict = dict[str, Any]

# Put between the compacted messages (which end with an assistant turn) and a kept
# assistant message, so that user and assistant still alternate.
SEAM_USER_MESSAGE: JsonDict = {"role": "user", "content": CONTINUE}


class JobStoreError(CompactError):
    """A job record could not be written, read or deleted (503)."""

    status = 503
    code = "job_store_failed"


class JobTakenOverError(JobStoreError):
    """The job's lease ran out and another replica took it over: this one's writes no
    longer land, and it stops running the job."""


@dataclass(frozen=True)
class Job:
    id: str
    session_id: str | None
    state: JobState
    format: Format
    created_at: datetime
    sent_count: int
    sent_sha256: str
    sent_hashes: tuple[str, ...]
    reason: str | None = None
    message: str | None = None
    finished_at: datetime | None = None
    result: JsonDict | None = None
    owner: str | None = None
    heartbeat_at: datetime | None = None
    # Not in the record: read from the store's cancel request when the job is loaded.
    cancel_requested: bool = False

    @property
    def replaces_message_count(self) -> int | None:
        """How many of the sent messages the result replaces: all of them when compacted,
        none when the compaction answered `compacted: false`; null until done."""
        if self.state != "done" or self.result is None:
            return None
        return self.sent_count if self.result.get("compacted") else 0

    def finish(
        self,
        state: JobState,
        now: datetime,
        *,
        reason: str | None = None,
        message: str | None = None,
        result: JsonDict | None = None,
    ) -> Job:
        return replace(
            self, state=state, finished_at=now, reason=reason, message=message, result=result
        )


class JobStore(Protocol):
    """Where job records live: shared by every replica, so any of them answers for any
    job and a restart keeps finished results.

    Besides the records: one cancel request per job (written by a replica that does not
    own the job, honoured by the owner) and one index entry per session naming its
    latest job (so `session_busy` needs one read, not a scan)."""

    def save(self, job: JsonDict) -> None: ...

    def load(self, job_id: str) -> JsonDict | None: ...

    def load_all(self) -> list[JsonDict]: ...

    def delete(self, job_id: str) -> None:
        """Deletes the record and its cancel request; a missing one is fine."""
        ...

    def request_cancel(self, job_id: str) -> None: ...

    def cancel_requested(self, job_id: str) -> bool: ...

    def set_session_job(self, session_id: str, job_id: str) -> None: ...

    def session_job(self, session_id: str) -> str | None: ...

    def session_jobs(self) -> dict[str, str]:
        """Every session index entry: session id -> job id."""
        ...

    def delete_session(self, session_id: str, job_id: str) -> None:
        """Deletes the entry if it still names `job_id`."""
        ...


class JobQueue(Protocol):
    """A job store that can also hand a job from one replica to another (the database
    store; the file store cannot, and its abandoned jobs end `failed: interrupted`).

    `create` writes a new job in flight together with its request, refusing it when the
    session already has one in flight (decided by the store, not read-then-write);
    `take_over` claims jobs whose lease ran out so this replica runs them to the end;
    `release` hands this replica's jobs in flight to the others at once (a clean stop)."""

    def create(self, job: JsonDict, request: JsonDict) -> str | None:
        """None when written; else the id of the session's job in flight."""
        ...

    def take_over(
        self,
        owner: str,
        now: datetime,
        abandoned_before: datetime,
        limit: int,
        job_id: str | None = None,
    ) -> list[tuple[JsonDict, JsonDict]]:
        """The claimed jobs' records (now `queued`, owned by `owner`) and requests."""
        ...

    def release(self, owner: str, job_ids: Sequence[str]) -> None: ...


def message_sha256(message: JsonDict) -> str:
    """sha256 of one message's canonical JSON (sorted keys, compact)."""
    try:
        canonical = dumps(message, sort_keys=True)
    except orjson.JSONEncodeError as exc:
        raise ValueError(f"message is not serializable as JSON: {exc}") from exc
    return hashlib.sha256(canonical).hexdigest()


def message_hashes(messages: Sequence[JsonDict]) -> tuple[str, ...]:
    return tuple(message_sha256(m) for m in messages)


def first_difference(sent: Sequence[str], current: Sequence[JsonDict]) -> int | None:
    """The first index where `current` does not start with the sent messages, or None.
    A current list shorter than what was sent differs at its own length."""
    for index, expected in enumerate(sent):
        if index >= len(current) or message_sha256(current[index]) != expected:
            return index
    return None


def swap_prefix(job: Job, current: Sequence[JsonDict]) -> list[JsonDict]:
    """The job's compacted messages followed by every message sent after the job was; a
    kept list that starts with an assistant message after a result that ends with one (the
    summary's acknowledgement) gets `SEAM_USER_MESSAGE` between them. The caller has
    checked the prefix with `first_difference`."""
    if job.result is None:
        raise ValueError("job has no result")
    if not job.result.get("compacted"):
        return list(current)
    compacted: list[JsonDict] = list(job.result["messages"])
    kept = list(current[job.sent_count :])
    seam = compacted and kept and compacted[-1].get("role") == kept[0].get("role") == "assistant"
    bridge = [dict(SEAM_USER_MESSAGE)] if seam else []
    return [*compacted, *bridge, *kept]


def seam_violations(messages: Sequence[JsonDict], fmt: Format) -> list[Violation]:
    """The provider rules an applied list breaks (e.g. a kept tool result whose call was
    summarized away). The last message's unanswered tool calls are fine."""
    forms = OpenAIForms()
    parsed = forms.read(messages) if fmt == "openai" else _parse(messages)
    return violations(parsed, fmt, pending_tail_ok=True, forms=forms)


def _parse(messages: Sequence[JsonDict]) -> list[Message]:
    return [Message.model_validate(m) for m in messages]


def is_expired(job: Job, now: datetime, ttl: timedelta) -> bool:
    return job.finished_at is not None and now - job.finished_at >= ttl


def is_abandoned(job: Job, now: datetime, lease: timedelta) -> bool:
    """In flight, but its owner has not renewed the lease in time (it died, or it is a
    record from before leases existed)."""
    if job.state not in IN_FLIGHT:
        return False
    return job.heartbeat_at is None or now - job.heartbeat_at >= lease


def job_to_json(job: Job) -> JsonDict:
    return {
        "id": job.id,
        "session_id": job.session_id,
        "state": job.state,
        "format": job.format,
        "reason": job.reason,
        "message": job.message,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "sent_count": job.sent_count,
        "sent_sha256": job.sent_sha256,
        "sent_hashes": list(job.sent_hashes),
        "result": job.result,
        "owner": job.owner,
        "heartbeat_at": job.heartbeat_at.isoformat() if job.heartbeat_at else None,
    }


def job_from_json(data: JsonDict) -> Job:
    """Raises `ValueError` for a record that is not a job."""
    try:
        state = data["state"]
        fmt = data["format"]
        if state not in get_args(JobState) or fmt not in get_args(Format):
            raise ValueError("unknown state or format")
        finished_at = data.get("finished_at")
        heartbeat_at = data.get("heartbeat_at")
        owner = data.get("owner")
        result = data.get("result")
        hashes = data["sent_hashes"]
        if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
            raise ValueError("sent_hashes is not a list of strings")
        if result is not None and not isinstance(result, dict):
            raise ValueError("result is not an object")
        return Job(
            id=str(data["id"]),
            session_id=data.get("session_id"),
            state=state,
            format=fmt,
            reason=data.get("reason"),
            message=data.get("message"),
            created_at=datetime.fromisoformat(data["created_at"]),
            finished_at=datetime.fromisoformat(finished_at) if finished_at else None,
            sent_count=int(data["sent_count"]),
            sent_sha256=str(data["sent_sha256"]),
            sent_hashes=tuple(hashes),
            result=result,
            owner=str(owner) if owner is not None else None,
            heartbeat_at=datetime.fromisoformat(heartbeat_at) if heartbeat_at else None,
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a job record: {exc}") from exc
