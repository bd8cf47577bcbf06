"""Bytes on the wire: compact JSON, the two SSE framings, and deterministic ids.

Anthropic and the Responses API name each event (`event: x\\ndata: {...}\\n\\n`); OpenAI
chat sends bare `data: {...}\\n\\n` lines and ends with `data: [DONE]\\n\\n` (the streaming
docs of each). JSON is compact, as the providers send it. Ids and timestamps derive from
the request's bytes, so one request answered twice (directly, then through a proxy) gives
the same bytes as long as the cache state and the script are the same.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

CREATED = 1_760_000_000  # the fixed `created` time of every OpenAI object


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def named_event(name: str, data: Any) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"


def data_event(data: Any) -> bytes:
    return b"data: " + dumps(data) + b"\n\n"


DONE = b"data: [DONE]\n\n"


class Ids:
    """Ids for one answer, derived from the request's path and body."""

    def __init__(self, path: str, body: bytes) -> None:
        self._seed = hashlib.sha256(path.encode() + b"\x00" + body).hexdigest()

    def make(self, prefix: str, n: int = 0, length: int = 24) -> str:
        digest = hashlib.sha256(f"{self._seed}:{prefix}:{n}".encode()).hexdigest()
        return prefix + digest[:length]
