"""`context-compact compact`: what `POST /compact` answers, by the service the server builds
(`app.wiring.service`), as a one-shot command needs it: its metrics discarded (no scraper reads
them), cl100k in one lane. Apart from `app.cli.count`, which builds counting alone; the
web framework, the LLM SDKs and the database driver are imported only when the settings
choose them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from app.api.provider import RequestFieldError
from app.api.schemas import CompactRequestBody
from app.api.service_request import service_request
from app.cli.reading import (
    REQUEST_FIELDS,
    Answer,
    InputError,
    asked,
    input_error,
    read_messages,
    request_fields,
    validated,
)
from app.core.decide import Thresholds
from app.core.errors import InvalidConversationError, InvalidRequestError
from app.core.provider import OpenAIForms
from app.core.result import result_json
from app.service.compaction import CompactionService
from app.service.metrics import NoMetrics
from app.settings import Settings
from app.wiring.counting import one_shot_tokenizer
from app.wiring.service import build_service, close_ports

COMPACT_FIELDS = (
    "format",
    "session_id",
    "force",
    "instructions",
    "options",
    "reason",
    "tokenizer",
    *REQUEST_FIELDS,
)
# Flags that set a field of `options` (`--strategy`, `--context-window`, `--threshold`).
OPTION_FLAGS = ("strategy", "context_window", "threshold")


def compact(data: Mapping[str, Any], overrides: Mapping[str, Any], settings: Settings) -> Answer:
    """What `POST /compact` would answer. The flags in `OPTION_FLAGS` set `options` fields."""
    chosen = {k: v for k, v in overrides.items() if k in OPTION_FLAGS and v is not None}
    fields = request_fields(data, COMPACT_FIELDS, {**overrides, **dict.fromkeys(OPTION_FLAGS)})
    if chosen:
        options = fields.get("options")
        fields["options"] = {**(options if isinstance(options, dict) else {}), **chosen}
    body = validated(CompactRequestBody, fields)
    forms = OpenAIForms()
    messages, fmt = read_messages(body.messages, body.format, asked(overrides), forms)

    async def run(service: CompactionService) -> Answer:
        try:
            request = await service_request(body, fmt, messages, forms, service)
        except RequestFieldError as exc:
            raise input_error(exc.errors) from None
        head = request.provider.head if request.provider is not None else 0
        try:
            result = await service.compact(request)
        except InvalidRequestError as exc:
            raise InputError(f"{exc.field}: {exc}") from None
        except InvalidConversationError as exc:
            raise InputError(
                "; ".join(
                    f"{f'messages[{v.index - head}]' if v.index >= head else 'system'}: {v}"
                    for v in exc.violations[:5]
                )
            ) from None
        options = request.options
        thresholds = service.thresholds(
            context_window=options.context_window,
            threshold=options.threshold,
            min_messages=options.min_messages,
            input_limit=request.input_limit,
            output=request.output,
        )
        answer = result_json(result, forms, request.provider)
        return Answer(answer, _not_compacted_note(answer, thresholds))

    async def main() -> Answer:
        service = build_service(settings, one_shot_tokenizer(), metrics=NoMetrics())
        try:
            return await run(service)
        finally:
            await close_ports(service)

    return asyncio.run(main())


def _not_compacted_note(answer: Mapping[str, Any], thresholds: Thresholds) -> str | None:
    """Why a list came back unchanged, with the numbers and the flags that change it."""
    reason = answer.get("reason")
    if answer.get("compacted") or reason is None:
        return None
    if reason == "below_threshold":
        return (
            f"not compacted (below_threshold): {answer['token_count']} tokens, under "
            f"{thresholds.threshold_tokens} ({thresholds.threshold} x a {_limit(thresholds)}); "
            "give --context-window and --threshold for your model, or --force"
        )
    if reason == "below_min_messages":
        return (
            f"not compacted (below_min_messages): fewer than {thresholds.min_messages} "
            "messages; --force compacts anyway"
        )
    return f"not compacted ({reason})"


def _limit(thresholds: Thresholds) -> str:
    """The limit the threshold is a share of, in words."""
    window = f"{thresholds.context_window}-token window"
    if thresholds.limited_by == "input_limit":
        return f"{thresholds.limit}-token input limit of the {window}"
    if thresholds.limited_by == "output_budget":
        output = thresholds.output
        return f"{thresholds.limit}-token limit: the {window} less {output.field} {output.tokens}"
    return window
