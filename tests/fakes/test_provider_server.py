"""The fake provider as an HTTP server: what it records, how it streams, and how a client
that fails or goes away is seen."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import anthropic
import httpx2
import pytest

from tests.fakes.provider import Answer, FakeProvider, Received, Text, answer, raw, raw_stream

MODEL = "claude-sonnet-4-6"
BODY = {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
KEY = {"x-api-key": "sk-ant-test"}


def raw_request(url: str, request: bytes) -> bytes:
    """Send these exact bytes and read the whole answer (the server closes after it)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_headers_are_recorded_in_order_with_their_own_case_and_the_query_verbatim(
    provider: FakeProvider,
) -> None:
    body = b'{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}'
    head = (
        "POST /v1/messages?beta=true&x=%2F HTTP/1.1\r\nHost: fake\r\nX-Api-Key: sk-ant-raw\r\n"
        "anthropic-beta: a,b\r\nX-Claude-Code-Session-Id: s-1\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    answered = raw_request(provider.url, head.encode() + body)
    assert answered.startswith(b"HTTP/1.1 200 OK\r\n")
    received = provider.last.received
    assert (received.method, received.path) == ("POST", "/v1/messages")
    assert received.query == "beta=true&x=%2F"
    assert received.headers[1:4] == (
        ("X-Api-Key", "sk-ant-raw"),
        ("anthropic-beta", "a,b"),
        ("X-Claude-Code-Session-Id", "s-1"),
    )
    assert received.body == body
    assert answered == provider.last.sent.head + provider.last.sent.body


def test_a_chunked_request_body_is_read_whole(provider: FakeProvider) -> None:
    parts = [
        b'{"model":"claude-sonnet-4-6",',
        b'"max_tokens":1,',
        b'"messages":[{"role":"user","content":"x"}]}',
    ]

    def body() -> Iterator[bytes]:
        yield from parts

    with httpx2.Client() as client:
        response = client.post(f"{provider.url}/v1/messages", content=body(), headers=KEY)
    assert response.status_code == 200
    assert provider.last.received.header("transfer-encoding") == "chunked"
    assert provider.last.received.body == b"".join(parts)


def test_a_stream_is_flushed_event_by_event_with_the_scripted_gaps(provider: FakeProvider) -> None:
    provider.script(answer(Text("ab", pieces=("a", "b")), event_delay=0.02))
    arrivals = []
    with (
        httpx2.Client() as client,
        client.stream(
            "POST", f"{provider.url}/v1/messages", json=BODY | {"stream": True}, headers=KEY
        ) as response,
    ):
        for chunk in response.iter_raw():
            arrivals.append((time.monotonic(), chunk))
    sent = provider.last.sent
    assert len(sent.chunks) == 8  # start, ping, block start, 2 deltas, block stop, delta, stop
    assert b"".join(c for _, c in arrivals) == sent.body
    assert arrivals[-1][0] - arrivals[0][0] >= 0.1  # 7 gaps of 0.02 s: nothing held back
    gaps = [later - earlier for earlier, later in zip(sent.times, sent.times[1:], strict=False)]
    assert min(gaps) >= 0.015


def test_the_first_byte_waits_for_the_scripted_delay(provider: FakeProvider) -> None:
    provider.script(raw(200, {"ok": True}, delay=0.1))
    started = time.monotonic()
    with httpx2.Client() as client:
        response = client.post(f"{provider.url}/v1/messages", json=BODY, headers=KEY)
    assert time.monotonic() - started >= 0.1
    assert response.json() == {"ok": True}


def test_a_scripted_cut_drops_the_connection_mid_stream(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer("a b c d", cut_after=3))
    # anthropic before 2.17 lets the transport's error through; 2.17 wraps it in an
    # APIConnectionError whose cause it is. Either way the cut is a broken chunked body.
    broken = (httpx2.RemoteProtocolError, anthropic.APIConnectionError)
    with pytest.raises(broken) as raised, claude.messages.stream(**BODY) as stream:
        stream.until_done()
    error: BaseException | None = raised.value
    if isinstance(error, anthropic.APIConnectionError):
        error = error.__cause__
    assert isinstance(error, httpx2.RemoteProtocolError)
    assert provider.last.sent.cut
    assert len(provider.last.sent.chunks) == 3


def test_a_client_that_goes_away_is_noted_and_the_stream_stops(provider: FakeProvider) -> None:
    pieces = tuple(f"p{i} " for i in range(30))
    provider.script(answer(Text("".join(pieces), pieces=pieces), event_delay=0.01))
    with (
        httpx2.Client() as client,
        client.stream(
            "POST", f"{provider.url}/v1/messages", json=BODY | {"stream": True}, headers=KEY
        ) as response,
    ):
        next(response.iter_raw())
    sent = provider.last.sent.wait()
    assert sent.client_gone
    assert len(sent.chunks) < 30


def test_the_same_request_gets_the_same_bytes(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    claude.messages.create(**BODY)
    claude.messages.create(**BODY)
    first, second = provider.exchanges
    assert first.received.body == second.received.body
    assert first.sent.body == second.sent.body
    assert first.sent.header("request-id") == second.sent.header("request-id")


def test_an_unknown_route_gets_each_providers_not_found(provider: FakeProvider) -> None:
    with httpx2.Client() as client:
        openai_style = client.post(
            f"{provider.url}/v1/nothing", json={}, headers={"authorization": "Bearer k"}
        )
        anthropic_style = client.get(
            f"{provider.url}/v1/nothing", headers={"anthropic-version": "2023-06-01"}
        )
    assert openai_style.status_code == anthropic_style.status_code == 404
    assert openai_style.json() == {
        "error": {
            "message": "Invalid URL (POST /v1/nothing)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert anthropic_style.json() == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "Not Found"},
    }


def test_models_answers_in_the_anthropic_shape_to_the_anthropic_sdk(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    models = [m.id for m in claude.models.list()]
    assert models == list(provider.state.limits.windows)


def test_reset_forgets_exchanges_and_script(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer("scripted"))
    provider.reset()
    message = claude.messages.create(**BODY)
    assert [getattr(b, "text", None) for b in message.content] == ["Hello from the fake provider."]
    assert len(provider.exchanges) == 1


def test_a_raw_stream_is_sent_chunk_by_chunk_as_given(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    recorded = [
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_real",'
        b'"type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
        b'"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]
    provider.script(raw_stream(recorded, {"content-type": "text/event-stream"}))
    with claude.messages.stream(**BODY) as stream:
        final = stream.get_final_message()
    assert final.id == "msg_real"
    assert provider.last.sent.chunks == recorded


def test_a_responder_answers_by_content_and_leaves_the_rest_to_the_queue(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    def by_content(received: Received) -> Answer | None:
        summarizing = "summarize" in received.body.decode()
        return answer("## Summary\nthe facts") if summarizing else None

    provider.respond_with(by_content)
    provider.script(answer("the agent's answer"))
    texts = []
    for prompt in ("please summarize this", "go on", "summarize again"):
        message = claude.messages.create(
            **BODY | {"messages": [{"role": "user", "content": prompt}]}
        )
        texts.append(getattr(message.content[0], "text", None))
    assert texts == ["## Summary\nthe facts", "the agent's answer", "## Summary\nthe facts"]
