"""A client that leaves cancels its upstream call within a second: before the provider's
headers (once still open 20 s later: a reasoning model kept generating, and billing), after
them, and while the proxy was still compacting or retrying, when the call is then never
made."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import UpstreamError
from app.core.model_table import ModelSpec
from app.core.ports import RawHeaders
from app.core.proxy import JsonDict
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import Exchange, Planned
from app.service.metrics import NoMetrics
from tests.builders import build_service, user
from tests.proxy.fakes import FakeAnswer, FakeUpstream, Reply
from tests.proxy.live import serve_proxy
from tests.proxy.test_app import CONFIG, _anthropic, _ids, _overflow_first, long_session, proxy
from tests.proxy.wire import Hold, RawUpstream

HEADERS = [(b"x-api-key", b"sk-ant-test"), (b"anthropic-version", b"2023-06-01")]
BODY = _anthropic([user("Hello.")])


def _leave_after_sending(url: str, upstream: RawUpstream, clients: int) -> float:
    """`clients` requests sent at once; each client gone once the provider has them all:
    the time they left (monotonic)."""
    host, port = url.removeprefix("http://").split(":")
    head = (
        b"POST /v1/messages HTTP/1.1\r\nhost: proxy\r\nx-api-key: sk-ant-test\r\n"
        b"anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % len(BODY)
    )
    socks = [socket.create_connection((host, int(port)), timeout=10) for _ in range(clients)]
    for sock in socks:
        sock.sendall(head + BODY)
    deadline = time.monotonic() + 10
    while len(upstream.seen) < clients and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(upstream.seen) == clients
    time.sleep(0.2)  # the headers (if held after them) have reached the client
    left = time.monotonic()
    for sock in socks:
        sock.close()
    return left


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hold", "status"),
    [("before_headers", 200), ("after_headers", 200), ("after_headers", 400)],
)
def test_clients_that_leave_cancel_their_upstream_calls_within_a_second(
    tmp_path: Path, hold: Hold, status: int
) -> None:
    """A 400's body is read by the proxy (a context-length error?) before any byte goes
    to the client: leaving meanwhile ends the call too."""
    with (
        RawUpstream(status=status, hold=hold) as upstream,
        serve_proxy(upstream.url, tmp_path) as live,
    ):
        left = _leave_after_sending(live.proxy, upstream, clients=20)
        deadline = time.monotonic() + 3
        while any(s.closed is None for s in upstream.seen) and time.monotonic() < deadline:
            time.sleep(0.01)
    closed = [s.closed - left for s in upstream.seen if s.closed is not None]
    assert len(closed) == 20
    assert max(closed) < 1.0


class _Held(FakeUpstream):
    """An upstream whose answer never comes: `send` waits until cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = asyncio.Event()

    async def send(self, method: str, url: str, headers: RawHeaders, body: bytes) -> FakeAnswer:
        await super().send(method, url, headers, body)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise UpstreamError("unreachable")


class _Slow(ProxyCompactor):
    """A compactor whose plan and retry wait for `go`: compactions the client does not
    wait out."""

    go: asyncio.Event
    finished: asyncio.Event

    async def plan(self, ex: Exchange) -> Planned:
        await self.go.wait()
        planned = await super().plan(ex)
        self.finished.set()
        return planned

    async def retry(self, ex: Exchange, sent: Sequence[JsonDict], limit: int) -> Planned | None:
        self.go.clear()
        self.finished.clear()
        await self.go.wait()
        planned = await super().retry(ex, sent, limit)
        self.finished.set()
        return planned


async def _call_and_leave(app: Any, leave_after: float, body: bytes = BODY) -> float:
    """A request to `app`, its client gone after `leave_after` seconds: how long the app
    took to return after that."""
    requested, left = False, 0.0

    async def receive() -> dict[str, Any]:
        nonlocal requested, left
        if not requested:
            requested = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(leave_after)
        left = time.monotonic()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        return None

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/messages",
        "raw_path": b"/v1/messages",
        "query_string": b"",
        "headers": HEADERS,
    }
    await asyncio.wait_for(app(scope, receive, send), 5)
    return time.monotonic() - left


@pytest.mark.anyio
async def test_a_client_that_leaves_before_the_headers_cancels_the_call(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = _Held()
    app = proxy(upstream, tokenizer)
    after = await _call_and_leave(app, 0.05)
    assert upstream.cancelled.is_set()
    assert after < 1.0
    assert len(upstream.sent) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("during", ["plan", "retry"])
async def test_a_client_that_leaves_while_compacting_gets_no_call_once_the_compaction_ends(
    tokenizer: TiktokenTokenizer, during: str
) -> None:
    """The compaction is not cut halfway (its head is the session's, for the agent's next
    try); when it ends, the request ends too, without calling the provider (again)."""
    upstream = FakeUpstream(_overflow_first if during == "retry" else lambda sent: Reply())
    # A window the request fits: the plan sends it as it is, the provider's 400 retries it.
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    slow: Any = _Slow(service, service)
    big = {"claude-tiny": ModelSpec(context_window=40_000, tokenizer="tiktoken", margin=0.0)}
    app = ProxyApp(CONFIG, upstream, slow, big, NoMetrics())
    slow.go, slow.finished = asyncio.Event(), asyncio.Event()
    if during == "retry":
        slow.go.set()  # the plan goes at once; the retry waits
    call = asyncio.ensure_future(_call_and_leave(app, 0.05, _anthropic(long_session(12))))
    await asyncio.sleep(0.3)  # the client left meanwhile
    assert not call.done()
    assert not slow.finished.is_set()
    slow.go.set()
    await asyncio.wait_for(call, 5)
    assert slow.finished.is_set()
    assert len(upstream.sent) == (0 if during == "plan" else 1)
    await app.aclose()
