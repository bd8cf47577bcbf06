"""Per-session records, `max_iterations` and the cooldown after a failed summary."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest
from app.core.sessions.records import CompactionRecord, message_id
from app.service.compaction import CompactionService, CompactRequest
from tests.builders import (
    NOW,
    FakeSummarizer,
    MemoryRecords,
    assistant,
    build_service,
    parse,
    rounds,
    system,
    user,
)

pytestmark = pytest.mark.anyio

MESSAGES = parse([system("s"), *rounds(1, 3)])


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def make_service(
    tokenizer: TiktokenTokenizer,
    records: MemoryRecords,
    summarizer: FakeSummarizer | None = None,
    clock: Clock | None = None,
    **defaults: object,
) -> CompactionService:
    summarizer = summarizer or FakeSummarizer(lambda r: "BODY")
    return build_service(
        tokenizer, summarizer, records=records, clock=clock or (lambda: NOW), **defaults
    )


def request(strategy: str = "tail", **fields: object) -> CompactRequest:
    values: dict[str, object] = {
        "messages": MESSAGES,
        "options": CompactOptions.model_validate(
            {"strategy": strategy, "tail_keep_recent_rounds": 1, "prune_keep_recent": 1}
        ),
        "session_id": "s1",
        "force": True,
    }
    return CompactRequest(**(values | fields))  # type: ignore[arg-type]


async def test_a_compaction_appends_a_record_with_every_field(
    tokenizer: TiktokenTokenizer,
) -> None:
    records = MemoryRecords()
    result = await make_service(tokenizer, records).compact(request(reason="tool_execution"))
    (record,) = records.saved
    assert result.stats is not None
    assert record.model_dump(exclude={"id"}) == CompactionRecord(
        id="x",
        session_id="s1",
        timestamp="2026-11-22T12:00:00+00:00",
        reason="tool_execution",
        strategy="tail",
        outcome="compacted",
        message_count_before=13,
        message_count_after=7,
        tokens_before=result.token_count,
        tokens_after=result.stats.compacted_token_count,
        compacted_message_ids=[message_id(m) for m in MESSAGES[1:9]],
        summary_message_id=message_id(result.messages[1]),
        archive_id="arch-1",
        warnings=[],
        context_end_id=message_id(result.messages[-1]),
        summarizer_cost=result.summarizer_cost,
    ).model_dump(exclude={"id"})
    assert result.summarizer_cost.calls == 1


async def test_the_record_reason_defaults_to_manual_when_forced_else_llm_call(
    tokenizer: TiktokenTokenizer,
) -> None:
    records = MemoryRecords()
    service = make_service(tokenizer, records)
    await service.compact(request())
    await service.compact(request("prune", reason="manual"))
    await service.compact(
        CompactRequest(
            MESSAGES,
            CompactOptions(strategy="prune", prune_keep_recent=1, threshold=0.0001),
            session_id="s1",
        )
    )
    assert [r.reason for r in records.saved] == ["manual", "manual", "llm_call"]


async def test_declined_requests_and_requests_without_a_session_leave_no_record(
    tokenizer: TiktokenTokenizer,
) -> None:
    records = MemoryRecords()
    service = make_service(tokenizer, records)
    below = await service.compact(request(force=False))
    one_exchange = parse([system("s"), user("Task 1."), assistant("Done 1.")])
    few = await service.compact(
        request(messages=one_exchange, options=CompactOptions(strategy="tail", fallback=False))
    )
    anonymous = await service.compact(request(session_id=None))
    assert (below.reason, few.reason, anonymous.compacted) == (
        "below_threshold",
        "too_few_rounds",
        True,
    )
    assert records.saved == []


async def test_a_record_that_cannot_be_written_costs_a_warning_not_the_compaction(
    tokenizer: TiktokenTokenizer,
) -> None:
    result = await make_service(tokenizer, MemoryRecords(fail=True)).compact(request())
    assert result.compacted is True
    assert result.warnings == ["compaction record not written: record write failed: ENOSPC"]


async def test_max_iterations_stops_compaction_with_a_clear_reason(
    tokenizer: TiktokenTokenizer,
) -> None:
    records = MemoryRecords()
    summarizer = FakeSummarizer(lambda r: "BODY")
    service = make_service(tokenizer, records, summarizer, max_iterations=2)
    first = await service.compact(request())
    second = await service.compact(request("prune"))
    third = await service.compact(request())
    assert (first.compacted, second.compacted, third.compacted) == (True, True, False)
    assert third.reason == "max_iterations"
    assert third.messages == MESSAGES
    assert third.warnings == ["session s1 has reached max_iterations: 2 compactions of 2 allowed"]
    assert len(summarizer.requests) == 1
    assert len(records.saved) == 2
    unlimited = await service.compact(
        request(options=CompactOptions(strategy="prune", prune_keep_recent=1, max_iterations=0))
    )
    assert unlimited.compacted is True


async def test_after_a_failed_summary_the_session_prunes_until_the_cooldown_ends(
    tokenizer: TiktokenTokenizer,
) -> None:
    failing = True

    def summarize(r: SummaryRequest) -> str:
        if failing:
            raise SummarizerError("overloaded", retryable=True)
        return "BODY"

    records = MemoryRecords()
    clock = Clock()
    summarizer = FakeSummarizer(summarize)
    service = make_service(tokenizer, records, summarizer, clock, summary_cooldown_seconds=300.0)
    failed = await service.compact(request())
    assert failed.reason == "summarization_failed"
    assert [r.outcome for r in records.saved] == ["summarization_failed"]

    failing = False
    clock.now = NOW + timedelta(seconds=60)
    cooled = await service.compact(request())
    assert cooled.compacted is True
    assert cooled.strategy == "prune"
    assert cooled.warnings == [
        "summaries are cooling down until 2026-11-22T12:05:00+00:00 after a failed summary "
        "in this session: ran prune instead of tail"
    ]
    assert len(summarizer.requests) == 1

    clock.now = NOW + timedelta(seconds=301)
    after = await service.compact(request())
    assert (after.compacted, after.strategy, after.warnings) == (True, "tail", [])
    assert [r.strategy for r in records.saved] == ["tail", "prune", "tail"]
