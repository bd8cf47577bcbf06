"""The Python client's configuration: address and token from the environment, 429 and 503
retried (honouring `Retry-After`, up to a cap), a timeout per kind of call and per call."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from context_compact_client import (
    AsyncContextCompactClient,
    ContextCompactClient,
    InvalidRequestError,
    RateLimitedError,
    ServiceError,
    UnavailableError,
)
from context_compact_client import (
    client as client_module,
)
from context_compact_client._options import retry_after_seconds

COUNTED = {"token_count": 3, "message_count": 1, "tokenizer": "tiktoken", "exact": True}
MESSAGES = [{"role": "user", "content": "hi"}]
BUSY = {"error": "busy", "message": "all 64 summary slots are busy", "details": []}


class Server:
    """Answers in order, recording what was sent."""

    def __init__(self, *answers: httpx.Response) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers.pop(0)


def busy(status: int = 503, retry_after: str | None = None) -> httpx.Response:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return httpx.Response(status, json=BUSY, headers=headers)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(client_module, "_sleep", slept.append)

    async def record(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(client_module, "_async_sleep", record)
    return slept


def client_for(server: Server, **kw: Any) -> ContextCompactClient:
    kw.setdefault("environ", {})
    return ContextCompactClient(transport=httpx.MockTransport(server), **kw)


def test_the_address_and_token_come_from_the_environment() -> None:
    server = Server(httpx.Response(200, json=COUNTED))
    environ = {"COMPACT_URL": "http://sidecar:9000", "COMPACT_API_TOKEN": "s3cret"}
    client_for(server, environ=environ).count(MESSAGES)
    [sent] = server.requests
    assert str(sent.url) == "http://sidecar:9000/count"
    assert sent.headers["authorization"] == "Bearer s3cret"


def test_arguments_win_over_the_environment_and_an_empty_token_sends_none() -> None:
    server = Server(httpx.Response(200, json=COUNTED), httpx.Response(200, json=COUNTED))
    environ = {"COMPACT_URL": "http://sidecar:9000", "COMPACT_API_TOKEN": "s3cret"}
    client_for(server, environ=environ, base_url="http://other:1", token="mine").count(MESSAGES)
    client_for(server, environ={"COMPACT_API_TOKEN": ""}).count(MESSAGES)
    first, second = server.requests
    assert (str(first.url), first.headers["authorization"]) == (
        "http://other:1/count",
        "Bearer mine",
    )
    assert str(second.url) == "http://127.0.0.1:8080/count"
    assert "authorization" not in second.headers


def test_a_busy_answer_is_retried_after_the_time_it_asks(waits: list[float]) -> None:
    server = Server(busy(retry_after="2"), busy(429, "0.5"), httpx.Response(200, json=COUNTED))
    assert client_for(server).count(MESSAGES) == COUNTED
    assert waits == [2.0, 0.5]
    assert len(server.requests) == 3


def test_without_retry_after_the_waits_back_off(waits: list[float]) -> None:
    server = Server(busy(), busy(429), busy(), busy())
    with pytest.raises(UnavailableError) as raised:
        client_for(server, max_retries=3).count(MESSAGES)
    assert waits == [0.5, 1.0, 2.0]
    assert (raised.value.status, raised.value.code) == (503, "busy")
    assert len(server.requests) == 4


def test_a_retry_after_beyond_the_cap_is_not_waited_for(waits: list[float]) -> None:
    server = Server(busy(429, "120"))
    with pytest.raises(RateLimitedError) as raised:
        client_for(server, max_retry_after=30).count(MESSAGES)
    assert raised.value.retry_after == 120.0
    assert waits == []


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (httpx.Response(500, json={"error": "internal_error", "message": "x"}), ServiceError),
        (
            httpx.Response(422, json={"error": "invalid_request", "message": "x"}),
            InvalidRequestError,
        ),
        (httpx.Response(400, json={"error": "invalid_json", "message": "x"}), InvalidRequestError),
    ],
)
def test_other_errors_are_not_retried(
    waits: list[float], answer: httpx.Response, error: type[ServiceError]
) -> None:
    server = Server(answer)
    with pytest.raises(error):
        client_for(server).count(MESSAGES)
    assert (waits, len(server.requests)) == ([], 1)


def test_a_retry_after_date_is_read_as_seconds_from_now() -> None:
    now = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)
    assert retry_after_seconds(format_datetime(now + timedelta(seconds=7), usegmt=True), now) == 7.0
    assert retry_after_seconds(format_datetime(now - timedelta(seconds=7), usegmt=True), now) == 0.0
    assert retry_after_seconds("soon", now) is None


def read_timeouts(server: Server) -> list[float]:
    return [request.extensions["timeout"]["read"] for request in server.requests]


def test_compact_gets_the_long_timeout_every_other_call_the_short_one() -> None:
    compacted = {"compacted": False, "messages": MESSAGES}
    server = Server(httpx.Response(200, json=COUNTED), httpx.Response(200, json=compacted))
    client = client_for(server, timeout=12, compact_timeout=240)
    client.count(MESSAGES)
    client.compact(MESSAGES)
    assert read_timeouts(server) == [12.0, 240.0]


def test_with_options_changes_one_call_and_leaves_the_client_as_it_was(
    waits: list[float],
) -> None:
    server = Server(busy(retry_after="1"), httpx.Response(200, json=COUNTED), busy(retry_after="1"))
    client = client_for(server)
    assert client.with_options(timeout=2.5).count(MESSAGES) == COUNTED
    with pytest.raises(UnavailableError):
        client.with_options(max_retries=0).count(MESSAGES)
    assert read_timeouts(server) == [2.5, 2.5, 30.0]
    assert waits == [1.0]


@pytest.mark.anyio
async def test_the_async_client_retries_alike(waits: list[float]) -> None:
    server = Server(busy(retry_after="3"), httpx.Response(200, json=COUNTED))
    transport: Callable[[httpx.Request], httpx.Response] = server
    async with AsyncContextCompactClient(
        transport=httpx.MockTransport(transport), environ={"COMPACT_URL": "http://side:1"}
    ) as client:
        assert await client.count(MESSAGES) == COUNTED
    assert waits == [3.0]
    assert [str(r.url) for r in server.requests] == ["http://side:1/count"] * 2
