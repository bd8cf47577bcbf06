"""What a head cost, said by the answer that puts it in: the summarizer's calls, the tokens
they read and wrote, their time (`x-compact-summarizer-*`); none on the other answers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.summary import ExtractiveSummarizer
from app.core.tokens import count_messages
from app.proxy.app import ProxyApp
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.metrics import NoMetrics
from tests.builders import FakeSummarizer, build_service
from tests.proxy.fakes import FakeUpstream
from tests.proxy.test_app import CONFIG, HEADERS, _anthropic, _tokens, client, long_session

pytestmark = pytest.mark.anyio

ANSWER = "## Goals & Decisions\nFix the parser build."
COST = (
    "x-compact-summarizer-calls",
    "x-compact-summarizer-reused",
    "x-compact-summarizer-input-tokens",
    "x-compact-summarizer-output-tokens",
    "x-compact-summarizer-ms",
)


def _cost(headers: Any) -> dict[str, str]:
    return {name: headers[name] for name in COST if name in headers}


async def test_the_answer_that_puts_a_background_head_in_says_what_it_cost(
    tokenizer: TiktokenTokenizer,
) -> None:
    released = asyncio.Event()

    async def slow(request: Any) -> str:
        await released.wait()
        return ANSWER

    summarizer = FakeSummarizer(slow)
    background = build_service(tokenizer, summarizer)
    immediate = build_service(tokenizer, ExtractiveSummarizer())
    compactor = ProxyCompactor(background, immediate, ProxyPolicy(wait_seconds=0.2))
    measured = ProxyCompactor(immediate, immediate)
    at_start, at_splice = long_session(8), long_session(10)
    splice_tokens = await _tokens(measured, at_splice)
    window = int(splice_tokens / 0.9) + 100
    models = {"claude-tiny": ModelSpec(context_window=window, tokenizer="tiktoken", margin=0.0)}
    app = ProxyApp(CONFIG, FakeUpstream(), compactor, models, NoMetrics())
    session = {**HEADERS, "x-claude-code-session-id": "bg"}
    async with client(app) as http:
        first = await http.post("/v1/messages", content=_anthropic(at_start), headers=session)
        released.set()
        for _ in range(100):
            if compactor._sessions[first.headers["x-compact-session"]].ready is not None:
                break
            await asyncio.sleep(0.01)
        second = await http.post("/v1/messages", content=_anthropic(at_splice), headers=session)
        third = await http.post("/v1/messages", content=_anthropic(at_splice), headers=session)
    assert first.headers["x-compact-action"] == "precompact_started"
    assert _cost(first.headers) == {}
    assert second.headers["x-compact-action"] == "applied"
    [request] = summarizer.requests
    read = tokenizer.count(f"{request.system}\n{request.prompt}")
    cost = _cost(second.headers)
    assert int(cost.pop("x-compact-summarizer-ms")) >= 0
    # The transcript counted by its messages' counts: within a few percent of the prompt's.
    assert abs(int(cost.pop("x-compact-summarizer-input-tokens")) - read) <= 0.05 * read
    assert cost == {
        "x-compact-summarizer-calls": "1",
        "x-compact-summarizer-reused": "0",
        "x-compact-summarizer-output-tokens": str(tokenizer.count(ANSWER)),
    }
    # The same head carried again: nothing new was paid for.
    assert third.headers["x-compact-action"] == "applied"
    assert _cost(third.headers) == {}


async def test_a_head_made_at_once_by_the_extractive_summarizer_says_what_it_read(
    tokenizer: TiktokenTokenizer,
) -> None:
    extractive = ExtractiveSummarizer()
    read: list[int] = []
    original = extractive.summarize

    async def counted(request: Any) -> str:
        read.append(sum(count_messages(tokenizer, request.messages)))
        return await original(request)

    extractive.summarize = counted  # type: ignore[method-assign]
    service = build_service(tokenizer, extractive)
    app = ProxyApp(
        CONFIG,
        FakeUpstream(),
        ProxyCompactor(service, service),
        {"claude-tiny": ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0)},
        NoMetrics(),
    )
    session = {**HEADERS, "x-claude-code-session-id": "now"}
    async with client(app) as http:
        answer = await http.post(
            "/v1/messages", content=_anthropic(long_session(12)), headers=session
        )
    assert answer.headers["x-compact-action"] == "compacted"
    assert answer.headers["x-compact-summarizer-calls"] == str(len(read)) == "1"
    assert answer.headers["x-compact-summarizer-input-tokens"] == str(sum(read))
    assert int(answer.headers["x-compact-summarizer-output-tokens"]) > 0
