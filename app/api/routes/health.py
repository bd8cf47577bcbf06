"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

import anyio
from anyio import to_thread
from fastapi import APIRouter

from app.api.deps import DataDirDep, ServiceDep
from app.api.responses import JsonResponse
from app.api.schemas import HealthResponse, ReadyResponse
from app.core.ports import ExplainsReadiness

router = APIRouter(tags=["health"])

# A store that explains its readiness (the database) bounds its own check; this bounds the
# wait for it too, should every worker thread be busy: a probe answers within seconds.
READY_CHECK_SECONDS = 2.5


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
    checks = {"tokenizer_loaded": service.tokenizer.count("ready") > 0}
    reasons: dict[str, str] = {}
    store = service.archive
    if isinstance(store, ExplainsReadiness):
        reason: str | None = f"no answer within {READY_CHECK_SECONDS:g} s"
        with anyio.move_on_after(READY_CHECK_SECONDS):
            reason = await to_thread.run_sync(store.unavailable_reason, abandon_on_cancel=True)
        checks[store.check_name] = reason is None
        if reason is not None:
            reasons[store.check_name] = reason
    else:
        checks["data_dir_writable"] = await to_thread.run_sync(store.writable)
    # an empty probe file fits on a full disk: ask how much room is left
    checks["data_dir_has_room"] = await to_thread.run_sync(data_dir.has_room)
    checks["workdir_readable"] = await to_thread.run_sync(service.workdir.readable)
    ready = all(checks.values())
    fallback = service.fallback
    body = ReadyResponse(
        ready=ready,
        checks=checks,
        reasons=reasons or None,
        summarizer=service.summarizer.name,
        summary_fallback=fallback.name if fallback is not None else "none",
    ).model_dump(exclude_none=True)
    return JsonResponse(body, status_code=200 if ready else 503)
