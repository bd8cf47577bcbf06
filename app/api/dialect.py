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

from app.core.dialects import OpenAIForms, detect_format, parse_messages
from app.core.messages import Message
from app.core.vocabulary import Format, RequestFormat
from app.service.compaction import CompactRequest

if TYPE_CHECKING:
    from app.api.schemas import CompactRequestBody


def read_messages(
    raw: Sequence[dict[str, Any]], requested: RequestFormat, forms: OpenAIForms | None = None
) -> tuple[list[Message], Format]:
    """Canonical messages and the format they came in; OpenAI messages are remembered in
    `forms` with the items they were read from."""
    fmt: Format = detect_format(raw) if requested == "auto" else requested
    try:
        return parse_messages(raw, fmt, forms), fmt
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", "messages", *e["loc"])} for e in exc.errors()]
        ) from None


def compact_request(body: CompactRequestBody) -> CompactRequest:
    """The service's request for a `/compact` or `/compactions` body (one mapping for both),
    carrying the OpenAI form of each message as sent."""
    forms = OpenAIForms()
    messages, fmt = read_messages(body.messages, body.format, forms)
    return body.request(messages, fmt, forms)
