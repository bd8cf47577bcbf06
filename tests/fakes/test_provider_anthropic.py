"""The fake provider driven by the real `anthropic` SDK: what the SDK builds from each answer,
and how each refusal surfaces."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest

from tests.builders import assistant, tool_result, tool_use, user
from tests.fakes.provider import (
    FakeProvider,
    StreamError,
    Text,
    Thinking,
    ToolCall,
    answer,
    cl100k_count,
    raw,
)
from tests.fakes.provider.sdk import Capture, anthropic_client

MODEL = "claude-sonnet-4-6"
HELLO = [user("Say hello to the fake provider, please.")]
HELLO_TOKENS = cl100k_count("user: Say hello to the fake provider, please.")  # role, then text
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def create(client: anthropic.Anthropic, **params: Any) -> anthropic.types.Message:
    return client.messages.create(**{"model": MODEL, "max_tokens": 64, "messages": HELLO, **params})


def streamed(client: anthropic.Anthropic, **params: Any) -> anthropic.types.Message:
    args = {"model": MODEL, "max_tokens": 64, "messages": HELLO, **params}
    with client.messages.stream(**args) as stream:
        return stream.get_final_message()


def error_body(caught: pytest.ExceptionInfo[anthropic.APIStatusError]) -> Any:
    return caught.value.body


def test_create_returns_the_default_text_with_usage(claude: anthropic.Anthropic) -> None:
    message = create(claude)
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "Hello from the fake provider.")
    ]
    assert message.stop_reason == "end_turn"
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (HELLO_TOKENS, 6)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (0, 0)


def test_create_returns_a_scripted_tool_use(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer("Reading it.", ToolCall("read_file", {"path": "app/main.py"})))
    text, call = create(claude).content
    assert (text.type, getattr(text, "text", None)) == ("text", "Reading it.")
    assert (call.type, getattr(call, "name", None)) == ("tool_use", "read_file")
    assert getattr(call, "input", None) == {"path": "app/main.py"}
    assert call.id.startswith("toolu_")
    anthropic.types.Message.model_validate(json.loads(provider.last.sent.body), strict=True)


def test_stream_text_arrives_in_deltas_and_ends_as_one_message(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer(Text("one two three four", pieces=("one two ", "three ", "four"))))
    with claude.messages.stream(model=MODEL, max_tokens=64, messages=HELLO) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert pieces == ["one two ", "three ", "four"]
    assert [getattr(b, "text", None) for b in final.content] == ["one two three four"]
    assert (final.usage.input_tokens, final.usage.output_tokens) == (HELLO_TOKENS, 4)


def test_stream_tool_use_builds_its_input_from_json_fragments(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    edit = {"path": "a.py", "old": "x = 1", "new": "x = 2"}
    provider.script(answer(ToolCall("edit_file", edit, fragments=4)))
    final = streamed(claude)
    assert provider.last.sent.body.count(b'"type":"input_json_delta"') == 5  # "" first, then 4
    (call,) = final.content
    assert (call.type, getattr(call, "input", None)) == ("tool_use", edit)
    assert final.stop_reason == "tool_use"


def test_stream_thinking_keeps_its_signature(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer(Thinking("Read the file, then edit it.", "EqQBCgIYAhIM"), "Done."))
    final = streamed(claude, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024})
    thinking, text = final.content
    assert thinking.type == "thinking"
    assert (thinking.thinking, thinking.signature) == (
        "Read the file, then edit it.",
        "EqQBCgIYAhIM",
    )
    assert (text.type, getattr(text, "text", None)) == ("text", "Done.")
    assert (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}\n\n'
    ) in provider.last.sent.chunks


def test_a_stream_is_framed_event_by_event_as_anthropic_sends_it(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer("Hi."))
    streamed(claude)
    sent = provider.last.sent
    assert [chunk.split(b"\n", 1)[0] for chunk in sent.chunks] == [
        b"event: message_start",
        b"event: ping",
        b"event: content_block_start",
        b"event: content_block_delta",
        b"event: content_block_stop",
        b"event: message_delta",
        b"event: message_stop",
    ]
    assert all(c.count(b"\ndata: {") == 1 and c.endswith(b"}\n\n") for c in sent.chunks)
    assert sent.chunks[1] == b'event: ping\ndata: {"type":"ping"}\n\n'
    assert sent.chunks[-2] == (
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
        b'"stop_sequence":null},"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,'
        b'"cache_read_input_tokens":0,"output_tokens":2}}\n\n' % HELLO_TOKENS
    )
    assert dict(sent.headers)["content-type"] == "text/event-stream; charset=utf-8"


def test_a_mid_stream_error_surfaces_as_the_sdks_error(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    provider.script(answer("never finished", error_after=3))
    with pytest.raises(anthropic.APIStatusError) as caught:
        streamed(claude)
    assert error_body(caught) == OVERLOADED
    assert provider.last.sent.chunks[3:] == [
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n'
    ]


def test_a_mid_stream_error_of_another_type_is_sent_as_scripted(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    failure = StreamError(type="api_error", message="Internal server error")
    provider.script(answer("x", error_after=1, error=failure))
    with pytest.raises(anthropic.APIStatusError) as caught:
        streamed(claude)
    assert error_body(caught)["error"] == {"type": "api_error", "message": "Internal server error"}


def test_count_tokens_counts_the_prompt(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    assert claude.messages.count_tokens(model=MODEL, messages=HELLO).input_tokens == HELLO_TOKENS
    assert provider.last.received.path == "/v1/messages/count_tokens"


def test_the_beta_call_keeps_its_beta_header_and_query_string(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    message = claude.beta.messages.create(
        model=MODEL,
        max_tokens=64,
        messages=HELLO,
        betas=["context-1m-2025-08-07"],
        extra_query={"beta": "true"},
    )
    assert [getattr(b, "text", None) for b in message.content] == ["Hello from the fake provider."]
    received = provider.last.received
    assert (received.path, received.query) == ("/v1/messages", "beta=true")
    assert received.header("anthropic-beta") == "context-1m-2025-08-07"


def test_the_request_is_recorded_as_the_sdk_sent_it_and_the_answer_as_it_got_it(
    provider: FakeProvider,
) -> None:
    capture = Capture()
    with anthropic_client(provider.url, "sk-ant-canary-1", capture=capture) as client:
        create(client)
    received = provider.last.received
    assert received.body == capture.last.request.content
    assert received.json == {"max_tokens": 64, "messages": HELLO, "model": MODEL}
    assert received.api_key == "sk-ant-canary-1"
    sent_headers = [(k.decode(), v.decode()) for k, v in capture.last.request.headers.raw]
    assert [(k.lower(), v) for k, v in received.headers] == [
        (k.lower(), v) for k, v in sent_headers
    ]
    assert capture.last.body == provider.last.sent.body
    assert capture.last.status == 200


def test_a_prompt_over_the_window_is_refused_as_anthropic_does(small: FakeProvider) -> None:
    with anthropic_client(small.url) as client, pytest.raises(anthropic.BadRequestError) as caught:
        create(client, model="claude-tiny", max_tokens=5, messages=[user("word " * 45)])
    body = error_body(caught)
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": "prompt is too long: 46 tokens > 40 maximum",
    }
    assert body["type"] == "error"
    assert body["request_id"] == caught.value.request_id == small.last.sent.header("request-id")


def test_a_prompt_that_fits_but_not_with_its_max_tokens_is_refused(small: FakeProvider) -> None:
    with anthropic_client(small.url) as client, pytest.raises(anthropic.BadRequestError) as caught:
        create(client, model="claude-tiny", max_tokens=11, messages=[user("word " * 29)])
    assert error_body(caught)["error"]["message"] == (
        "input length and `max_tokens` exceed context limit: 30 + 11 > 40, "
        "decrease input length or `max_tokens` and try again"
    )


def test_a_body_over_the_byte_limit_gets_413_request_too_large(small: FakeProvider) -> None:
    with anthropic_client(small.url) as client, pytest.raises(anthropic.APIStatusError) as caught:
        create(client, model="claude-tiny", max_tokens=5, messages=[user("x" * 3_000)])
    assert caught.value.status_code == 413
    assert error_body(caught) == {
        "type": "error",
        "error": {
            "type": "request_too_large",
            "message": "Request exceeds the maximum allowed number of bytes.",
        },
    }


def test_a_refused_request_leaves_the_scripted_answer_for_the_next(small: FakeProvider) -> None:
    small.script(answer("the scripted one"))
    with anthropic_client(small.url) as client:
        with pytest.raises(anthropic.BadRequestError):
            create(client, model="claude-tiny", max_tokens=5, messages=[user("w " * 50)])
        message = create(client, model="claude-tiny", max_tokens=5, messages=[user("short")])
    assert [getattr(b, "text", None) for b in message.content] == ["the scripted one"]


def test_a_raw_answer_is_sent_as_it_is(provider: FakeProvider, claude: anthropic.Anthropic) -> None:
    provider.script(raw(529, OVERLOADED, {"x-should-retry": "true"}))
    with pytest.raises(anthropic.APIStatusError) as caught:
        create(claude)
    assert (caught.value.status_code, error_body(caught)) == (529, OVERLOADED)
    assert caught.value.response.headers["x-should-retry"] == "true"


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


CACHED = {"cache_control": {"type": "ephemeral"}}
HOUR = {"cache_control": {"type": "ephemeral", "ttl": "1h"}}


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [user("go"), assistant(tool_use("read_file", "toolu_a", path="a")), user("next")],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message.",
        ),
        (
            [user("go"), tool_result("toolu_b", "out")],
            "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_b. Each `tool_result` block must have a corresponding `tool_use` block in "
            "the previous message.",
        ),
        (
            [{"role": "user", "content": [_text("")]}],
            "messages: text content blocks must be non-empty",
        ),
        (
            [{"role": "user", "content": [_text("  \n")]}],
            "messages: text content blocks must contain non-whitespace text",
        ),
        (
            [{"role": "user", "content": [_text(f"t{i}", **CACHED) for i in range(5)]}],
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        (
            [
                {"role": "user", "content": [_text("a", **CACHED)]},
                assistant("ok"),
                {"role": "user", "content": [_text("b"), _text("c", **HOUR)]},
            ],
            "messages.2.content.1.cache_control.ttl: a ttl='1h' cache_control block must not "
            "come after a ttl='5m' cache_control block. Note that blocks are processed in the "
            "following order: `tools`, `system`, `messages`.",
        ),
    ],
)
def test_a_request_the_api_refuses_is_refused_with_its_message(
    claude: anthropic.Anthropic, messages: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(claude, messages=messages)
    assert error_body(caught)["error"] == {"type": "invalid_request_error", "message": message}


def test_a_request_without_a_key_is_refused_as_unauthenticated(provider: FakeProvider) -> None:
    body = {"model": MODEL, "max_tokens": 64, "messages": HELLO}
    headers = {"anthropic-version": "2023-06-01"}
    response = httpx2.post(f"{provider.url}/v1/messages", json=body, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }


EVENT_TYPES: dict[str, type[Any]] = {
    "message_start": anthropic.types.RawMessageStartEvent,
    "content_block_start": anthropic.types.RawContentBlockStartEvent,
    "content_block_delta": anthropic.types.RawContentBlockDeltaEvent,
    "content_block_stop": anthropic.types.RawContentBlockStopEvent,
    "message_delta": anthropic.types.RawMessageDeltaEvent,
    "message_stop": anthropic.types.RawMessageStopEvent,
}


def test_every_event_of_a_stream_is_valid_as_the_sdks_own_type(
    provider: FakeProvider, claude: anthropic.Anthropic
) -> None:
    blocks = (Thinking("plan it", "sig"), Text("text"), ToolCall("f", {"a": [1, 2]}))
    provider.script(answer(*blocks))
    streamed(claude, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024})
    for chunk in provider.last.sent.chunks:
        name, data = chunk.removesuffix(b"\n\n").split(b"\n")
        event = json.loads(data.removeprefix(b"data: "))
        assert name == b"event: " + event["type"].encode()
        if event["type"] != "ping":
            EVENT_TYPES[event["type"]].model_validate(event, strict=True)
