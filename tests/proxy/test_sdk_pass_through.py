"""Below the threshold, the real SDKs get the very same answer through the proxy as
directly from the provider, byte for byte (status, body chunks joined, headers but the
hop-by-hop ones and ours), and the provider gets the very same request bytes: text, tool
use, thinking, streamed or not, errors and error streams, Anthropic's API and OpenAI's
(Chat Completions and Responses)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest

from tests.fakes.provider import FakeProvider, StreamError, Text, Thinking, ToolCall, answer, raw
from tests.fakes.provider.sdk import Capture, Captured, anthropic_client, openai_client
from tests.proxy.live import Live, serve_proxy

pytestmark = pytest.mark.slow

HELLO = [{"role": "user", "content": "hi"}]
TOOLS = [
    {"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}}}
]
HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"date", b"server"}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeProvider, Live]]:
    with (
        FakeProvider() as provider,
        serve_proxy(provider.url, tmp_path_factory.mktemp("data")) as live,
    ):
        yield provider, live


def _sent(headers: Any) -> list[tuple[str, str]]:
    """A request's headers as the provider reads them: names in any case, and without the
    ones of one hop (each hop sends its own `Connection`, `Host`, `Content-Length`)."""
    hop = ("host", "content-length", "connection")
    return [(k.lower(), v) for k, v in headers if k.lower() not in hop]


def _headers(captured: Captured) -> list[tuple[bytes, bytes]]:
    return [
        (k.lower(), v)
        for k, v in captured.headers
        if k.lower() not in HOP
        and not k.lower().startswith(b"x-compact-")
        and k.lower() != b"x-accel-buffering"
    ]


def _both(
    live: tuple[FakeProvider, Live], call: Callable[[FakeProvider, str, Capture], Any]
) -> tuple[Captured, Captured, Any, Any]:
    provider, proxy = live
    direct, proxied = Capture(), Capture()
    first = call(provider, provider.url, direct)
    sent_direct = provider.last.received
    second = call(provider, proxy.proxy, proxied)
    sent_proxied = provider.last.received
    assert sent_proxied.body == sent_direct.body
    assert sent_proxied.query == sent_direct.query
    assert _sent(sent_proxied.headers) == _sent(sent_direct.headers)
    return direct.last, proxied.last, first, second


def _same(direct: Captured, proxied: Captured) -> None:
    assert proxied.status == direct.status
    assert proxied.body == direct.body
    assert _headers(proxied) == _headers(direct)
    assert proxied.header("x-compact-action") in ("none",)


def _claude(
    script: Any, stream: bool = False, **fields: Any
) -> Callable[[FakeProvider, str, Capture], Any]:
    def call(provider: FakeProvider, url: str, capture: Capture) -> Any:
        provider.script(script)
        with anthropic_client(url, capture=capture) as client:
            params = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": HELLO, **fields}
            if stream:
                with client.messages.stream(**params) as events:
                    return events.get_final_message().model_dump()
            return client.messages.create(**params).model_dump()

    return call


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "script",
    [
        answer("Hello there."),
        answer(ToolCall("bash", {"command": "ls -la"}, fragments=4)),
        answer(Thinking("Let me think.", "sig-abc"), Text("Done.")),
    ],
    ids=["text", "tool_use", "thinking"],
)
def test_anthropic_answers_are_the_provider_s_bytes(
    live: tuple[FakeProvider, Live], script: Any, stream: bool
) -> None:
    fields = {"tools": TOOLS} if "tool" in repr(script) else {}
    direct, proxied, first, second = _both(live, _claude(script, stream, **fields))
    _same(direct, proxied)
    assert second == first


def test_an_anthropic_error_stream_is_the_provider_s_bytes(live: tuple[FakeProvider, Live]) -> None:
    script = answer("partial", error_after=3, error=StreamError("overloaded_error", "Overloaded"))

    def call(provider: FakeProvider, url: str, capture: Capture) -> Any:
        provider.script(script)
        with (
            anthropic_client(url, capture=capture) as client,
            pytest.raises(anthropic.APIStatusError) as raised,
            client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=HELLO) as s,
        ):
            s.until_done()
        return str(raised.value)

    direct, proxied, first, second = _both(live, call)
    _same(direct, proxied)
    assert second == first


def test_an_anthropic_error_answer_is_the_provider_s_bytes(live: tuple[FakeProvider, Live]) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    def call(provider: FakeProvider, url: str, capture: Capture) -> Any:
        provider.script(raw(529, body))
        with (
            anthropic_client(url, capture=capture) as client,
            pytest.raises(anthropic.APIStatusError) as raised,
        ):
            client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=HELLO)
        return (raised.value.status_code, raised.value.body)

    direct, proxied, first, second = _both(live, call)
    _same(direct, proxied)
    assert second == first == (529, body)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "script",
    [answer("Hello there."), answer(ToolCall("bash", {"command": "ls"}, fragments=3))],
    ids=["text", "tool_calls"],
)
def test_openai_chat_answers_are_the_provider_s_bytes(
    live: tuple[FakeProvider, Live], script: Any, stream: bool
) -> None:
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]

    def call(provider: FakeProvider, url: str, capture: Capture) -> Any:
        provider.script(script)
        with openai_client(url, capture=capture) as client:
            params: dict[str, Any] = {"model": "gpt-4o", "messages": HELLO, "tools": tools}
            if stream:
                chunks = client.chat.completions.create(**params, stream=True)
                return [c.model_dump() for c in chunks]
            return client.chat.completions.create(**params).model_dump()

    direct, proxied, first, second = _both(live, call)
    _same(direct, proxied)
    assert second == first


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_answers_are_the_provider_s_bytes(
    live: tuple[FakeProvider, Live], stream: bool
) -> None:
    def call(provider: FakeProvider, url: str, capture: Capture) -> Any:
        provider.script(answer("Hello there."))
        with openai_client(url, capture=capture) as client:
            if stream:
                return [
                    e.model_dump()
                    for e in client.responses.create(model="gpt-4o", input="hi", stream=True)
                ]
            return client.responses.create(model="gpt-4o", input="hi").model_dump()

    direct, proxied, first, second = _both(live, call)
    _same(direct, proxied)
    assert second == first


def test_count_tokens_and_models_pass_through(live: tuple[FakeProvider, Live]) -> None:
    def call(provider: FakeProvider, url: str, capture: Capture) -> Any:
        with anthropic_client(url, capture=capture) as client:
            return client.messages.count_tokens(
                model="claude-sonnet-4-6", messages=HELLO
            ).model_dump()

    direct, proxied, first, second = _both(live, call)
    _same(direct, proxied)
    assert second == first
