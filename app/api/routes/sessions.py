"""A session's compaction records, oldest first, and recall over its archives."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.deadline import DEADLINE_STATE
from app.api.deps import RecallerDep, ServiceDep
from app.api.ids import require_id
from app.api.recall_schemas import RecallHitInfo, RecallRequest, RecallResponse
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute
from app.api.schemas import ErrorResponse, SessionCompactionsResponse

router = APIRouter(
    route_class=FastJsonRoute, tags=["sessions"], responses={422: {"model": ErrorResponse}}
)


@router.get(
    "/sessions/{session_id}/compactions",
    summary="The compaction records of a session",
    responses={503: {"model": ErrorResponse}},
)
async def list_compactions(session_id: str, service: ServiceDep) -> SessionCompactionsResponse:
    """Every compaction the session attempted, oldest first: compacted, or failed on the way
    (archive_failed, summarization_failed). A session with none has an empty list."""
    require_id(session_id, "session_id")
    records = await service.list_records(session_id)
    return SessionCompactionsResponse(session_id=session_id, records=records)


@router.post(
    "/sessions/{session_id}/recall",
    summary="Search the archived messages of a session",
    responses={
        415: UNSUPPORTED_MEDIA_TYPE,
        503: {"model": ErrorResponse},
        504: {"model": ErrorResponse},
    },
    response_model=RecallResponse,
)
async def recall_session(
    session_id: str, body: RecallRequest, recaller: RecallerDep, request: Request
) -> RecallResponse:
    """Snippets of the session's archived messages that match the query, best first, with
    the archive id and message index to fetch the whole message (`GET /archives/{id}`).
    Only this session's archives are searched; a session with none gives no hits. The
    query's terms past the 64th are not searched (`dropped_terms`). 422 for a malformed
    session id or body; 503 `archive_unreadable` when an archive or its index cannot be
    read, 503 `busy` (with `Retry-After`) when every recall slot stays taken; 504
    `deadline_exceeded` when the search passes the request's deadline (it stops there)."""
    require_id(session_id, "session_id")
    due = getattr(request.state, DEADLINE_STATE, None)
    answer = await recaller.recall(session_id, body.query, body.limit, due)
    return RecallResponse(
        session_id=session_id,
        query=body.query,
        hits=[
            RecallHitInfo(
                archive_id=h.archive_id,
                message_index=h.message_index,
                role=h.role,
                tool_name=h.tool_name,
                snippet=h.snippet,
                score=h.score,
            )
            for h in answer.hits
        ],
        dropped_terms=list(answer.dropped_terms),
        complete=answer.complete,
    )
