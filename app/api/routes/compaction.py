"""`POST /compact`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import BetaHeaderDep, ServiceDep
from app.api.dialect import compact_request
from app.api.responses import JsonResponse
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute
from app.api.schemas import CompactRequestBody, CompactResponse, ErrorResponse
from app.core.provider import OpenAIForms
from app.core.result import result_json

router = APIRouter(
    route_class=FastJsonRoute,
    tags=["compaction"],
    responses={415: UNSUPPORTED_MEDIA_TYPE, 422: {"model": ErrorResponse}},
)


@router.post(
    "/compact",
    summary="Compact a message list (summary of the history + file restoration)",
    response_model=CompactResponse,
    responses={503: {"model": ErrorResponse}, 504: {"model": ErrorResponse}},
)
async def compact(
    body: CompactRequestBody, service: ServiceDep, anthropic_beta: BetaHeaderDep = None
) -> Any:
    """Archives everything after the system prompt, replaces it with a structured summary
    (the user's new request, when the list ends with one, stays last as sent unless over a
    quarter of the threshold), and re-injects the files read most recently. Below the
    threshold (without `force`),
    or when archiving or summarizing fails, the messages come back unchanged with
    `compacted: false` and a `reason`. A result not smaller than the input and under the
    threshold is never returned: the next strategy is tried (`fallbacks` lists each one
    tried before `strategy`), else the input comes back with `reason: no_gain`. With a
    `session_id`, a context the session's records hold (`no_gain`, `thrashing`) is not
    compacted again unless forced (docs/guarantees.md). Messages come back in the
    request's format; an input that breaks a provider rule in a part that would come back
    as sent gets a 422 `invalid_conversation` naming the rule and the message index.
    When every summary
    slot stays busy for `COMPACT_SUMMARY_SLOT_WAIT` seconds: 503 `busy` with
    `Retry-After`, nothing written."""
    # Only `forms` outlives the call: the request's messages may be freed before the answer
    # is serialized.
    forms = OpenAIForms()
    request = await compact_request(body, forms, service, anthropic_beta)
    result = await service.compact(request)
    return JsonResponse(result_json(result, forms, request.provider))
