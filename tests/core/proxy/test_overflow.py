"""Context-length errors as the providers write them (their documented error shapes), and
errors that only look alike."""

from __future__ import annotations

import orjson
import pytest

from app.core.proxy.overflow import is_context_overflow


def _anthropic(kind: str, message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


def _openai(code: str | None, message: str, kind: str = "invalid_request_error") -> bytes:
    error = {"message": message, "type": kind, "param": "messages", "code": code}
    return orjson.dumps({"error": error})


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            400,
            _anthropic(
                "invalid_request_error", "prompt is too long: 210345 tokens > 200000 maximum"
            ),
        ),
        (
            400,
            _anthropic(
                "invalid_request_error",
                "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, "
                "decrease input length or `max_tokens` and try again",
            ),
        ),
        (
            413,
            _anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes."),
        ),
        (
            400,
            _openai(
                "context_length_exceeded",
                "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 130512 tokens. Please reduce the length of the messages.",
            ),
        ),
        (
            400,
            orjson.dumps(
                {
                    "error": {
                        "code": 400,
                        "message": "the request exceeds the available context size",
                        "type": "exceed_context_size_error",
                    }
                }
            ),
        ),
    ],
)
def test_each_provider_s_context_length_error_is_one(status: int, body: bytes) -> None:
    assert is_context_overflow(status, body)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, _anthropic("invalid_request_error", "messages: roles must alternate")),
        (400, _openai("invalid_value", "Invalid value for 'temperature'.")),
        (429, _anthropic("rate_limit_error", "prompt is too long for your rate limit")),
        (500, _openai("context_length_exceeded", "a 500 is never one")),
        (400, b"<html>Bad Request</html>"),
        (400, b'{"error": "prompt is too long"}'),
        (413, b""),
    ],
)
def test_other_errors_are_not(status: int, body: bytes) -> None:
    assert not is_context_overflow(status, body)
