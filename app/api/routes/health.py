"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from fastapi import APIRouter

from app.api.deps import DataDirDep, ServiceDep
from app.api.responses import JsonResponse
from app.api.schemas import HealthResponse, ReadyResponse

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process answers")
async def healthz() -> HealthResponse:
    return HealthResponse()


@router.get(
    "/readyz",
    summary=(
        "Readiness: tokenizer loaded, data dir writable with room to spare, work dir readable"
    ),
    response_model=ReadyResponse,
    responses={503: {"model": ReadyResponse}},
)
async def readyz(service: ServiceDep, data_dir: DataDirDep) -> Any:
    checks = {
        "tokenizer_loaded": service.tokenizer.count("ready") > 0,
        "data_dir_writable": await to_thread.run_sync(service.archive.writable),
        # an empty probe file fits on a full disk: ask how much room is left
        "data_dir_has_room": await to_thread.run_sync(data_dir.has_room),
        "workdir_readable": await to_thread.run_sync(service.workdir.readable),
    }
    ready = all(checks.values())
    body = ReadyResponse(ready=ready, checks=checks).model_dump()
    return JsonResponse(body, status_code=200 if ready else 503)
