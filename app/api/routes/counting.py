"""`POST /count` and `POST /should-compact`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from fastapi import APIRouter, Request

from app.api.count_schemas import (
    CountRequest,
    CountResponse,
    ShouldCompactRequest,
    ShouldCompactResponse,
)
from app.api.deps import BetaHeaderDep, SentCountsDep, ServiceDep
from app.api.dialect import read_as
from app.api.provider import (
    Counting,
    count_parts,
    counting_for,
    format_for,
    parts_of,
    system_messages,
)
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute, parsed_by_orjson
from app.api.schemas import ErrorResponse, basis_of
from app.api.sent_counts import SentCounts, sent_key
from app.core.decide import Thresholds
from app.core.provider import OutputBudget
from app.core.vocabulary import Format
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


@router.post("/count", summary="Count the tokens of a message list or a provider request")
async def count(
    body: CountRequest, request: Request, service: ServiceDep, sent: SentCountsDep
) -> CountResponse:
    """Counts what the provider counts: the system prompt, the tool definitions and the
    messages, each part in `parts`. With a `model`, by its tokenizer (docs/models.md), else
    exact cl100k_base counts (offline), or Anthropic's own with `tokenizer: anthropic`.
    Each message counts its role and its blocks' text; an empty list counts 0; the same
    conversation counts the same in either format."""
    fmt = format_for(body, body.messages, body.format)
    counting = counting_for(
        body.model, body.tokenizer, service.models, window_given=False, needs_window=False
    )
    tool_tokens = await service.count_tools(body.tools or [], counting.tokenizer)
    basis = basis_of(None, None, counting, tool_tokens)
    counted, system_tokens = await _counted(body, fmt, counting, service, _memo(sent, request))
    judged = service.as_judged(counted, basis)
    return CountResponse.of(
        replace(judged, warnings=(*counting.warnings, *judged.warnings)),
        len(body.messages),
        fmt,
        parts_of(judged, system_tokens, basis),
    )


def _memo(sent: SentCounts | None, request: Request) -> SentCounts | None:
    """The memo of messages as sent, when the body was parsed by orjson
    (app/api/sent_counts.py); `_counted` uses it for Anthropic messages counted by cl100k."""
    return sent if parsed_by_orjson(request) else None


async def _counted(
    body: CountRequest | ShouldCompactRequest,
    fmt: Format,
    counting: Counting,
    service: CompactionService,
    memo: SentCounts | None,
) -> tuple[Count, int | None]:
    """The count of the system prompt and the messages, and of the system prompt alone
    (None when the provider counted both in one call). Anthropic messages counted by cl100k
    read only those not counted before (the memo)."""
    raw = body.messages
    system = system_messages(body)
    if memo is None or fmt != "anthropic" or counting.tokenizer != "tiktoken":
        return await count_parts(service, [*system, *read_as(raw, fmt)], counting.tokenizer)
    head = await service.count_each(system) if system else []
    each = await _count_unseen(raw, service, memo)
    own = sum(n for n, m in zip(each, raw, strict=True) if m.get("role") == "system")
    return Count(sum(head) + sum(each), service.tokenizer.name), sum(head) + own


async def _count_unseen(
    raw: Sequence[dict[str, Any]], service: CompactionService, sent: SentCounts
) -> list[int]:
    """The local count of each Anthropic-shape message, reading only those not counted
    before (app/api/sent_counts.py)."""
    keys = [sent_key(message) for message in raw]
    counts = sent.known(keys)
    unseen = [i for i, n in enumerate(counts) if n is None]
    fresh = await service.count_each(read_as([raw[i] for i in unseen], "anthropic", unseen))
    sent.remember([keys[i] for i in unseen], fresh)
    fresh_iter = iter(fresh)
    return [n if n is not None else next(fresh_iter) for n in counts]


@router.post("/should-compact", summary="Decide whether the context needs compacting")
async def should_compact(
    body: ShouldCompactRequest,
    request: Request,
    service: ServiceDep,
    sent: SentCountsDep,
    anthropic_beta: BetaHeaderDep = None,
) -> ShouldCompactResponse:
    """`should_compact` when tokens >= threshold x limit and there are at least
    `min_messages` messages; `overflow` at the overflow threshold. The tokens are the
    provider's `last_usage` when given, else the count of `/count` (system, tools and
    messages). The limit is what the provider lets the input take: the window
    (`context_window`, else the `model`'s, else the server's) less the output the request
    reserves (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), within the
    model's input limit; `limited_by` says which applied."""
    fmt = format_for(body, body.messages, body.format)
    counting = counting_for(
        body.model,
        body.tokenizer,
        service.models,
        window_given=body.context_window is not None,
        needs_window=True,
        betas=body.betas(anthropic_beta),
    )
    output = body.output_budget()
    basis = body.basis(counting, await service.count_tools(body.tools or [], counting.tokenizer))
    system_tokens: int | None = None
    if basis.usage is None:  # counted first: invalid messages are named before thresholds
        first, system_tokens = await _counted(body, fmt, counting, service, _memo(sent, request))
        count = partial(_ready, service.as_judged(first, basis))
    else:  # validated all the same, as the provider would
        messages = [*system_messages(body), *read_as(body.messages, fmt)]
        count = partial(_ready, Count(0, service.tokenizer.name))
    thresholds = _thresholds(body, service, counting, output)
    judged = await service.judge(len(body.messages), thresholds, basis, count)
    decision, counted = judged.decision, judged.counted
    warnings = [
        *counting.warnings,
        *counting.output_warnings(output),
        *(counted.warnings if counted else ()),
    ]
    held = None
    if body.session_id is not None and decision.should_compact:  # the hold reads the messages
        if basis.usage is None:
            messages = [*system_messages(body), *read_as(body.messages, fmt)]
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
        limit_tokens=thresholds.limit,
        limited_by=thresholds.limited_by,
        output_budget=thresholds.output.tokens,
        message_count=decision.message_count,
        format=fmt,
        exact=counted.exact if counted else True,
        parts=parts_of(counted, system_tokens, basis) if counted else None,
        warnings=warnings,
    )


async def _ready(counted: Count) -> Count:
    return counted


def _thresholds(
    body: ShouldCompactRequest,
    service: CompactionService,
    counting: Counting,
    output: OutputBudget,
) -> Thresholds:
    return service.thresholds(
        context_window=body.context_window or counting.context_window,
        threshold=body.threshold,
        overflow_threshold=body.overflow_threshold,
        min_messages=body.min_messages,
        input_limit=counting.input_limit,
        output=output,
    )
