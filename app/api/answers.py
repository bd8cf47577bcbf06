"""Answers shared by a route and the command line, so both give the same bytes without
the command line importing a route module."""

from __future__ import annotations

from app.api.dialect import read_messages
from app.api.schemas import CountRequest, CountResponse
from app.service.compaction import CompactionService


async def count_response(body: CountRequest, service: CompactionService) -> CountResponse:
    """The answer to a `/count` body (shared with `python -m app count`)."""
    messages, fmt = read_messages(body.messages, body.format)
    counted = await service.count_with(messages, body.tokenizer)
    return CountResponse(
        token_count=counted.token_count,
        message_count=len(body.messages),
        tokenizer=counted.tokenizer,
        exact=counted.exact,
        format=fmt,
        warnings=list(counted.warnings),
    )
