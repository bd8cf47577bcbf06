from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import respx

from app.adapters.anthropic_counter import AnthropicCounter
from app.core.errors import CountError
from tests.builders import parse, system, user

pytestmark = pytest.mark.anyio

BASE_URL = "http://anthropic.test"
MESSAGES = parse([system("be brief"), user("hello")])


@pytest.fixture
async def counter() -> AsyncIterator[AnthropicCounter]:
    counter = AnthropicCounter(api_key="sk-k", model="claude-test", base_url=BASE_URL, timeout=2)
    yield counter
    await counter.aclose()


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL) as router:
        yield router


async def test_counts_with_the_system_prompt_as_system(
    counter: AnthropicCounter, api: respx.MockRouter
) -> None:
    route = api.post("/v1/messages/count_tokens").respond(200, json={"input_tokens": 17})
    assert await counter.count_tokens(MESSAGES) == 17
    sent = json.loads(route.calls.last.request.content)
    assert sent == {
        "model": "claude-test",
        "messages": [{"role": "user", "content": "hello"}],
        "system": [{"type": "text", "text": "be brief"}],
    }


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(500, json={"type": "error", "error": {"type": "api_error"}}),
        httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error"}}),
        httpx.Response(200, json={"tokens": 3}),
        httpx.Response(200, content=b"not json"),
    ],
)
async def test_every_failure_is_a_count_error(
    counter: AnthropicCounter, api: respx.MockRouter, answer: httpx.Response
) -> None:
    api.post("/v1/messages/count_tokens").mock(return_value=answer)
    with pytest.raises(CountError) as caught:
        await counter.count_tokens(MESSAGES)
    assert "sk-k" not in str(caught.value)


async def test_network_errors_are_count_errors(
    counter: AnthropicCounter, api: respx.MockRouter
) -> None:
    api.post("/v1/messages/count_tokens").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(CountError, match="APIConnectionError"):
        await counter.count_tokens(MESSAGES)
