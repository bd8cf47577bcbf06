"""Whether a provider's answer says the request was over the model's context.

Read from the error's own fields, as each provider writes them (looked up 2026-11):
- Anthropic: 400 `invalid_request_error` with `prompt is too long: N tokens > M maximum`,
  or ``input length and `max_tokens` exceed context limit: N + K > M``; 413
  `request_too_large` (the body's bytes).
- OpenAI (Chat Completions and Responses): `error.code` `context_length_exceeded`.
- llama.cpp's server: `error.type` `exceed_context_size_error`.
Only a 400 or 413 can be one; anything else is the provider's answer to pass on.
"""

from __future__ import annotations

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
    if not isinstance(error, dict):
        return False
    kinds = {error.get("code"), error.get("type")}
    if kinds & _CODES:
        return True
    message = error.get("message")
    return isinstance(message, str) and any(m in message for m in _ANTHROPIC_MESSAGES)
