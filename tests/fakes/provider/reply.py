"""One answer to send: a status, headers, and either a whole body or a stream of events,
with the scripted timing. The API modules build it; the server writes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.fakes.provider.scripts import Answer
from tests.fakes.provider.wire import dumps

JSON = "application/json"
EVENT_STREAM = "text/event-stream; charset=utf-8"


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    events: tuple[bytes, ...] | None = None  # a stream, one chunk per event
    first_byte_delay: float = 0.0
    event_delay: float = 0.0
    cut_after: int | None = None  # stream: drop the connection after this many events


def json_reply(
    status: int, body: Any, headers: Mapping[str, str] | None = None, *, delay: float = 0.0
) -> Reply:
    data = body if isinstance(body, bytes) else dumps(body)
    fields = {"content-type": JSON, **(headers or {})}
    return Reply(status, tuple(fields.items()), data, first_byte_delay=delay)


def stream_reply(events: list[bytes], answer: Answer, headers: Mapping[str, str]) -> Reply:
    fields = {"content-type": EVENT_STREAM, "cache-control": "no-cache", **headers}
    return Reply(
        200,
        tuple(fields.items()),
        events=tuple(events),
        first_byte_delay=answer.first_byte_delay,
        event_delay=answer.event_delay,
        cut_after=answer.cut_after,
    )


def raw_reply(answer: Answer) -> Reply:
    """A scripted raw answer: its status, body and headers, as they are; a tuple of chunks
    is sent as an event stream."""
    assert answer.status is not None
    if isinstance(answer.body, tuple):
        return stream_reply(list(answer.body), answer, answer.headers)
    return json_reply(answer.status, answer.body, answer.headers, delay=answer.first_byte_delay)
