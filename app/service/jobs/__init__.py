"""Background compaction jobs (`JobManager`, in `manager`), split by what it does:
submitting, running, leasing and take-over, cancelling."""

from app.service.jobs.errors import (
    Applied,
    JobError,
    JobNotDoneError,
    JsonDict,
    PrefixMismatchError,
    QueueFullError,
    SeamError,
    SessionBusyError,
)
from app.service.jobs.manager import JobManager, new_instance_id
from app.service.jobs.stored import request_from_json, request_to_json
from app.service.jobs.table import INTERRUPTED_MESSAGE, JobPolicy

__all__ = [
    "INTERRUPTED_MESSAGE",
    "Applied",
    "JobError",
    "JobManager",
    "JobNotDoneError",
    "JobPolicy",
    "JsonDict",
    "PrefixMismatchError",
    "QueueFullError",
    "SeamError",
    "SessionBusyError",
    "new_instance_id",
    "request_from_json",
    "request_to_json",
]
