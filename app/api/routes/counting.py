"""`POST /count` and `POST /should-compact`."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ServiceDep
from app.api.dialect import read_messages
from app.api.errors import ApiError
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute
from app.api.schemas import (
    CountRequest,
    CountResponse,
    ErrorResponse,
    ShouldCompactRequest,
    ShouldCompactResponse,
)

router = APIRouter(
    route_class=FastJsonRoute,
    tags=["counting"],
    responses={
        415: UNSUPPORTED_MEDIA_TYPE,
        422: {"model": ErrorResponse},
        504: {"model": ErrorResponse},
    },
)


@router.post("/count", summary="Count the tokens of a message list")
async def count(body: CountRequest, service: ServiceDep) -> CountResponse:
    """Exact cl100k_base counts (offline), or Anthropic's own with `tokenizer: anthropic`.
    Each message counts its role and its blocks' text; an empty list counts 0; the same
    conversation counts the same in either format."""
    messages, fmt = read_messages(body.messages, body.format)
    counted = await service.count_with(messages, body.tokenizer)
    return CountResponse.of(counted, len(body.messages), fmt)


@router.post("/should-compact", summary="Decide whether the context needs compacting")
async def should_compact(body: ShouldCompactRequest, service: ServiceDep) -> ShouldCompactResponse:
    """`should_compact` when tokens >= threshold x window and there are at least
    `min_messages` messages; `overflow` at the overflow threshold."""
    messages, fmt = read_messages(body.messages, body.format)
    try:
        thresholds = service.thresholds(
            context_window=body.context_window,
            threshold=body.threshold,
            overflow_threshold=body.overflow_threshold,
            min_messages=body.min_messages,
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc), field="overflow_threshold") from exc
    usage = body.last_usage.model_dump(exclude_none=True) if body.last_usage else None
    decision, source, counted = await service.should_compact(
        messages, thresholds, usage, body.pending_input, body.tokenizer
    )
    warnings = list(counted.warnings) if counted else []
    held = await service.session_hold(body.session_id, messages, decision, thresholds, warnings)
    return ShouldCompactResponse(
        should_compact=decision.should_compact and held is None,
        overflow=decision.overflow,
        reason=held.hold.reason if held else decision.reason.value,
        detail=held.hold.detail if held else None,
        retry_at_tokens=held.hold.retry_at_tokens if held else None,
        refilling=list(held.refilling) if held else [],
        token_count=decision.token_count,
        token_source=source,
        threshold_tokens=thresholds.threshold_tokens,
        overflow_tokens=thresholds.overflow_tokens,
        context_window=thresholds.context_window,
        message_count=decision.message_count,
        format=fmt,
        exact=counted.exact if counted else True,
        warnings=warnings,
    )
