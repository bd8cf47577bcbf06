"""The `openai` summarizer against the server the user has: the input budget fitted to its
window in its own tokens (counted by its tokenize endpoint, else the fixed ratio), and the
calls made reported when the summary fails, in `/compact` and in a job's result. Every
server is respx answering on `llm.test`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
import respx

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.summary.server_ratio import ratio_sample
from tests.builders import assistant, bulk_round, system, user
from tests.fakes.fake_llm_server import openai_completion
from tests.fakes.summaries import llm_summary

pytestmark = pytest.mark.anyio

ROOT = "http://llm.test"
MESSAGES = [system("s"), user("fix a.py"), *bulk_round(), user("go on")]
# Valid as sent: a failed summary answers it unchanged.
CLOSED = [system("s"), user("fix a.py"), *bulk_round(), assistant("The tests are listed.")]
SAMPLE_TOKENS = 608  # cl100k tokens of the ratio sample (pinned below)
# Qwen2.5-Coder's count of the sample (llama-cpp-python's `/extras/tokenize/count`).
QWEN_SAMPLE_TOKENS = 669


@pytest.fixture
def llm() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as router:
        yield router


def serve(llm: respx.MockRouter, answers: list[httpx.Response]) -> respx.Route:
    """The chat completions route answering `answers` in turn (the last repeats); 404 for
    every route the test did not add before."""
    left = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        return left.pop(0) if len(left) > 1 else left[0]

    route = llm.post(f"{ROOT}/v1/chat/completions").mock(side_effect=answer)
    llm.route().respond(404)
    return route


def summary_of(messages: list[dict[str, Any]]) -> httpx.Response:
    return httpx.Response(200, json=openai_completion(llm_summary(messages[:-1])))


async def openai_client(client_for: Any, **settings: Any) -> httpx.AsyncClient:
    values: dict[str, Any] = {
        "summarizer": "openai",
        "openai_base_url": f"{ROOT}/v1",
        "summary_model": "local",
        "summary_mode": "transcript",
        "summary_max_tokens": 1000,
        "summary_attempts": 1,
    }
    client: httpx.AsyncClient = await client_for(**(values | settings))
    return client


def test_the_ratio_sample_is_pinned() -> None:
    assert TiktokenTokenizer().count(ratio_sample()) == SAMPLE_TOKENS


async def test_llama_cpps_count_sets_the_ratio_the_budget_is_fitted_with(
    client_for: Any, llm: respx.MockRouter
) -> None:
    llm.get(f"{ROOT}/props").respond(200, json={"default_generation_settings": {"n_ctx": 4096}})
    tokenize = llm.post(f"{ROOT}/tokenize").respond(
        200, json={"tokens": list(range(QWEN_SAMPLE_TOKENS))}
    )
    serve(llm, [summary_of(MESSAGES)])
    client = await openai_client(client_for)
    data = (await client.post("/compact", json={"messages": MESSAGES, "force": True})).json()
    assert json.loads(tokenize.calls[0].request.content)["content"] == ratio_sample()
    # (4096 - 1000) / (669 / 608 * 1.08) = 2605.3
    assert data["compacted"] is True
    assert data["warnings"][0] == (
        "summary_input_budget 100000 lowered to 2605: the summarizer's server has a context "
        "window of 4096 tokens (set COMPACT_SUMMARY_INPUT_BUDGET to match it)"
    )


async def test_llama_cpp_pythons_count_and_the_configured_window(
    client_for: Any, llm: respx.MockRouter
) -> None:
    """llama-cpp-python reports no window: the configured one is used, with its count."""
    llm.post(f"{ROOT}/extras/tokenize/count").respond(200, json={"count": 2 * SAMPLE_TOKENS})
    serve(llm, [summary_of(MESSAGES)])
    client = await openai_client(client_for, summary_server_window=8192)
    data = (await client.post("/compact", json={"messages": MESSAGES, "force": True})).json()
    # (8192 - 1000) / (2 * 1.08) = 3329.6
    assert data["warnings"][0].startswith("summary_input_budget 100000 lowered to 3329: ")
    assert "window of 8192 tokens" in data["warnings"][0]


async def test_a_server_that_cannot_count_is_fitted_with_the_fixed_ratio(
    client_for: Any, llm: respx.MockRouter
) -> None:
    llm.get(f"{ROOT}/props").respond(200, json={"default_generation_settings": {"n_ctx": 4096}})
    serve(llm, [summary_of(MESSAGES)])  # /tokenize and /extras/tokenize/count: 404
    client = await openai_client(client_for)
    data = (await client.post("/compact", json={"messages": MESSAGES, "force": True})).json()
    # (4096 - 1000) / 1.25 = 2476.8
    assert data["warnings"][0].startswith("summary_input_budget 100000 lowered to 2476: ")


@pytest.mark.parametrize("status", [400, 500])
async def test_a_failed_summary_reports_the_call_it_made(
    client_for: Any, llm: respx.MockRouter, status: int
) -> None:
    route = serve(llm, [httpx.Response(status, json={"error": {"message": "no"}})])
    client = await openai_client(client_for)
    data = (await client.post("/compact", json={"messages": CLOSED, "force": True})).json()
    assert (data["compacted"], data["reason"], data["summary_chunks"]) == (
        False,
        "summarization_failed",
        1,
    )
    assert route.call_count == 1


async def test_the_extractive_fallback_reports_the_failed_llm_call(
    client_for: Any, llm: respx.MockRouter
) -> None:
    serve(llm, [httpx.Response(500, json={"error": {"message": "no"}})])
    client = await openai_client(client_for, summary_fallback="extractive")
    data = (await client.post("/compact", json={"messages": CLOSED, "force": True})).json()
    assert (data["compacted"], data["summarizer"], data["summary_chunks"]) == (
        True,
        "extractive",
        1,
    )


async def test_a_failed_jobs_result_reports_the_call_it_made(
    client_for: Any, llm: respx.MockRouter
) -> None:
    serve(llm, [httpx.Response(400, json={"error": {"message": "no"}})])
    client = await openai_client(client_for)
    job = (await client.post("/compactions", json={"messages": CLOSED, "force": True})).json()
    for _ in range(400):
        body = (await client.get(f"/compactions/{job['id']}")).json()
        if body["state"] == "done":
            break
        await anyio.sleep(0.005)
    result = body["result"]
    assert (body["state"], result["reason"], result["summary_chunks"]) == (
        "done",
        "summarization_failed",
        1,
    )
