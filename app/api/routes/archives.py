"""`GET /archives/{archive_id}`: the originals of one compaction (nothing is lost)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import ServiceDep
from app.api.errors import ApiError
from app.api.ids import require_id
from app.api.responses import JsonResponse
from app.api.schemas import ArchiveResponse, ErrorResponse

router = APIRouter(
    tags=["archives"], responses={404: {"model": ErrorResponse}, 422: {"model": ErrorResponse}}
)


@router.get(
    "/archives/{archive_id}",
    summary="The archived original messages of a compaction",
    response_model=ArchiveResponse,
)
async def get_archive(archive_id: str, service: ServiceDep) -> Any:
    """The messages exactly as they were sent, numbers included (written by the one JSON
    writer that keeps their literals, not re-encoded by the response model)."""
    require_id(archive_id, "archive_id")
    archive = await service.load_archive(archive_id)
    if archive is None:
        raise ApiError(404, "not_found", f"no archive {archive_id}", field="archive_id")
    answer = ArchiveResponse(
        id=archive.ref.id,
        session_id=archive.ref.session_id,
        created_at=archive.created_at,
        message_count=archive.ref.message_count,
        sha256=archive.ref.sha256,
        messages=[],
    )
    return JsonResponse(answer.model_dump(mode="json") | {"messages": archive.messages})
