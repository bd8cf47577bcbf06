"""Background compaction: `POST /compactions`, `GET|DELETE /compactions/{id}`,
`POST /compactions/{id}/apply`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import BetaHeaderDep, JobsDep, ServiceDep
from app.api.dialect import compact_request, read_messages
from app.api.errors import ApiError
from app.api.ids import require_id
from app.api.job_schemas import ApplyRequest, ApplyResponse, JobResponse, job_json
from app.api.responses import JsonResponse
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute
from app.api.schemas import CompactRequestBody, ErrorResponse
from app.core.provider import OpenAIForms, dump_as
from app.core.sessions import Job
from app.service.jobs import JobManager

router = APIRouter(
    route_class=FastJsonRoute,
    tags=["background compaction"],
    responses={404: {"model": ErrorResponse}, 422: {"model": ErrorResponse}},
)


def _not_found(job_id: str) -> ApiError:
    return ApiError(404, "not_found", f"no job {job_id} (unknown or expired)", field="job_id")


@router.post(
    "/compactions",
    summary="Start a compaction in the background",
    status_code=202,
    response_model=JobResponse,
    responses={
        409: {"model": ErrorResponse},
        415: UNSUPPORTED_MEDIA_TYPE,
        503: {"model": ErrorResponse},
    },
)
async def start_compaction(
    body: CompactRequestBody,
    jobs: JobsDep,
    service: ServiceDep,
    anthropic_beta: BetaHeaderDep = None,
) -> Any:
    """Takes the body of `/compact` and answers 202 at once with the job; poll
    `GET /compactions/{id}`. A session with a job queued or running gets 409
    `session_busy`; when too many jobs wait for a worker, 503 `queue_full` with
    `Retry-After`. An input that `/compact` would refuse fails the job with reason
    `invalid_conversation`."""
    request = await compact_request(body, OpenAIForms(), service, anthropic_beta)
    head = request.provider.head if request.provider is not None else 0  # a top-level system
    sent = dump_as(request.messages[head:], request.format, request.forms)
    job = await jobs.submit(request, sent)
    return JsonResponse(
        job_json(job), status_code=202, headers={"Location": f"/compactions/{job.id}"}
    )


async def _job(jobs: JobManager, job_id: str) -> Job:
    require_id(job_id, "job_id")
    job = await jobs.get(job_id)
    if job is None:
        raise _not_found(job_id)
    return job


@router.get(
    "/compactions/{job_id}",
    summary="The state of a background compaction",
    response_model=JobResponse,
    responses={503: {"model": ErrorResponse}},
)
async def get_compaction(job_id: str, jobs: JobsDep) -> Any:
    """Its state; when `done`, the result, how many sent messages it replaces and their
    sha256. Any replica answers for any job (records are on the shared data directory).
    Unknown and expired jobs are 404."""
    return JsonResponse(job_json(await _job(jobs, job_id)))


@router.delete(
    "/compactions/{job_id}",
    summary="Cancel a background compaction",
    response_model=JobResponse,
    responses={
        202: {"model": JobResponse, "description": "Cancel requested from the owner replica"},
        503: {"model": ErrorResponse},
    },
)
async def cancel_compaction(job_id: str, jobs: JobsDep) -> Any:
    """A queued or running job becomes `cancelled`; a finished job is forgotten (a later
    GET is 404). Answers the job as it is now (or was). A job that another replica runs
    is answered `202` with `cancel_requested: true`: its owner cancels it within a third
    of the lease, unless it finishes first."""
    require_id(job_id, "job_id")
    job = await jobs.cancel(job_id)
    if job is None:
        raise _not_found(job_id)
    return JsonResponse(job_json(job), status_code=202 if job.cancel_requested else 200)


@router.post(
    "/compactions/{job_id}/apply",
    summary="Swap a finished compaction into the agent's current message list",
    response_model=ApplyResponse,
    responses={
        409: {"model": ErrorResponse},
        415: UNSUPPORTED_MEDIA_TYPE,
        503: {"model": ErrorResponse},
    },
)
async def apply_compaction(job_id: str, body: ApplyRequest, jobs: JobsDep) -> Any:
    """Send the current list (what was sent, then what was appended since; in the job's
    format). The answer is the compacted messages followed by every newer message. If the
    list does not start with exactly the sent messages: 409 `prefix_mismatch` naming the
    first index that differs; a job not `done`: 409 `job_not_done`. A kept list that
    starts with an assistant message gets a user `Continue.` before it; one that would
    break a provider rule after the compacted messages (a tool result whose call was
    summarized: the job was sent between a tool call and its result) is 409
    `invalid_seam`, indexes in the applied list. Nothing is changed on the server."""
    job = await _job(jobs, job_id)
    forms = OpenAIForms()
    messages, fmt = read_messages(body.messages, job.format, forms)
    applied = await jobs.apply(job_id, dump_as(messages, fmt, forms))
    if applied is None:
        raise _not_found(job_id)
    return JsonResponse(
        {
            "job_id": job_id,
            "compacted": bool(applied.replaced_message_count),
            "format": fmt,
            "replaced_message_count": applied.replaced_message_count,
            "kept_message_count": applied.kept_message_count,
            "messages": applied.messages,
        }
    )
