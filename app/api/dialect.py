"""Reading a request's messages in either format, with 422s that name the caller's fields.

`messages` arrive as JSON objects; `format` (`auto` by default) picks the shape they are
validated as. Validation errors are re-raised as request validation errors located under
`messages`, so they read `messages[3].role` whichever shape failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app.api.provider import format_for
from app.api.service_request import service_request
from app.core.messages import Message
from app.core.provider import OpenAIForms, detect_format, parse_messages
from app.core.vocabulary import Format, RequestFormat
from app.service.compaction import CompactionService, CompactRequest

if TYPE_CHECKING:
    from app.api.schemas import CompactRequestBody


def read_messages(
    raw: Sequence[dict[str, Any]], requested: RequestFormat, forms: OpenAIForms | None = None
) -> tuple[list[Message], Format]:
    """Canonical messages and the format they came in; OpenAI messages are remembered in
    `forms` with the items they were read from."""
    fmt = format_of(raw, requested)
    return read_as(raw, fmt, forms=forms), fmt


def format_of(raw: Sequence[dict[str, Any]], requested: RequestFormat) -> Format:
    """The format the messages are read in: as requested, or detected for `auto`."""
    return detect_format(raw) if requested == "auto" else requested


def read_as(
    raw: Sequence[dict[str, Any]],
    fmt: Format,
    positions: Sequence[int] | None = None,
    forms: OpenAIForms | None = None,
) -> list[Message]:
    """Canonical messages of `raw` in `fmt`. `positions`, when `raw` is only some of the
    request's messages: where each sits in the request, so that errors name it there;
    `forms`, to remember OpenAI messages with the items they were read from."""
    try:
        return parse_messages(raw, fmt, forms)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", "messages", *_at(e["loc"], positions))} for e in exc.errors()]
        ) from None


def _at(loc: tuple[int | str, ...], positions: Sequence[int] | None) -> tuple[int | str, ...]:
    if positions is None or not loc or not isinstance(loc[0], int):
        return loc
    return (positions[loc[0]], *loc[1:])


async def compact_request(
    body: CompactRequestBody,
    forms: OpenAIForms,
    service: CompactionService,
    beta_header: str | None = None,
) -> CompactRequest:
    """The service's request for a `/compact` or `/compactions` body (one mapping for both),
    carrying in `forms` the OpenAI form of each message as sent: a top-level `system` at
    the head, the window and tokenizer from the `model`, the tools counted."""
    fmt = format_for(body, body.messages, body.format)
    messages = read_as(body.messages, fmt, forms=forms)
    return await service_request(body, fmt, messages, forms, service, beta_header)
