"""The fake provider driven by the real `openai` SDK: chat completions and the Responses API,
plain, streamed and with tools, and their context-length refusals."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types import responses as types
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.fakes.provider import (
    FakeProvider,
    Limits,
    StreamError,
    Text,
    Thinking,
    ToolCall,
    answer,
    cl100k_count,
)
from tests.fakes.provider.sdk import Capture, openai_client

MODEL = "gpt-4o"
HELLO = [{"role": "user", "content": "Say hello to the fake provider, please."}]
HELLO_TOKENS = cl100k_count("user: Say hello to the fake provider, please.")
READ = {
    "type": "function",
    "function": {
        "name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
RESPONSES_MESSAGE = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)

EVENT_TYPES: dict[str, type[Any]] = {
    "response.created": types.ResponseCreatedEvent,
    "response.in_progress": types.ResponseInProgressEvent,
    "response.output_item.added": types.ResponseOutputItemAddedEvent,
    "response.content_part.added": types.ResponseContentPartAddedEvent,
    "response.output_text.delta": types.ResponseTextDeltaEvent,
    "response.output_text.done": types.ResponseTextDoneEvent,
    "response.content_part.done": types.ResponseContentPartDoneEvent,
    "response.output_item.done": types.ResponseOutputItemDoneEvent,
    "response.function_call_arguments.delta": types.ResponseFunctionCallArgumentsDeltaEvent,
    "response.function_call_arguments.done": types.ResponseFunctionCallArgumentsDoneEvent,
    "response.completed": types.ResponseCompletedEvent,
    "response.reasoning_summary_part.added": types.ResponseReasoningSummaryPartAddedEvent,
    "response.reasoning_summary_text.delta": types.ResponseReasoningSummaryTextDeltaEvent,
    "response.reasoning_summary_text.done": types.ResponseReasoningSummaryTextDoneEvent,
    "response.reasoning_summary_part.done": types.ResponseReasoningSummaryPartDoneEvent,
}


def sse_data(body: bytes) -> list[Any]:
    """The JSON of each `data:` line of a stream, `[DONE]` as the string."""
    lines = [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]
    return [line.decode() if line == b"[DONE]" else json.loads(line) for line in lines]


def test_chat_returns_the_default_text_with_usage(gpt: openai.OpenAI) -> None:
    completion = gpt.chat.completions.create(model=MODEL, messages=HELLO)
    choice = completion.choices[0]
    assert (choice.message.content, choice.finish_reason) == (
        "Hello from the fake provider.",
        "stop",
    )
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (HELLO_TOKENS, 6)
    assert completion.usage.total_tokens == HELLO_TOKENS + 6
    assert completion.usage.prompt_tokens_details is not None
    assert completion.usage.prompt_tokens_details.cached_tokens == 0


def test_chat_returns_scripted_tool_calls(provider: FakeProvider, gpt: openai.OpenAI) -> None:
    provider.script(answer(ToolCall("read_file", {"path": "a.py"})))
    completion = gpt.chat.completions.create(model=MODEL, messages=HELLO, tools=[READ])
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls or []
    assert call.type == "function"
    assert (call.function.name, call.function.arguments) == ("read_file", '{"path":"a.py"}')
    assert call.id.startswith("call_")
    ChatCompletion.model_validate(json.loads(provider.last.sent.body), strict=True)


def test_a_chat_stream_has_no_usage_chunk_unless_asked(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    provider.script(answer(Text("one two three", pieces=("one ", "two ", "three"))))
    chunks = list(gpt.chat.completions.create(model=MODEL, messages=HELLO, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "one two three"
    assert [c.choices[0].finish_reason for c in chunks] == [None, None, None, None, "stop"]
    assert all(c.usage is None for c in chunks)
    body = provider.last.sent.body
    assert b'"usage"' not in body
    assert body.endswith(b"}\n\ndata: [DONE]\n\n")
    assert all(
        chunk.startswith(b"data: {") or chunk == b"data: [DONE]\n\n"
        for chunk in provider.last.sent.chunks
    )


def test_a_chat_stream_ends_with_the_usage_chunk_when_asked(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    chunks = list(
        gpt.chat.completions.create(
            model=MODEL, messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
    )
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (HELLO_TOKENS, 6)
    assert all(c.usage is None for c in chunks[:-1])
    data = sse_data(provider.last.sent.body)
    assert data[-1] == "[DONE]"
    assert all("usage" in d for d in data[:-1])  # null on every chunk but the last


def test_a_chat_stream_sends_tool_calls_in_fragments(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    provider.script(answer("Reading.", ToolCall("read_file", {"path": "src/app.py"}, fragments=3)))
    chunks = list(
        gpt.chat.completions.create(model=MODEL, messages=HELLO, tools=[READ], stream=True)
    )
    fragments = [d.tool_calls[0] for c in chunks for d in [c.choices[0].delta] if d.tool_calls]
    assert fragments[0].id is not None
    assert fragments[0].function is not None
    assert fragments[0].function.name == "read_file"
    assert all(f.id is None and f.index == 0 for f in fragments[1:])
    assert (
        "".join(f.function.arguments or "" for f in fragments if f.function)
        == '{"path":"src/app.py"}'
    )
    assert len(fragments) == 4
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    for data in sse_data(provider.last.sent.body)[:-1]:
        ChatCompletionChunk.model_validate(data)


def test_a_chat_mid_stream_error_surfaces_as_an_api_error(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    provider.script(answer("never finished", error_after=2))
    with pytest.raises(openai.APIError) as caught:
        list(gpt.chat.completions.create(model=MODEL, messages=HELLO, stream=True))
    assert (
        caught.value.message
        == "The server had an error while processing your request. Sorry about that!"
    )
    assert caught.value.type == "server_error"
    assert not provider.last.sent.body.endswith(b"[DONE]\n\n")


def test_a_chat_prompt_over_the_window_is_context_length_exceeded(small: FakeProvider) -> None:
    messages = [{"role": "user", "content": "word " * 44}]
    with openai_client(small.url) as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-tiny", messages=messages)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "messages"
    assert caught.value.body == {
        "message": "This model's maximum context length is 40 tokens. However, your messages "
        "resulted in 45 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }


def test_a_chat_prompt_that_fits_but_not_with_its_budget_names_both(small: FakeProvider) -> None:
    messages = [{"role": "user", "content": "word " * 29}]
    with openai_client(small.url) as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="gpt-tiny", messages=messages, max_completion_tokens=20
        )
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.body["message"] == (
        "This model's maximum context length is 40 tokens. However, you requested 50 tokens "
        "(30 in the messages, 20 in the completion). Please reduce the length of the messages "
        "or completion."
    )


def test_a_chat_prompt_over_a_models_input_limit_names_the_limit(small: FakeProvider) -> None:
    messages = [{"role": "user", "content": "word " * 34}]
    with openai_client(small.url) as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-capped", messages=messages)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.body["message"] == (
        "Input tokens exceed the configured limit of 30 tokens. Your messages resulted in 35 "
        "tokens. Please reduce the length of the messages."
    )


def test_a_llamacpp_flavoured_provider_refuses_with_llamacpps_error() -> None:
    limits = Limits(windows={"qwen": 40}, counter=lambda text: len(text.split()))
    messages = [{"role": "user", "content": "word " * 44}]
    with (
        FakeProvider(limits, flavor="llamacpp") as llama,
        openai_client(llama.url) as client,
        pytest.raises(openai.BadRequestError) as caught,
    ):
        client.chat.completions.create(model="qwen", messages=messages)
    assert caught.value.status_code == 400
    assert caught.value.response.json() == {
        "error": {
            "code": 400,
            "message": "request (45 tokens) exceeds the available context size (40 tokens), "
            "try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 45,
            "n_ctx": 40,
        }
    }


def test_an_unanswered_tool_call_is_refused_as_openai_does(gpt: openai.OpenAI) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [*HELLO, {"role": "assistant", "content": None, "tool_calls": [call]}, HELLO[0]]
    with pytest.raises(openai.BadRequestError) as caught:
        gpt.chat.completions.create(model=MODEL, messages=messages)
    assert caught.value.body["message"] == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_1"
    )
    assert caught.value.param == "messages.[1].role"


def test_responses_returns_the_default_text_with_usage(gpt: openai.OpenAI) -> None:
    response = gpt.responses.create(model=MODEL, input="Say hello to the fake provider, please.")
    assert response.output_text == "Hello from the fake provider."
    assert response.status == "completed"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (HELLO_TOKENS, 6)
    assert response.usage.input_tokens_details.cached_tokens == 0


def test_responses_returns_a_scripted_function_call(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    provider.script(answer(ToolCall("read_file", {"path": "a.py"})))
    response = gpt.responses.create(model=MODEL, input="read a.py")
    (item,) = response.output
    assert item.type == "function_call"
    assert (item.name, item.arguments) == ("read_file", '{"path":"a.py"}')
    assert item.call_id.startswith("call_")
    types.Response.model_validate(json.loads(provider.last.sent.body), strict=True)


def test_a_responses_stream_sends_numbered_events_the_sdk_accepts(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    provider.script(
        answer(Text("one two", pieces=("one ", "two")), ToolCall("f", {"a": 1}, fragments=2))
    )
    events = list(gpt.responses.create(model=MODEL, input="go", stream=True))
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(15))
    completed = events[-1].response
    assert completed.output_text == "one two"
    assert completed.usage is not None
    for chunk in provider.last.sent.chunks:
        name, data = chunk.split(b"\n", 1)
        event = json.loads(data.removeprefix(b"data: "))
        EVENT_TYPES[event["type"]].model_validate(event, strict=True)
        assert name == b"event: " + event["type"].encode()


def test_thinking_is_a_reasoning_item_with_its_encrypted_content_when_asked(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    provider.script(answer(Thinking("plan it", "gAAAAsig"), ToolCall("f", {"a": 1})))
    events = list(
        gpt.responses.create(
            model=MODEL, input="go", stream=True, include=["reasoning.encrypted_content"]
        )
    )
    assert [e.type for e in events][2:8] == [
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
    ]
    reasoning, call = events[-1].response.output
    assert (reasoning.type, reasoning.encrypted_content) == ("reasoning", "gAAAAsig")
    assert reasoning.summary[0].text == "plan it"
    assert call.type == "function_call"
    for chunk in provider.last.sent.chunks:
        event = json.loads(chunk.split(b"\n", 1)[1].removeprefix(b"data: "))
        EVENT_TYPES[event["type"]].model_validate(event, strict=True)
    provider.script(answer(Thinking("plan it", "gAAAAsig"), Text("Done.")))
    (unasked, _) = gpt.responses.create(model=MODEL, input="go").output
    assert unasked.type == "reasoning"
    assert unasked.encrypted_content is None


def test_a_responses_stream_over_the_window_fails_at_sequence_number_2(small: FakeProvider) -> None:
    with openai_client(small.url) as client:
        stream = client.responses.create(model="gpt-tiny", input="word " * 44, stream=True)
        first = [next(stream), next(stream)]
        with pytest.raises(openai.APIError) as caught:
            next(stream)
    assert [e.type for e in first] == ["response.created", "response.in_progress"]
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.message == RESPONSES_MESSAGE
    assert small.last.sent.status == 200
    assert small.last.sent.chunks[-1] == (
        b'event: error\ndata: {"type":"error","sequence_number":2,"error":{"type":'
        b'"invalid_request_error","code":"context_length_exceeded","message":"Your input '
        b'exceeds the context window of this model. Please adjust your input and try again.",'
        b'"param":"input"}}\n\n'
    )


def test_a_responses_request_over_the_window_is_a_400_unstreamed(small: FakeProvider) -> None:
    with openai_client(small.url) as client, pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-tiny", input="word " * 44)
    assert (caught.value.code, caught.value.param) == ("context_length_exceeded", "input")
    assert caught.value.body["message"] == RESPONSES_MESSAGE


def test_a_responses_mid_stream_error_is_scripted(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    failure = StreamError(message="Rate limited mid-way", code="rate_limit_exceeded")
    provider.script(answer("x", error_after=3, error=failure))
    with pytest.raises(openai.APIError) as caught:
        list(gpt.responses.create(model=MODEL, input="go", stream=True))
    assert (caught.value.message, caught.value.code) == (
        "Rate limited mid-way",
        "rate_limit_exceeded",
    )


def test_models_lists_the_window_table_in_each_apis_shape(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    names = [model.id for model in gpt.models.list()]
    assert names == list(provider.state.limits.windows)


def test_the_bytes_the_client_got_are_the_bytes_sent(provider: FakeProvider) -> None:
    capture = Capture()
    with openai_client(provider.url, "sk-canary-2", capture=capture) as client:
        list(client.chat.completions.create(model=MODEL, messages=HELLO, stream=True))
    assert capture.last.body == provider.last.sent.body
    assert capture.last.chunks != []
    assert provider.last.received.header("authorization") == "Bearer sk-canary-2"
    assert provider.last.received.body == capture.last.request.content
