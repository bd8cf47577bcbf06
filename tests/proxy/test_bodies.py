"""Answer bodies the proxy only relays: one the usage tap cannot decode goes as it came
(raw deflate, a corrupt gzip once ended the relay with an empty 200), and a provider's
error on a compacting route is read up to `MAX_ERROR_READ` only, the rest relayed as it
comes (a 60 MiB one was read whole)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.proxy.app import MAX_ERROR_READ
from app.proxy.tap import MAX_INFLATED, Tap
from tests.builders import user
from tests.proxy.fakes import FakeUpstream, Reply
from tests.proxy.test_app import _anthropic, proxy
from tests.proxy.wire import asgi_call

pytestmark = pytest.mark.anyio

HEADERS = [(b"x-api-key", b"sk-ant-test"), (b"anthropic-version", b"2023-06-01")]
ANSWER = orjson.dumps({"id": "msg_1", "usage": {"input_tokens": 3000, "output_tokens": 2}})
COUNTED = _anthropic([user("word " * 1600)])  # near the tiny window: counted, usage read


def _raw_deflate(data: bytes) -> bytes:
    squeeze = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


@pytest.mark.parametrize(
    ("encoding", "body", "read"),
    [
        (b"deflate", _raw_deflate(ANSWER), True),
        (b"deflate", zlib.compress(ANSWER), True),
        (b"gzip", gzip.compress(ANSWER), True),
        (b"gzip", b"\x1f\x8b\x08\x00" + b"not gzip at all" * 10, False),
        (b"deflate", b"\xff" * 177, False),
        (b"gzip", gzip.compress(ANSWER)[:-8] + b"x" * 8, False),  # a bad checksum
    ],
)
async def test_an_answer_the_tap_cannot_decode_is_relayed_as_it_came(
    tokenizer: TiktokenTokenizer, encoding: bytes, body: bytes, read: bool
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-encoding", encoding)]
    chunks = (body[:7], body[7:])
    upstream = FakeUpstream(lambda sent: Reply(200, headers, chunks))
    app = proxy(upstream, tokenizer)
    status, answered, relayed = await asgi_call(app, b"/v1/messages", HEADERS, COUNTED)
    assert (status, relayed) == (200, body)
    assert (b"content-encoding", encoding) in answered
    session = dict(answered)[b"x-compact-session"].decode()
    assert app.compactor is not None
    assert (app.compactor._sessions[session].ratio is not None) is read


def test_a_chunk_that_inflates_past_the_bound_stops_the_tap_not_the_relay() -> None:
    tap = Tap.of([(b"content-encoding", b"gzip")])
    assert tap is not None
    tap.feed(gzip.compress(b"\0" * (MAX_INFLATED + 1)))
    assert tap.stopped
    assert tap.finish() is None


class _Pulled(list[bytes]):
    """An answer's chunks that count how many were taken."""

    taken = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in super().__iter__():
            self.taken += 1
            yield chunk


async def test_a_large_error_on_a_compacting_route_is_read_up_to_the_bound_then_relayed(
    tokenizer: TiktokenTokenizer,
) -> None:
    piece = 1 << 20
    error = _Pulled([b"e" * piece for _ in range(MAX_ERROR_READ // piece + 8)])
    json = [(b"content-type", b"application/json")]
    upstream = FakeUpstream(lambda sent: Reply(400, json, error))
    taken_at_start: list[int] = []

    def observe(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            taken_at_start.append(error.taken)

    body = _anthropic([user("Hello.")])
    app = proxy(upstream, tokenizer)
    status, _, relayed = await asgi_call(app, b"/v1/messages", HEADERS, body, observe)
    assert status == 400
    assert relayed == b"".join(error)
    assert taken_at_start == [MAX_ERROR_READ // piece + 1]
    assert len(upstream.sent) == 1
    assert upstream.answers[0].closed
