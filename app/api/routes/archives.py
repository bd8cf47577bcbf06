"""`GET /archives/{archive_id}`: the originals of one compaction (nothing is lost)."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ServiceDep
from app.api.errors import ApiError
from app.api.ids import require_id
from app.api.schemas import ArchiveResponse, ErrorResponse

router = APIRouter(
    tags=["archives"], responses={404: {"model": ErrorResponse}, 422: {"model": ErrorResponse}}
)


@router.get("/archives/{archive_id}", summary="The archived original messages of a compaction")
async def get_archive(archive_id: str, service: ServiceDep) -> ArchiveResponse:
    require_id(archive_id, "archive_id")
    archive = await service.load_archive(archive_id)
    if archive is None:
        raise ApiError(404, "not_found", f"no archive {archive_id}", field="archive_id")
    return ArchiveResponse(
        id=archive.ref.id,
        session_id=archive.ref.session_id,
        created_at=archive.created_at,
        message_count=archive.ref.message_count,
        sha256=archive.ref.sha256,
        messages=archive.messages,
    )
