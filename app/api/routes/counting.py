"""`POST /count` and `POST /should-compact`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from fastapi import APIRouter, Request

from app.api.count_schemas import (
    CountRequest,
    CountResponse,
    ShouldCompactRequest,
    ShouldCompactResponse,
)
from app.api.deps import SentCountsDep, ServiceDep
from app.api.dialect import format_of, read_as
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute, parsed_by_orjson
from app.api.schemas import ErrorResponse
from app.api.sent_counts import SentCounts, sent_key
from app.core.decide import Thresholds
from app.core.messages import Message
from app.core.vocabulary import Format, TokenizerName
from app.service.compaction import CompactionService, Count

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
async def count(
    body: CountRequest, request: Request, service: ServiceDep, sent: SentCountsDep
) -> CountResponse:
    """Exact cl100k_base counts (offline), or Anthropic's own with `tokenizer: anthropic`.
    Each message counts its role and its blocks' text; an empty list counts 0; the same
    conversation counts the same in either format."""
    fmt = format_of(body.messages, body.format)
    memo = _memo(sent, fmt, body.tokenizer, request)
    if memo is not None:
        counted = await _count_unseen(body.messages, service, memo)
    else:
        counted = await service.count_with(read_as(body.messages, fmt), body.tokenizer)
    return CountResponse.of(counted, len(body.messages), fmt)


def _memo(
    sent: SentCounts | None, fmt: Format, tokenizer: TokenizerName, request: Request
) -> SentCounts | None:
    """The memo of messages as sent when it may count this request (app/api/sent_counts.py)."""
    remembered = fmt == "anthropic" and tokenizer == "tiktoken" and parsed_by_orjson(request)
    return sent if remembered else None


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
async def should_compact(
    body: ShouldCompactRequest, request: Request, service: ServiceDep, sent: SentCountsDep
) -> ShouldCompactResponse:
    """`should_compact` when tokens >= threshold x window and there are at least
    `min_messages` messages; `overflow` at the overflow threshold."""
    fmt = format_of(body.messages, body.format)
    basis = body.basis()
    memo = _memo(sent, fmt, body.tokenizer, request) if basis.usage is None else None
    messages: list[Message] | None = None
    count: Callable[[], Awaitable[Count]]
    if memo is not None:  # counted without reading every message: only a hold needs them
        count = partial(_ready, await _count_unseen(body.messages, service, memo))
    else:
        messages = read_as(body.messages, fmt)
        count = partial(service.count_with, messages, body.tokenizer)
    thresholds = _thresholds(body, service)
    judged = await service.judge(len(body.messages), thresholds, basis, count)
    decision, counted = judged.decision, judged.counted
    warnings = list(counted.warnings) if counted else []
    held = None
    if body.session_id is not None and decision.should_compact:  # the hold reads the messages
        messages = messages if messages is not None else read_as(body.messages, fmt)
        check = await service.session_hold(body.session_id, messages, decision, thresholds)
        held, warnings = check.held, [*warnings, *check.warnings]
    return ShouldCompactResponse(
        should_compact=decision.should_compact and held is None,
        overflow=decision.overflow,
        reason=held.hold.reason if held else decision.reason.value,
        detail=held.hold.detail if held else None,
        retry_at_tokens=held.hold.retry_at_tokens if held else None,
        refilling=list(held.refilling) if held else [],
        token_count=decision.token_count,
        token_source=judged.source,
        threshold_tokens=thresholds.threshold_tokens,
        overflow_tokens=thresholds.overflow_tokens,
        context_window=thresholds.context_window,
        message_count=decision.message_count,
        format=fmt,
        exact=counted.exact if counted else True,
        warnings=warnings,
    )


async def _ready(counted: Count) -> Count:
    return counted


def _thresholds(body: ShouldCompactRequest, service: CompactionService) -> Thresholds:
    return service.thresholds(
        context_window=body.context_window,
        threshold=body.threshold,
        overflow_threshold=body.overflow_threshold,
        min_messages=body.min_messages,
    )
