"""`POST /count` and `POST /should-compact`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request

from app.api.deps import SentCountsDep, ServiceDep
from app.api.dialect import read_as, read_messages
from app.api.errors import ApiError
from app.api.routing import FastJsonRoute, parsed_by_orjson
from app.api.schemas import (
    CountRequest,
    CountResponse,
    ErrorResponse,
    ShouldCompactRequest,
    ShouldCompactResponse,
)
from app.api.sent_counts import SentCounts, sent_key
from app.core.dialects import detect_format
from app.service.compaction import CompactionService, Count

router = APIRouter(
    route_class=FastJsonRoute,
    tags=["counting"],
    responses={422: {"model": ErrorResponse}, 504: {"model": ErrorResponse}},
)


@router.post("/count", summary="Count the tokens of a message list")
async def count(
    body: CountRequest, request: Request, service: ServiceDep, sent: SentCountsDep
) -> CountResponse:
    """Exact cl100k_base counts (offline), or Anthropic's own with `tokenizer: anthropic`.
    Each message counts its role and its blocks' text; an empty list counts 0; the same
    conversation counts the same in either format."""
    fmt = detect_format(body.messages) if body.format == "auto" else body.format
    remembered = fmt == "anthropic" and body.tokenizer == "tiktoken" and parsed_by_orjson(request)
    if sent is not None and remembered:
        counted = await _count_unseen(body.messages, service, sent)
    else:
        counted = await service.count_with(read_as(body.messages, fmt), body.tokenizer)
    return CountResponse.of(counted, len(body.messages), fmt)


async def _count_unseen(
    raw: Sequence[dict[str, Any]], service: CompactionService, sent: SentCounts
) -> Count:
    """The local count of Anthropic-shape messages, reading only those not counted before
    (app/api/sent_counts.py)."""
    keys = [sent_key(message) for message in raw]
    counts = sent.known(keys)
    unseen = [i for i, n in enumerate(counts) if n is None]
    fresh = await service.count_each(read_as([raw[i] for i in unseen], "anthropic", unseen))
    sent.remember([keys[i] for i in unseen], fresh)
    total = sum(n for n in counts if n is not None) + sum(fresh)
    return Count(total, service.tokenizer.name)


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
