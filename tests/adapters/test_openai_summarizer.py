from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import respx

from app.adapters.openai_summarizer import OpenAICompatibleSummarizer
from app.adapters.retry import RetryingSummarizer, RetryPolicy
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from tests.fakes.fake_llm_server import openai_completion, reply, start_fake_llm

pytestmark = pytest.mark.anyio

BASE_URL = "http://llm.test/v1"
API_KEY = "sk-secret-openai-key"
REQUEST = SummaryRequest(
    messages=(), system="You summarize.", prompt="Summarize this history.", max_words=100
)


@pytest.fixture
async def summarizer() -> AsyncIterator[OpenAICompatibleSummarizer]:
    summarizer = OpenAICompatibleSummarizer(
        base_url=BASE_URL, model="llama-test", api_key=API_KEY, timeout=5.0, max_tokens=321
    )
    yield summarizer
    await summarizer.aclose()


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL) as router:
        yield router


async def failure(summarizer: Any) -> SummarizerError:
    with pytest.raises(SummarizerError) as caught:
        await summarizer.summarize(REQUEST)
    assert API_KEY not in str(caught.value)
    assert caught.value.__cause__ is None
    return caught.value


def recording_sleep() -> tuple[list[float], Any]:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return sleeps, sleep


async def test_success_sends_system_and_prompt_and_returns_the_stripped_text(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/chat/completions").respond(200, json=openai_completion(" summary \n"))

    assert await summarizer.summarize(REQUEST) == "summary"

    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert json.loads(request.content) == {
        "model": "llama-test",
        "max_tokens": 321,
        "temperature": 0.0,
        "stop": ["[tool call ", "[tool result id=", "\n[user]\n", "</conversation>"],
        "messages": [
            {"role": "system", "content": "You summarize."},
            {"role": "user", "content": "Summarize this history."},
        ],
    }


async def test_no_key_sends_no_authorization(api: respx.MockRouter) -> None:
    route = api.post("/chat/completions").respond(200, json=openai_completion("ok"))
    summarizer = OpenAICompatibleSummarizer(base_url=BASE_URL + "/", model="m")
    try:
        assert await summarizer.summarize(REQUEST) == "ok"
    finally:
        await summarizer.aclose()
    assert "authorization" not in route.calls.last.request.headers


async def test_retry_then_success(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/chat/completions")
    route.side_effect = [
        httpx.Response(429, headers={"retry-after": "2"}, json={"error": {}}),
        httpx.Response(503, json={"error": {}}),
        httpx.Response(200, json=openai_completion("third time")),
    ]
    sleeps, sleep = recording_sleep()
    retrying = RetryingSummarizer(
        summarizer, RetryPolicy(base_delay=0.5), sleep=sleep, jitter=lambda: 1.0
    )

    assert await retrying.summarize(REQUEST) == "third time"
    assert route.call_count == 3
    assert sleeps == [2.0, 1.0]


async def test_all_attempts_failing_raise_the_last_error(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/chat/completions").respond(500, json={"error": {"message": "echo"}})
    sleeps, sleep = recording_sleep()
    retrying = RetryingSummarizer(
        summarizer, RetryPolicy(attempts=3), sleep=sleep, jitter=lambda: 1.0
    )

    error = await failure(retrying)

    assert route.call_count == 3
    assert len(sleeps) == 2
    assert error.retryable is True
    assert str(error) == (
        "[server_error] chat completion API call failed: HTTP 500 (echo) after 3 attempts"
    )


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
async def test_server_errors_are_retryable(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, status: int
) -> None:
    echo = f"echo: {REQUEST.prompt}"
    api.post("/chat/completions").respond(status, json={"error": {"message": echo}})
    error = await failure(summarizer)
    assert (error.retryable, error.retry_after) == (True, None)
    assert "echo" not in str(error)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, status: int
) -> None:
    route = api.post("/chat/completions").respond(status, json={"error": {}})
    retrying = RetryingSummarizer(summarizer, RetryPolicy(attempts=3))
    error = await failure(retrying)
    assert error.retryable is False
    assert route.call_count == 1


async def test_timeouts_and_connection_errors_are_retryable(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/chat/completions")
    for exc in (httpx.ReadTimeout("slow"), httpx.ConnectError("refused")):
        route.side_effect = exc
        error = await failure(summarizer)
        assert error.retryable is True
        assert type(exc).__name__ in str(error)


@pytest.mark.parametrize(
    "body",
    [
        openai_completion(""),
        openai_completion("   \n"),
        {
            **openai_completion("x"),
            "choices": [{"message": {"role": "assistant", "content": None}}],
        },
    ],
)
async def test_an_empty_answer_is_a_failure(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, body: dict[str, Any]
) -> None:
    api.post("/chat/completions").respond(200, json=body)
    error = await failure(summarizer)
    assert (error.retryable, error.reason, str(error)) == (False, "empty", "[empty] empty summary")


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, content=b"<html>gateway</html>"),
        httpx.Response(200, json={"choices": []}),
        httpx.Response(200, json={"object": "error"}),
        httpx.Response(200, json=[1, 2]),
        httpx.Response(200, json={"choices": [{"text": "legacy completion"}]}),
    ],
)
async def test_a_malformed_body_is_a_non_retryable_failure(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, response: httpx.Response
) -> None:
    api.post("/chat/completions").mock(return_value=response)
    error = await failure(summarizer)
    assert error.retryable is False


