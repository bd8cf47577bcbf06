"""Whether a provider's answer says the request was over the model's context.

Read from the error's own fields, as each provider writes them (looked up 2026-11):
- Anthropic: 400 `invalid_request_error` with `prompt is too long: N tokens > M maximum`,
  or ``input length and `max_tokens` exceed context limit: N + K > M``; 413
  `request_too_large` (the body's bytes).
- OpenAI (Chat Completions and Responses): `error.code` `context_length_exceeded`.
- llama.cpp's server: `error.type` `exceed_context_size_error`.
Only a 400 or 413 can be one; anything else is the provider's answer to pass on. A
streamed Responses request is refused inside a 200 stream instead: an `error` event (its
`error` object, or its own `code` and `message`) or `response.failed` (its
`response.error`), read by `stream_overflow`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

_ANTHROPIC_MESSAGES = ("prompt is too long", "exceed context limit")
_CODES = frozenset({"context_length_exceeded", "request_too_large", "exceed_context_size_error"})


def is_context_overflow(status: int, body: bytes) -> bool:
    if status not in (400, 413):
        return False
    try:
        parsed: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return isinstance(error, dict) and _says_overflow(error)


def stream_overflow(event: Mapping[str, Any]) -> bytes | None:
    """The error of a stream's `error` or `response.failed` event that says the context
    was too long, as an error body (`{"error": {...}}`) `is_context_overflow` reads;
    None for any other event."""
    kind = event.get("type")
    error: Any = None
    if kind == "error":
        error = event.get("error") if isinstance(event.get("error"), Mapping) else event
    elif kind == "response.failed" and isinstance(event.get("response"), Mapping):
        error = event["response"].get("error")
    if not isinstance(error, Mapping) or not _says_overflow(error):
        return None
    return orjson.dumps({"error": {k: v for k, v in error.items() if k != "sequence_number"}})


def _says_overflow(error: Mapping[str, Any]) -> bool:
    kinds = {error.get("code"), error.get("type")}
    if kinds & _CODES:
        return True
    message = error.get("message")
    return isinstance(message, str) and any(m in message for m in _ANTHROPIC_MESSAGES)
