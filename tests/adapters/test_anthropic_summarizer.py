from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import respx

from app.adapters.anthropic_summarizer import AnthropicSummarizer
from app.adapters.retry import RetryingSummarizer, RetryPolicy
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from tests.fakes.fake_llm_server import anthropic_message, reply, start_fake_llm

pytestmark = pytest.mark.anyio

BASE_URL = "http://anthropic.test"
API_KEY = "sk-secret-test-key"
REQUEST = SummaryRequest(
    messages=(), system="You summarize.", prompt="Summarize this history.", max_words=100
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def summarizer() -> AsyncIterator[AnthropicSummarizer]:
    summarizer = AnthropicSummarizer(
        api_key=API_KEY, model="claude-test", base_url=BASE_URL, timeout=5.0, max_tokens=321
    )
    yield summarizer
    await summarizer.aclose()


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL) as router:
        yield router


async def failure(summarizer: AnthropicSummarizer) -> SummarizerError:
    """The error the summarizer raises; any other exception type fails the test."""
    with pytest.raises(SummarizerError) as caught:
        await summarizer.summarize(REQUEST)
    assert API_KEY not in str(caught.value)
    return caught.value


async def test_summary_is_the_stripped_text_of_the_answer(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/v1/messages").respond(200, json=anthropic_message("  the summary \n"))

    assert await summarizer.summarize(REQUEST) == "the summary"

    sent = json.loads(route.calls.last.request.content)
    assert sent["model"] == "claude-test"
    assert (sent["max_tokens"], sent["temperature"]) == (321, 0.0)
    assert sent["system"] == "You summarize."
    assert sent["messages"] == [{"role": "user", "content": "Summarize this history."}]
    assert route.calls.last.request.headers["x-api-key"] == API_KEY


async def test_text_blocks_are_joined_and_other_blocks_ignored(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    body = anthropic_message("first ")
    body["content"] = [
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "text", "text": "first "},
        {"type": "some_future_block", "data": 1},
        {"type": "text", "text": "second"},
    ]
    api.post("/v1/messages").respond(200, json=body)

    assert await summarizer.summarize(REQUEST) == "first second"


async def test_an_empty_system_prompt_is_not_sent(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/v1/messages").respond(200, json=anthropic_message("ok"))

    await summarizer.summarize(
        SummaryRequest(messages=(), system="", prompt="Summarize.", max_words=10)
    )

    assert "system" not in json.loads(route.calls.last.request.content)


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (500, "InternalServerError"),
        (502, "InternalServerError"),
        # The SDK declares ServiceUnavailableError and DeadlineExceededError but raises
        # InternalServerError for 503 and 504: the status code decides, not the class.
        (503, "InternalServerError"),
        (504, "InternalServerError"),
        (529, "OverloadedError"),
        (408, "APIStatusError"),
        (409, "ConflictError"),
    ],
)
async def test_server_errors_are_retryable(
    summarizer: AnthropicSummarizer, api: respx.MockRouter, status: int, error_class: str
) -> None:
    api.post("/v1/messages").respond(
        status,
        json={"type": "error", "error": {"type": "api_error", "message": f"x {REQUEST.prompt}"}},
    )

    error = await failure(summarizer)

    assert error.retryable is True
    assert error.retry_after is None
    assert str(error).endswith(
        f"{error_class} (HTTP {status}) (api_error: (message omitted: it quotes the prompt))"
    )


