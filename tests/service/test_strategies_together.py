"""Where the strategies meet the shared machinery: session records, chunked summaries, the
cooldown and the bound on summaries."""

from __future__ import annotations

from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.messages import message_text
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest
from app.core.sessions.records import message_id
from app.core.summary.prompt import ARCHIVED_HEADINGS
from app.service.compaction import CompactionService, CompactRequest
from app.service.registry import STRATEGIES
from app.service.slots import BusyError, SummarySlots
from tests.builders import (
    FakeSummarizer,
    MemoryRecords,
    assistant,
    build_service,
    bulk_round,
    parse,
    rounds,
    system,
    tool_result,
    tool_use,
    user,
)
from tests.service.test_strategies import TITLE

pytestmark = pytest.mark.anyio


def make_service(
    tokenizer: TiktokenTokenizer,
    summarizer: FakeSummarizer | None = None,
    *,
    records: MemoryRecords | None = None,
    slots: SummarySlots | None = None,
    **defaults: Any,
) -> CompactionService:
    summarizer = summarizer or FakeSummarizer(lambda r: "BODY")
    return build_service(tokenizer, summarizer, records=records, slots=slots, **defaults)


async def test_a_selective_record_names_the_summary_message_after_the_kept_memory(
    tokenizer: TiktokenTokenizer,
) -> None:
    memory = user("Remember: the user prefers tabs.") | {"metadata": {"kind": "memory"}}
    messages = parse([system("s"), memory, assistant("Noted."), *rounds(1, 4)])
    records = MemoryRecords()
    options = CompactOptions(
        strategy="selective", selective_keep_recent=1, context_window=200, threshold=1.0
    )
    result = await make_service(tokenizer, records=records).compact(
        CompactRequest(messages=messages, options=options, session_id="s1", force=True)
    )
    assert result.compacted is True
    assert result.summary is not None
    summary_message = next(
        m for m in result.messages if message_text(m).startswith("[Conversation compressed]")
    )
    assert result.messages[1] == messages[1]  # the memory stays first after the head
    assert result.messages.index(summary_message) > 1
    (record,) = records.saved
    assert record.strategy == "selective"
    assert record.summary_message_id == message_id(summary_message)


