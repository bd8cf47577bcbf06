"""The opening of a streamed Responses answer, read before any of it reaches the client.

The Responses API refuses an input over the model's context inside a 200 stream: after
`response.created` and `response.in_progress`, an `error` event or `response.failed`.
Those first events say nothing the client needs at once, so the proxy holds them until
the stream shows output (any other event) or that error: an error that says the context
was too long is then answered by compacting and sending again, and the client never sees
the refused stream. Held events are relayed as they came, before the rest.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import orjson

from app.core.ports import RawHeaders, UpstreamAnswer
from app.core.proxy import stream_overflow
from app.proxy.headers import lower_map

log = logging.getLogger("context_compact.proxy")

# Events that come before any output: held while the stream may yet be refused.
OPENING = frozenset({"response.created", "response.in_progress", "response.queued"})
MAX_HELD_BYTES = 1 << 20  # a stream that opens with more than this is relayed as it is


@dataclass
class Resumed:
    """An answer whose first chunks were read already: those, then the rest as it comes
    (a held opening here; the start of a long error in `app.proxy.app`)."""

    answer: UpstreamAnswer
    first: list[bytes]
    rest: AsyncIterator[bytes]

    @property
    def status(self) -> int:
        return self.answer.status

    @property
    def headers(self) -> RawHeaders:
        return self.answer.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self.first:
            yield chunk
        async for chunk in self.rest:
            yield chunk

    async def read(self) -> bytes:
        return b"".join([chunk async for chunk in self.chunks()])

    async def aclose(self) -> None:
        await self.answer.aclose()


async def opening(answer: UpstreamAnswer) -> tuple[Resumed, bytes | None]:
    """The answer with its opening events held, and the error body of a context-length
    error the stream opened with (None when it opened otherwise)."""
    rest = aiter(answer.chunks())
    held: list[bytes] = []
    pending = b""
    size = 0
    async for chunk in rest:
        held.append(chunk)
        size += len(chunk)
        pending += chunk.replace(b"\r\n", b"\n")
        *events, pending = pending.split(b"\n\n")
        for event in events:
            kind, error = _read(event)
            if error is not None:
                return Resumed(answer, held, rest), error
            if kind is not None and kind not in OPENING:
                return Resumed(answer, held, rest), None
        if size > MAX_HELD_BYTES:
            break
    return Resumed(answer, held, rest), None


def _read(event: bytes) -> tuple[str | None, bytes | None]:
    """An event's type and, when it says the context was too long, its error body."""
    data = b"\n".join(line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:"))
    if not data:
        return None, None
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return "", None  # not JSON: no longer the opening
    if not isinstance(parsed, dict):
        return "", None
    kind = parsed.get("type")
    return (kind if isinstance(kind, str) else ""), stream_overflow(parsed)


def plain_stream(answer: UpstreamAnswer) -> bool:
    """A successful event stream whose bytes are its text (not compressed)."""
    named = lower_map(answer.headers)
    encoding = named.get("content-encoding", "identity").strip().lower()
    streaming = named.get("content-type", "").startswith("text/event-stream")
    return answer.status == 200 and streaming and encoding in ("", "identity")


async def retried_stream(
    answer: UpstreamAnswer,
    retry: Callable[[bytes], Awaitable[bytes | None]],
    resend: Callable[[bytes], Awaitable[UpstreamAnswer]],
) -> UpstreamAnswer:
    """A stream that opens with a context-length error answered by one more request, with
    the body `retry` makes of the error (`resend`); any other stream, or one `retry` cannot
    change, as it came."""
    held, error = await opening(answer)
    if error is None:
        return held
    body = await retried_body(retry, error)
    if body is None:
        return held
    await answer.aclose()
    return await resend(body)


async def retried_body(
    retry: Callable[[bytes], Awaitable[bytes | None]], error: bytes
) -> bytes | None:
    """The body `retry` makes of a context-length error; None when it cannot (a failure of
    ours is logged: the provider's error then goes to the client as it came)."""
    try:
        return await retry(error)
    except Exception:
        log.exception("compaction after a context-length error failed")
        return None
