"""Errors the proxy itself answers, in the shape of the provider the client speaks to, so
that its SDK raises its own typed error (a 502 when the provider cannot be reached; a 401
for a missing proxy token; a 404 for a path that names no provider; a 413 for a body over
the limit; a 426 for a WebSocket upgrade). Anthropic: `{"type": "error", "error": {"type",
"message"}}`; OpenAI: `{"error": {"message", "type", "param", "code"}}`."""

from __future__ import annotations

from typing import Literal

import orjson

Api = Literal["anthropic", "openai"]

_ANTHROPIC_TYPES = {
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    426: "invalid_request_error",
    502: "api_error",
}
_OPENAI_TYPES = {
    401: "invalid_request_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    426: "invalid_request_error",
    502: "server_error",
}


def error_body(api: Api, status: int, message: str) -> bytes:
    if api == "anthropic":
        error = {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message}
        return orjson.dumps({"type": "error", "error": error})
    kind = _OPENAI_TYPES.get(status, "server_error")
    return orjson.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})