@pytest.mark.parametrize("reason", ["length", "content_filter"])
async def test_a_cut_off_or_filtered_summary_is_a_failure(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, reason: str
) -> None:
    api.post("/chat/completions").respond(
        200, json=openai_completion("half a summ", finish_reason=reason)
    )
    error = await failure(summarizer)
    assert error.retryable is False


async def test_content_parts_are_joined(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    body = openai_completion("x")
    body["choices"][0]["message"]["content"] = [
        {"type": "text", "text": "a "},
        {"type": "text", "text": "b"},
    ]
    api.post("/chat/completions").respond(200, json=body)
    assert await summarizer.summarize(REQUEST) == "a b"


async def test_the_fake_server_on_localhost_answers_after_a_retry() -> None:
    script = [reply(502, {"error": {"message": "x"}}), reply(200, openai_completion(" local "))]
    sleeps, sleep = recording_sleep()
    with start_fake_llm(script) as fake:
        summarizer = RetryingSummarizer(
            OpenAICompatibleSummarizer(base_url=fake.url + "/v1", model="m"),
            sleep=sleep,
            jitter=lambda: 1.0,
        )
        try:
            assert await summarizer.summarize(REQUEST) == "local"
        finally:
            await summarizer.aclose()
        requests = fake.requests
    assert [r.path for r in requests] == ["/v1/chat/completions"] * 2
    assert sleeps == [0.5]
    assert requests[-1].body["model"] == "m"
    assert requests[-1].body["messages"][-1] == {
        "role": "user",
        "content": "Summarize this history.",
    }


async def test_an_answer_over_the_byte_cap_is_oversized_and_one_at_the_cap_is_read(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    cap = 128 * 321 + 64 * 1024  # max_tokens 321
    envelope = len(json.dumps(openai_completion("")).encode())
    at_cap = openai_completion("x" * (cap - envelope))
    assert len(json.dumps(at_cap).encode()) == cap
    route = api.post("/chat/completions")
    route.respond(200, content=json.dumps(at_cap).encode())
    assert await summarizer.summarize(REQUEST) == "x" * (cap - envelope)
    over = openai_completion("x" * (cap - envelope + 1))
    route.respond(200, content=json.dumps(over).encode())
    error = await failure(summarizer)
    assert (error.reason, error.retryable) == ("oversized", False)
    assert str(error) == f"[oversized] chat completion API answer over {cap} bytes"


def _with_message(**fields: object) -> dict[str, object]:
    body = openai_completion("## Goals & Decisions\n- fix `a.py`")
    body["choices"][0]["message"].update(fields)
    return body


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_with_message(refusal="I can't help with that."), "refusal"),
        (
            _with_message(tool_calls=[{"id": "c", "type": "function", "function": {"name": "f"}}]),
            "tool_calls",
        ),
        (_with_message(function_call={"name": "f", "arguments": "{}"}), "tool_calls"),
        (openai_completion("## Goals", finish_reason="tool_calls"), "tool_calls"),
        (openai_completion("## Goals", finish_reason="function_call"), "tool_calls"),
    ],
)
async def test_a_refusal_or_tool_call_beside_summary_text_is_a_failure(
    summarizer: OpenAICompatibleSummarizer,
    api: respx.MockRouter,
    body: dict[str, object],
    reason: str,
) -> None:
    api.post("/chat/completions").respond(200, json=body)
    error = await failure(summarizer)
    assert (error.reason, error.retryable) == (reason, False)