async def test_rate_limit_is_retryable_with_the_server_retry_after(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    api.post("/v1/messages").respond(
        429,
        json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        headers={"retry-after": "7"},
    )

    error = await failure(summarizer)

    assert error.retryable is True
    assert error.retry_after == 7.0
    assert "RateLimitError" in str(error)


async def test_overloaded_passes_retry_after_too(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    api.post("/v1/messages").respond(529, json={}, headers={"retry-after": "1.5"})

    assert (await failure(summarizer)).retry_after == 1.5


@pytest.mark.parametrize("value", ["Wed, 21 Oct 2015 07:28:00 GMT", "soon", "-3", "nan", "inf"])
async def test_unusable_retry_after_is_ignored(
    summarizer: AnthropicSummarizer, api: respx.MockRouter, value: str
) -> None:
    api.post("/v1/messages").respond(429, json={}, headers={"retry-after": value})

    error = await failure(summarizer)

    assert error.retryable is True
    assert error.retry_after is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
async def test_client_errors_are_not_retryable(
    summarizer: AnthropicSummarizer, api: respx.MockRouter, status: int
) -> None:
    api.post("/v1/messages").respond(
        status,
        json={"type": "error", "error": {"type": "x", "message": f"bad key {API_KEY}"}},
        headers={"retry-after": "7"},
    )

    error = await failure(summarizer)

    assert error.retryable is False
    assert error.retry_after is None
    assert str(error).endswith(f"(HTTP {status}) (x: (message omitted: it quotes the key))")


async def test_a_prompt_too_long_names_the_input_budget_setting(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    message = "prompt is too long: 210345 tokens > 200000 maximum"
    api.post("/v1/messages").respond(
        400, json={"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    )
    error = await failure(summarizer)
    assert str(error) == (
        "[client_error] the prompt is longer than the model's context window: set "
        "COMPACT_SUMMARY_INPUT_BUDGET below its window, leaving room for "
        "COMPACT_SUMMARY_MAX_TOKENS; Anthropic API call failed: BadRequestError (HTTP 400) "
        f"(invalid_request_error: {message})"
    )


@pytest.mark.parametrize("text", ["", "  \n\t "])
async def test_empty_or_blank_text_is_not_a_summary(
    summarizer: AnthropicSummarizer, api: respx.MockRouter, text: str
) -> None:
    api.post("/v1/messages").respond(200, json=anthropic_message(text))

    error = await failure(summarizer)

    assert error.retryable is False
    assert "empty" in str(error)


async def test_an_answer_without_text_blocks_is_empty(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    body = anthropic_message("x")
    body["content"] = []
    api.post("/v1/messages").respond(200, json=body)

    assert "empty" in str(await failure(summarizer))


async def test_a_summary_cut_off_at_max_tokens_is_a_failure(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    api.post("/v1/messages").respond(
        200, json=anthropic_message("## Goals\n- a\n## Fi", stop_reason="max_tokens")
    )

    error = await failure(summarizer)

    assert error.retryable is False
    assert "max_tokens" in str(error)


async def test_a_refusal_is_a_failure(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    api.post("/v1/messages").respond(
        200, json=anthropic_message("I can't help with that.", stop_reason="refusal")
    )

    assert (await failure(summarizer)).retryable is False


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="<html>gateway</html>"),
        httpx.Response(200, content=b"{not json", headers={"content-type": "application/json"}),
        httpx.Response(200, content=b"\xff\xfe{", headers={"content-type": "application/json"}),
        httpx.Response(200, json=[1, 2]),
        httpx.Response(200, json={"unexpected": "shape"}),
        httpx.Response(200, json={"content": "not a list", "stop_reason": "end_turn"}),
        httpx.Response(200, json=None),
    ],
    ids=["html", "invalid-json", "bad-bytes", "list", "object", "content-str", "null"],
)
async def test_a_body_that_is_not_a_message_is_a_non_retryable_failure(
    summarizer: AnthropicSummarizer, api: respx.MockRouter, response: httpx.Response
) -> None:
    api.post("/v1/messages").mock(return_value=response)

    assert (await failure(summarizer)).retryable is False


@pytest.mark.parametrize(
    ("side_effect", "error_class"),
    [
        (httpx.ReadTimeout, "APITimeoutError"),
        (httpx.ConnectTimeout, "APITimeoutError"),
        (httpx.ConnectError, "APIConnectionError"),
        (httpx.RemoteProtocolError, "APIConnectionError"),
    ],
)
async def test_timeouts_and_connection_errors_are_retryable(
    summarizer: AnthropicSummarizer,
    api: respx.MockRouter,
    side_effect: type[Exception],
    error_class: str,
) -> None:
    route = api.post("/v1/messages").mock(side_effect=side_effect)

    error = await failure(summarizer)

    assert error.retryable is True
    assert error_class in str(error)
    assert route.call_count == 1  # the SDK's own retries are off


async def test_errors_do_not_chain_the_sdk_exception(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    api.post("/v1/messages").respond(500, json={"error": {"message": "prompt echo"}})

    error = await failure(summarizer)

    assert error.__cause__ is None
    assert error.__suppress_context__ is True


async def test_name_is_anthropic(summarizer: AnthropicSummarizer) -> None:
    assert summarizer.name == "anthropic"


async def test_retrying_anthropic_succeeds_after_a_server_error(
    summarizer: AnthropicSummarizer, api: respx.MockRouter
) -> None:
    route = api.post("/v1/messages")
    route.side_effect = [
        httpx.Response(500, json={"type": "error", "error": {"type": "api_error"}}),
        httpx.Response(200, json=anthropic_message("after retry")),
    ]
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    retrying = RetryingSummarizer(
        summarizer, RetryPolicy(base_delay=0.5), sleep=sleep, jitter=lambda: 1.0
    )

    assert await retrying.summarize(REQUEST) == "after retry"
    assert route.call_count == 2
    assert sleeps == [0.5]


async def test_the_real_sdk_gets_a_summary_from_the_fake_server() -> None:
    with start_fake_llm([reply(200, anthropic_message(" from the fake "))]) as fake:
        summarizer = AnthropicSummarizer(api_key=API_KEY, model="claude-test", base_url=fake.url)
        try:
            assert await summarizer.summarize(REQUEST) == "from the fake"
        finally:
            await summarizer.aclose()

        [received] = fake.requests
    assert received.path == "/v1/messages"
    assert received.headers["x-api-key"] == API_KEY
    assert received.headers["anthropic-version"]
    assert received.body["system"] == "You summarize."
    assert received.body["messages"] == [{"role": "user", "content": "Summarize this history."}]


async def test_the_fake_server_error_then_success_goes_through_the_retry_loop() -> None:
    script = [
        reply(500, {"type": "error", "error": {"type": "api_error", "message": "x"}}),
        reply(200, anthropic_message("second time")),
    ]
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    with start_fake_llm(script) as fake:
        summarizer = RetryingSummarizer(
            AnthropicSummarizer(api_key=API_KEY, model="claude-test", base_url=fake.url),
            sleep=sleep,
            jitter=lambda: 1.0,
        )
        try:
            assert await summarizer.summarize(REQUEST) == "second time"
        finally:
            await summarizer.aclose()

        assert len(fake.requests) == 2
    assert sleeps == [0.5]


@pytest.mark.parametrize("stop_reason", ["tool_use", "end_turn"])
async def test_a_tool_use_beside_summary_text_is_a_failure(
    summarizer: AnthropicSummarizer, api: respx.MockRouter, stop_reason: str
) -> None:
    body = anthropic_message("## Goals & Decisions\n- fix a.py", stop_reason=stop_reason)
    body["content"].append({"type": "tool_use", "id": "t1", "name": "bash", "input": {}})
    api.post("/v1/messages").respond(200, json=body)
    error = await failure(summarizer)
    assert (error.reason, error.retryable) == ("tool_calls", False)
