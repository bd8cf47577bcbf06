"""Bodies of the background compaction routes (`/compactions`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.api.examples import EXAMPLE_MESSAGES
from app.api.schemas import (
    ANY_MESSAGE_ITEMS,
    CompactResponse,
    Messages,
    MessagesField,
)
from app.core.sessions import Job, JobState
from app.core.vocabulary import Format


class JobResponse(BaseModel):
    """A background compaction. `result` (the answer `/compact` would have given) is set
    once the job is `done`."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "00001763850000000000-a1b2c3d4e5f6",
                    "session_id": "session-42",
                    "state": "running",
                    "reason": None,
                    "message": None,
                    "format": "anthropic",
                    "created_at": "2026-11-22T22:00:00+00:00",
                    "finished_at": None,
                    "sent_count": 212,
                    "sent_sha256": (
                        "df689ec28f0e444d2a0a1a8ccdc78e017f8f229dbef077ac56d039dd664bbd83"
                    ),
                    "replaces_message_count": None,
                    "result": None,
                    "owner": "context-compact-7d9f-1-a1b2c3",
                    "heartbeat_at": "2026-11-22T22:00:20+00:00",
                    "cancel_requested": False,
                }
            ]
        }
    )
    id: str
    session_id: str | None
    state: JobState = Field(
        description="queued | running | done | failed | cancelled (`reason` says why)."
    )
    reason: str | None = Field(
        None,
        description=(
            "Why the job failed or stopped: invalid_conversation, error, deadline_exceeded "
            "(it ran longer than `COMPACT_REQUEST_TIMEOUT`), interrupted (the service "
            "stopped while it ran), cancelled."
        ),
    )
    message: str | None = Field(None, description="Details of the failure, for people.")
    format: Format = Field(description="The format of the sent messages and of the result.")
    created_at: str
    finished_at: str | None
    sent_count: int = Field(description="How many messages were sent (in the request's format).")
    sent_sha256: str = Field(description="sha256 of the sent messages' canonical JSON.")
    replaces_message_count: int | None = Field(
        None,
        description=(
            "When done: how many of the sent messages the result replaces: `sent_count` "
            "when compacted, 0 when not (apply then returns the list unchanged)."
        ),
    )
    result: CompactResponse | None = Field(None, description="The compaction result, when done.")
    owner: str | None = Field(
        None, description="The replica that accepted the job and runs it (host-pid-random)."
    )
    heartbeat_at: str | None = Field(
        None,
        description=(
            "When the owner last renewed the job's lease; a job in flight whose lease "
            "(`COMPACT_JOB_LEASE_SECONDS`) ran out is reported `failed: interrupted`."
        ),
    )
    cancel_requested: bool = Field(
        False,
        description=(
            "A DELETE reached a replica other than the owner: the owner cancels the job at "
            "its next heartbeat (within a third of the lease), unless it finished first."
        ),
    )


def job_json(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "session_id": job.session_id,
        "state": job.state,
        "reason": job.reason,
        "message": job.message,
        "format": job.format,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "sent_count": job.sent_count,
        "sent_sha256": job.sent_sha256,
        "replaces_message_count": job.replaces_message_count,
        "result": job.result,
        "owner": job.owner,
        "heartbeat_at": job.heartbeat_at.isoformat() if job.heartbeat_at else None,
        "cancel_requested": job.cancel_requested,
    }


class ApplyRequest(BaseModel):
    """The agent's current message list: what was sent, then anything appended since."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"messages": EXAMPLE_MESSAGES}]},
    )
    messages: Messages = MessagesField


class ApplyResponse(BaseModel):
    """The agent's list with the sent prefix swapped for the compacted messages."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "job_id": "00001763850000000000-a1b2c3d4e5f6",
                    "compacted": True,
                    "format": "anthropic",
                    "replaced_message_count": 4,
                    "kept_message_count": 1,
                    "messages": EXAMPLE_MESSAGES[:1],
                }
            ]
        }
    )
    job_id: str
    compacted: bool = Field(description="False when the job's compaction compacted nothing.")
    format: Format
    replaced_message_count: int = Field(description="Sent messages replaced by the result.")
    kept_message_count: int = Field(description="Messages appended since, kept after it.")
    messages: list[dict[str, Any]] = Field(
        description="The compacted messages, then every newer one, in the job's format.",
        json_schema_extra=ANY_MESSAGE_ITEMS,
    )