@pytest.mark.parametrize("field", [{"refusal": None}, {"refusal": ""}, {"tool_calls": []}])
async def test_empty_refusal_and_tool_call_fields_are_no_signal(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, field: dict[str, object]
) -> None:
    api.post("/chat/completions").respond(200, json=_with_message(**field))
    assert await summarizer.summarize(REQUEST) == "## Goals & Decisions\n- fix `a.py`"


LLAMA_CPP_WINDOW = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 6541,
        "n_ctx": 2048,
    }
}
OPENAI_WINDOW = {
    "error": {
        "message": "This model's maximum context length is 2048 tokens. However, you "
        "requested 6541 tokens (6541 in the messages, 0 in the completion).",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}


@pytest.mark.parametrize("body", [LLAMA_CPP_WINDOW, OPENAI_WINDOW])
async def test_a_context_length_refusal_names_the_setting_and_the_servers_window(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter, body: dict[str, Any]
) -> None:
    api.post("/chat/completions").respond(400, json=body)
    error = await failure(summarizer)
    assert (error.retryable, error.reason) == (False, "client_error")
    message = str(error)
    assert message.startswith(
        "[client_error] chat completion API call failed: the prompt is longer than the "
        "model's context window: set COMPACT_SUMMARY_SERVER_WINDOW to the server's context "
        "window (2048 tokens), or unset it (a larger one is stale), and "
        "COMPACT_SUMMARY_INPUT_BUDGET below it, leaving room for COMPACT_SUMMARY_MAX_TOKENS; "
        "HTTP 400 ("
    )


async def test_a_refusal_keeps_the_servers_code_and_message_cut_short(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    long = "model 'qwen-7b' not found, try pulling it first " + "x" * 500
    api.post("/chat/completions").respond(
        404, json={"error": {"message": long + "\nsecond line", "code": "model_not_found"}}
    )
    error = await failure(summarizer)
    message = str(error)
    assert message.startswith(
        "[client_error] chat completion API call failed: HTTP 404 (model_not_found: "
        "model 'qwen-7b' not found, try pulling it first xxx"
    )
    assert message.endswith("…)")
    assert "second line" not in message
    assert "COMPACT_SUMMARY_INPUT_BUDGET" not in message


async def test_a_refusal_that_quotes_the_prompt_keeps_only_its_code(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    echo = f"cannot parse input: {REQUEST.prompt} (position 3)"
    api.post("/chat/completions").respond(
        422, json={"error": {"message": echo, "code": "bad_input"}}
    )
    error = await failure(summarizer)
    assert str(error) == (
        "[client_error] chat completion API call failed: HTTP 422 "
        "(bad_input: (message omitted: it quotes the prompt))"
    )


async def test_an_error_body_that_is_not_json_gives_the_status_alone(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    api.post("/chat/completions").respond(502, text="<html>bad gateway</html>" * 1000)
    error = await failure(summarizer)
    assert str(error) == "[server_error] chat completion API call failed: HTTP 502"


async def test_a_refusal_that_quotes_the_key_keeps_only_its_code(
    summarizer: OpenAICompatibleSummarizer, api: respx.MockRouter
) -> None:
    masked = f"Incorrect API key provided: {API_KEY[:8]}*****{API_KEY[-4:]}."
    api.post("/chat/completions").respond(
        401, json={"error": {"message": masked, "code": "invalid_api_key"}}
    )
    error = await failure(summarizer)
    assert str(error) == (
        "[client_error] chat completion API call failed: HTTP 401 "
        "(invalid_api_key: (message omitted: it quotes the key))"
    )


async def test_the_temperature_is_sent_as_configured(api: respx.MockRouter) -> None:
    route = api.post("/chat/completions").respond(200, json=openai_completion("## Goals\nx"))
    summarizer = OpenAICompatibleSummarizer(base_url=BASE_URL, model="m", temperature=0.7)
    await summarizer.summarize(REQUEST)
    await summarizer.aclose()
    assert json.loads(route.calls.last.request.content)["temperature"] == 0.7
