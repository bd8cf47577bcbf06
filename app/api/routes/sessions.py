"""`GET /sessions/{session_id}/compactions`: a session's compaction records, oldest first."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ServiceDep
from app.api.errors import ApiError
from app.api.ids import require_id
from app.api.schemas import ErrorResponse, SessionCompactionsResponse
from app.core.errors import RecordStoreError

router = APIRouter(tags=["sessions"], responses={422: {"model": ErrorResponse}})


@router.get(
    "/sessions/{session_id}/compactions",
    summary="The compaction records of a session",
    responses={503: {"model": ErrorResponse}},
)
async def list_compactions(session_id: str, service: ServiceDep) -> SessionCompactionsResponse:
    """Every compaction the session attempted, oldest first: compacted, or failed on the way
    (archive_failed, summarization_failed). A session with none has an empty list."""
    require_id(session_id, "session_id")
    try:
        records = await service.list_records(session_id)
    except RecordStoreError as exc:
        raise ApiError(503, "records_unreadable", str(exc)) from exc
    return SessionCompactionsResponse(session_id=session_id, records=records)
