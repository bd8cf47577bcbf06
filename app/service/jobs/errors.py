"""The job manager's refusals, each with its HTTP answer, and what `apply` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.errors import CompactError
from app.core.provider import Violation
from app.core.sessions import Job, JobState

JsonDict = dict[str, Any]


class JobError(CompactError):
    """Base of the job manager's refusals, each with its HTTP answer."""


class SessionBusyError(JobError):
    status = 409
    code = "session_busy"
    field = "session_id"

    def __init__(self, job_id: str) -> None:
        super().__init__(f"the session already has a job in flight: {job_id}")
        self.job_id = job_id


class QueueFullError(JobError):
    status = 503
    code = "queue_full"
    retry_after_seconds = 5

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} jobs are already waiting for a worker")


class JobNotDoneError(JobError):
    status = 409
    code = "job_not_done"
    field = "job_id"

    def __init__(self, state: JobState) -> None:
        super().__init__(f"the job is {state}, not done")
        self.state = state


class PrefixMismatchError(JobError):
    status = 409
    code = "prefix_mismatch"

    def __init__(self, index: int, current_length: int) -> None:
        what = "is missing" if index >= current_length else "differs from the one sent"
        super().__init__(f"messages[{index}] {what}")
        self.index = index

    def details(self) -> list[tuple[str, str]]:
        return [(f"messages[{self.index}]", self.message)]


class SeamError(JobError):
    """The kept messages do not fit after the compacted ones (the job was sent between a
    tool call and its result): applying would break a provider rule."""

    status = 409
    code = "invalid_seam"

    def __init__(self, broken: list[Violation]) -> None:
        super().__init__("; ".join(f"messages[{v.index}] {v}" for v in broken))
        self.violations = broken

    def details(self) -> list[tuple[str, str]]:
        return [(f"messages[{v.index}]", str(v)) for v in self.violations]


@dataclass(frozen=True)
class Applied:
    job: Job
    messages: list[JsonDict]
    replaced_message_count: int
    kept_message_count: int
