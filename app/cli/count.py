"""`context-compact count`: what `POST /count` answers, counted by the service's counting
(`app.service.counting`) built alone from the settings (`app.wiring.counting`). Its own
module so that the command imports no strategy, store, summarizer or web framework: a
count loads the tokenizer and little else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.api.count_schemas import CountRequest, CountResponse
from app.api.provider import (
    RequestFieldError,
    count_parts,
    counting_for,
    parts_of,
    system_messages,
)
from app.api.schemas import basis_of
from app.cli.reading import (
    REQUEST_FIELDS,
    Answer,
    asked,
    input_error,
    read_messages,
    request_fields,
    validated,
)
from app.service.counting import CountingService
from app.settings import Settings
from app.wiring.counting import build_counting, one_shot_tokenizer

COUNT_FIELDS = ("format", "tokenizer", *REQUEST_FIELDS)


def count(data: Mapping[str, Any], overrides: Mapping[str, Any], settings: Settings) -> Answer:
    """What `POST /count` would answer."""
    body = validated(CountRequest, request_fields(data, COUNT_FIELDS, overrides))
    messages, fmt = read_messages(body.messages, body.format, asked(overrides))

    async def run(service: CountingService) -> Answer:
        try:
            counting = counting_for(
                body.model, body.tokenizer, service.models, window_given=False, needs_window=False
            )
            canonical = [*system_messages(body), *messages]
        except RequestFieldError as exc:
            raise input_error(exc.errors) from None
        tools = await service.count_tools(body.tools or [], counting.tokenizer)
        basis = basis_of(None, None, counting, tools)
        counted, system_tokens = await count_parts(service, canonical, counting.tokenizer)
        judged = service.as_judged(counted, basis)
        judged = replace(judged, warnings=(*counting.warnings, *judged.warnings))
        parts = parts_of(judged, system_tokens, basis)
        answer = CountResponse.of(judged, len(body.messages), fmt, parts)
        return Answer(answer.model_dump(mode="json"))

    async def main() -> Answer:
        service = build_counting(settings, one_shot_tokenizer())
        try:
            return await run(service)
        finally:
            if service.provider_counter is not None:
                await service.provider_counter.aclose()

    return asyncio.run(main())
