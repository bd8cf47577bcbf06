"""The SDK helpers: clients pointed at the fake, and the capture of what they received."""

from __future__ import annotations

import pytest

from tests.builders import user
from tests.fakes.provider import FakeProvider, answer
from tests.fakes.provider.sdk import (
    Capture,
    anthropic_client,
    async_anthropic_client,
    async_openai_client,
    openai_client,
)

MODEL = "claude-sonnet-4-6"


def test_a_capture_keeps_each_answer_the_client_read_in_order(provider: FakeProvider) -> None:
    capture = Capture()
    provider.script(answer("first"), answer("second"))
    with anthropic_client(provider.url, capture=capture) as client:
        client.messages.create(model=MODEL, max_tokens=8, messages=[user("one")])
        with client.messages.stream(model=MODEL, max_tokens=8, messages=[user("two")]) as s:
            s.until_done()
    assert [c.body for c in capture.responses] == [e.sent.body for e in provider.exchanges]
    assert len(capture.last.chunks) > 1  # a stream arrives in pieces
    assert capture.last.header("content-type") == "text/event-stream; charset=utf-8"
    assert capture.responses[0].request.url.path == "/v1/messages"


def test_the_openai_client_speaks_to_the_v1_paths(provider: FakeProvider) -> None:
    with openai_client(provider.url, "sk-test-3") as client:
        client.models.list()
    received = provider.last.received
    assert (received.method, received.path) == ("GET", "/v1/models")
    assert received.api_key == "sk-test-3"


@pytest.mark.anyio
async def test_the_async_clients_capture_their_streams_too(provider: FakeProvider) -> None:
    capture = Capture()
    async with async_anthropic_client(provider.url, capture=capture) as claude:
        stream_args = {"model": MODEL, "max_tokens": 8, "messages": [user("hi")]}
        async with claude.messages.stream(**stream_args) as s:
            final = await s.get_final_message()
    async with async_openai_client(provider.url, capture=capture) as gpt:
        stream = await gpt.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        texts = [c.choices[0].delta.content async for c in stream if c.choices]
    assert [getattr(b, "text", None) for b in final.content] == ["Hello from the fake provider."]
    assert "".join(t or "" for t in texts) == "Hello from the fake provider."
    assert [c.body for c in capture.responses] == [e.sent.body for e in provider.exchanges]
