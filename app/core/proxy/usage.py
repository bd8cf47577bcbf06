"""The provider's own count of a request, read from its answer as it passes (`usage`).

Anthropic: `input_tokens` (uncached), `cache_creation_input_tokens`,
`cache_read_input_tokens`, `output_tokens`, in the JSON answer or the stream's
`message_start` (and `message_delta`). OpenAI Chat: `prompt_tokens` (cached included,
`prompt_tokens_details.cached_tokens`), `completion_tokens`, in the JSON answer or the
stream's last chunk (only when the client asked for it: the proxy never adds
`stream_options`). Responses: `input_tokens`, `input_tokens_details.cached_tokens`,
`output_tokens`, in the answer or `response.completed`. Nothing is altered: the tap reads
a copy of the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

# A JSON answer larger than this is not kept for its usage (it is forwarded all the same).
MAX_JSON_BYTES = 4 << 20


@dataclass(frozen=True)
class Usage:
    """`input_tokens`: all the provider read (uncached, cache writes, cache reads);
    `cached_tokens`: of those, read from its cache."""

    input_tokens: int
    cached_tokens: int
    output_tokens: int


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(data: Mapping[str, Any]) -> Usage | None:
    """The usage in one JSON answer or one stream event's data; None when it has none."""
    for holder in (data, data.get("message"), data.get("response")):
        if isinstance(holder, Mapping) and isinstance(holder.get("usage"), Mapping):
            return _read(holder["usage"])
    return None


def _read(usage: Mapping[str, Any]) -> Usage | None:
    if "prompt_tokens" in usage:  # OpenAI Chat
        details = usage.get("prompt_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
        return Usage(_int(usage["prompt_tokens"]), cached, _int(usage.get("completion_tokens")))
    if "input_tokens_details" in usage:  # Responses
        details = usage["input_tokens_details"]
        cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
        return Usage(_int(usage.get("input_tokens")), cached, _int(usage.get("output_tokens")))
    if "input_tokens" in usage or "output_tokens" in usage:  # Anthropic
        read = _int(usage.get("cache_read_input_tokens"))
        written = _int(usage.get("cache_creation_input_tokens"))
        total = _int(usage.get("input_tokens")) + read + written
        return Usage(total, read, _int(usage.get("output_tokens")))
    return None


class UsageTap:
    """Reads the usage out of an answer's bytes, fed as they are forwarded: every `data:`
    line of a stream, or the whole JSON body (up to `MAX_JSON_BYTES`)."""

    def __init__(self, streaming: bool) -> None:
        self._streaming = streaming
        self._pending = b""
        self._body: list[bytes] = []
        self._size = 0
        self.usage: Usage | None = None

    def feed(self, chunk: bytes) -> None:
        if not self._streaming:
            self._size += len(chunk)
            if self._size <= MAX_JSON_BYTES:
                self._body.append(chunk)
            return
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line)

    def finish(self) -> Usage | None:
        if self._streaming:
            self._line(self._pending)
        elif self._size <= MAX_JSON_BYTES:
            self._parse(b"".join(self._body))
        return self.usage

    def _line(self, line: bytes) -> None:
        if line.startswith(b"data:") and b"usage" in line:
            self._parse(line[5:])

    def _parse(self, data: bytes) -> None:
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        found = usage_of(parsed) if isinstance(parsed, Mapping) else None
        if found is None:
            return
        if self.usage is not None and found.input_tokens == 0:  # message_delta: output only
            found = Usage(self.usage.input_tokens, self.usage.cached_tokens, found.output_tokens)
        self.usage = found
