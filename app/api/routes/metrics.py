"""`GET /metrics`: Prometheus text exposition (never behind auth: scrapers have no token)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.api.deps import MetricsDep

router = APIRouter(tags=["health"])


@router.get(
    "/metrics",
    summary="Prometheus metrics: requests, compactions, tokens, summarizer latency",
    response_class=Response,
    responses={
        200: {
            "content": {"text/plain": {"schema": {"type": "string"}}},
            "description": "Prometheus text format",
        }
    },
)
async def metrics(recorder: MetricsDep) -> Response:
    body, content_type = recorder.exposition()
    return Response(body, media_type=content_type)