async def test_tail_summarizes_a_long_older_part_in_chunks_with_the_archived_template(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer(lambda r: "BODY")
    service = make_service(tokenizer, summarizer, summary_input_budget=1500)
    messages = parse([system("s"), *rounds(1, 12)])
    result = await service.compact(
        CompactRequest(
            messages=messages,
            options=CompactOptions(strategy="tail", tail_keep_recent_rounds=1),
            force=True,
        )
    )
    assert (result.compacted, result.strategy) == (True, "tail")
    assert result.summary_chunks == len(summarizer.requests) > 1
    assert all(tokenizer.count(r.prompt) <= 1500 for r in summarizer.requests)
    assert all(ARCHIVED_HEADINGS[0] in r.prompt for r in summarizer.requests)
    assert message_text(result.messages[1]).startswith(TITLE)


async def test_the_cooldown_after_a_failed_summary_runs_prune_instead_of_selective(
    tokenizer: TiktokenTokenizer,
) -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("overloaded", retryable=False)

    records = MemoryRecords()
    service = make_service(
        tokenizer, FakeSummarizer(fail), records=records, summary_cooldown_seconds=300.0
    )
    messages = parse([system("s"), *rounds(1, 4)])
    failed = await service.compact(CompactRequest(messages=messages, session_id="s1", force=True))
    assert failed.reason == "summarization_failed"
    options = CompactOptions(strategy="selective", prune_keep_recent=1)
    cooled = await service.compact(
        CompactRequest(messages=messages, options=options, session_id="s1", force=True)
    )
    assert (cooled.compacted, cooled.strategy) == (True, "prune")
    assert cooled.warnings == [
        "summaries are cooling down until 2026-11-22T12:05:00+00:00 after a failed summary "
        "in this session: ran prune instead of selective"
    ]
    assert [r.strategy for r in records.saved] == ["full", "prune"]


async def test_prune_needs_no_summary_slot_while_a_summarizing_strategy_is_refused(
    tokenizer: TiktokenTokenizer,
) -> None:
    slots = SummarySlots(1, wait=0)
    service = make_service(tokenizer, slots=slots)
    messages = parse([system("s"), *rounds(1, 4)])
    async with slots.hold():
        pruned = await service.compact(
            CompactRequest(
                messages=messages,
                options=CompactOptions(strategy="prune", prune_keep_recent=1),
                force=True,
            )
        )
        assert (pruned.compacted, pruned.strategy) == (True, "prune")
        for strategy in [name for name, s in STRATEGIES.items() if s.summarizes]:
            with pytest.raises(BusyError):
                await service.compact(
                    CompactRequest(
                        messages=messages,
                        options=CompactOptions.model_validate({"strategy": strategy}),
                        force=True,
                    )
                )
    assert slots.in_use == 0


async def test_a_selective_rollback_is_recorded_but_starts_no_cooldown(
    tokenizer: TiktokenTokenizer,
) -> None:
    calls: list[SummaryRequest] = []

    def explode(request: SummaryRequest) -> str:
        calls.append(request)
        if len(calls) == 1:
            raise RuntimeError("summarizer bug")
        return "BODY"

    records = MemoryRecords()
    service = make_service(
        tokenizer, FakeSummarizer(explode), records=records, summary_cooldown_seconds=300.0
    )
    messages = parse([system("s"), *rounds(1, 4)])
    options = CompactOptions(
        strategy="selective", selective_keep_recent=1, context_window=200, fallback=False
    )
    failed = await service.compact(
        CompactRequest(messages=messages, options=options, session_id="s1", force=True)
    )
    assert (failed.compacted, failed.reason) == (False, "selective_failed")
    (record,) = records.saved
    assert (record.strategy, record.outcome) == ("selective", "selective_failed")
    after = await service.compact(
        CompactRequest(
            messages=messages,
            options=CompactOptions(strategy="tail", tail_keep_recent_rounds=1),
            session_id="s1",
            force=True,
        )
    )
    assert (after.compacted, after.strategy, after.warnings) == (True, "tail", [])


async def test_tail_counts_a_split_first_kept_message_once(
    tokenizer: TiktokenTokenizer,
) -> None:
    first = tool_use("bash", "t1", command="make 1")
    second = tool_use("bash", "t2", command="make 2")
    raw = [
        system("s"),
        user("Task 1."),
        *bulk_round(),
        assistant("Running 1.", first),
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "text", "text": "Task 2."},
            ],
        },
        assistant("Running 2.", second),
        tool_result("t2", "ok"),
        assistant("Done 2."),
    ]
    messages = parse(raw)
    result = await make_service(tokenizer).compact(
        CompactRequest(
            messages=messages,
            options=CompactOptions(strategy="tail", tail_keep_recent_rounds=1),
            force=True,
        )
    )
    assert result.compacted is True
    assert result.compacted_indexes == [1, 2, 3, 4, 5]
    assert result.stats is not None
    assert (result.stats.compacted_message_count, result.stats.retained_message_count) == (5, 4)


async def test_during_a_cooldown_prune_falls_back_to_no_summarizing_strategy(
    tokenizer: TiktokenTokenizer,
) -> None:
    def explode(request: SummaryRequest) -> str:
        raise SummarizerError("503", retryable=True)

    records = MemoryRecords()
    summarizer = FakeSummarizer(explode)
    service = make_service(tokenizer, summarizer, records=records, summary_cooldown_seconds=300.0)
    messages = parse([system("s"), *rounds(1, 4)])
    failed = await service.compact(CompactRequest(messages, session_id="s1", force=True))
    assert (failed.compacted, failed.reason) == (False, "summarization_failed")
    summarizer.requests.clear()
    options = CompactOptions(prune_min_tokens=1_000_000)
    cooled = await service.compact(CompactRequest(messages, options, session_id="s1", force=True))
    assert (cooled.compacted, cooled.reason, cooled.strategy) == (
        False,
        "nothing_to_prune",
        "prune",
    )
    assert (cooled.fallbacks, summarizer.requests) == ([], [])


async def test_summary_chunks_adds_up_the_calls_of_every_strategy_tried(
    tokenizer: TiktokenTokenizer,
) -> None:
    """`tail` summarizes, its result is refused (`no_gain`), `full` summarizes again and is
    refused too: two calls made, both reported although nothing was compacted."""
    summarizer = FakeSummarizer(lambda r: "## Goals\n" + "word " * 400)
    raw = [system("s"), user("Rename x."), assistant("Done."), user("More."), assistant("Ok.")]
    options = CompactOptions(strategy="tail", tail_keep_recent_rounds=1)
    result = await make_service(tokenizer, summarizer).compact(
        CompactRequest(messages=parse(raw), options=options, force=True)
    )
    assert (result.compacted, result.reason, result.strategy) == (False, "no_gain", "full")
    assert [(f.strategy, f.reason) for f in result.fallbacks] == [("tail", "no_gain")]
    assert result.summary_chunks == len(summarizer.requests) == 2
