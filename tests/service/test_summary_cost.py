"""What a compaction's summaries cost, reported in its answer, its session record and the
metrics: the summarizer's calls, the tokens they read (the prompt) and wrote, their time."""

from __future__ import annotations

import pytest

from app.adapters.prometheus_metrics import PrometheusMetrics
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.core.summary import ExtractiveSummarizer
from app.core.tokens import count_messages
from app.service.compaction import CompactRequest
from app.service.metered import MeteredCompactionService
from tests.builders import FakeSummarizer, MemoryRecords, build_service, parse, rounds, system

pytestmark = pytest.mark.anyio

ANSWER = "## Goals & Decisions\nFix the parser build."


def _prompt_tokens(tokenizer: TiktokenTokenizer, request: SummaryRequest) -> int:
    return tokenizer.count(f"{request.system}\n{request.prompt}")


def _about(counted: int, exact: int) -> bool:
    """The service counts a call's transcript by its messages' counts (not tokenized once
    more): within a few percent of the prompt's own count."""
    return exact > 0 and abs(counted - exact) <= 0.05 * exact


async def test_a_compaction_reports_its_summarizer_s_calls_and_tokens_in_its_record(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer(lambda r: ANSWER)
    records = MemoryRecords()
    service = build_service(tokenizer, summarizer, records=records)
    messages = parse([system("s"), *rounds(1, 6)])
    result = await service.compact(CompactRequest(messages=messages, force=True, session_id="a"))
    assert result.compacted
    [request] = summarizer.requests
    cost = result.summarizer_cost
    assert (cost.calls, cost.reused) == (1, 0)
    assert _about(cost.input_tokens, _prompt_tokens(tokenizer, request))
    assert cost.output_tokens == tokenizer.count(ANSWER)
    assert cost.seconds >= 0
    [record] = records.saved
    assert record.summarizer_cost == cost


async def test_a_failed_call_is_charged_and_the_fallback_s_call_too(
    tokenizer: TiktokenTokenizer,
) -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("down", retryable=False)

    failing = FakeSummarizer(fail)
    service = build_service(tokenizer, failing, fallback=ExtractiveSummarizer())
    messages = parse([system("s"), *rounds(1, 6)])
    result = await service.compact(CompactRequest(messages=messages, force=True))
    assert result.compacted
    [request] = failing.requests
    cost = result.summarizer_cost
    assert cost.calls == 2
    # The failed call read the prompt; the extractive fallback read the messages.
    fallback_read = sum(count_messages(tokenizer, request.messages))
    assert _about(cost.input_tokens, _prompt_tokens(tokenizer, request) + fallback_read)
    assert cost.output_tokens > 0


async def test_metrics_count_the_summarizer_s_calls_and_tokens(
    tokenizer: TiktokenTokenizer,
) -> None:
    metrics = PrometheusMetrics()
    service = MeteredCompactionService(
        build_service(tokenizer, FakeSummarizer(lambda r: ANSWER)), metrics
    )
    messages = parse([system("s"), *rounds(1, 6)])
    first = await service.compact(CompactRequest(messages=messages, force=True))
    second = await service.compact(CompactRequest(messages=messages[:-4], force=True))
    text = metrics.exposition()[0].decode()
    read = first.summarizer_cost.input_tokens + second.summarizer_cost.input_tokens
    wrote = 2 * tokenizer.count(ANSWER)
    assert "context_compact_summarizer_calls_total 2.0" in text
    assert f"context_compact_summarizer_input_tokens_total {float(read)}" in text
    assert f"context_compact_summarizer_output_tokens_total {float(wrote)}" in text
    assert "context_compact_summarizer_seconds_total" in text
