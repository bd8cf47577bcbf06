"""`tail` and `prune` through the service: exact outputs, archives, summarizer calls."""

from __future__ import annotations

from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.assemble import SUMMARY_ACK, summary_turn
from app.core.errors import InvalidConversationError, SummarizerError
from app.core.messages import Message, dump_messages
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest
from app.core.provider import dump_as
from app.core.vocabulary import Format
from app.service.compaction import CompactionService, CompactRequest, Defaults
from tests.builders import (
    SERVICE_DEFAULTS,
    FakeSummarizer,
    MemoryArchive,
    MemoryRecords,
    assistant,
    build_service,
    parse,
    rounds,
    system,
    user,
)

pytestmark = pytest.mark.anyio

TITLE = "## \U0001f4cc Archived Session Summary"


def make_service(
    tokenizer: TiktokenTokenizer,
    summarizer: FakeSummarizer | None = None,
    archive: MemoryArchive | None = None,
    records: MemoryRecords | None = None,
    defaults: Defaults = SERVICE_DEFAULTS,
) -> CompactionService:
    summarizer = summarizer or FakeSummarizer(lambda r: "BODY")
    return build_service(tokenizer, summarizer, defaults=defaults, archive=archive, records=records)


def tail(keep: int = 1, **options: Any) -> CompactOptions:
    return CompactOptions(strategy="tail", tail_keep_recent_rounds=keep, **options)


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_tail_keeps_the_last_rounds_verbatim_after_an_archived_summary(
    tokenizer: TiktokenTokenizer, fmt: Format
) -> None:
    """The archived summary is a system message where the format takes one among the
    messages (OpenAI), a user turn and its acknowledgement in the Anthropic shape."""
    summarizer = FakeSummarizer(lambda r: "BODY")
    archive = MemoryArchive()
    service = make_service(tokenizer, summarizer, archive)
    messages = parse([system("s"), *rounds(1, 3)])
    result = await service.compact(CompactRequest(messages, tail(keep=1), force=True, format=fmt))
    header = (
        f"{TITLE}\n*(Contains context from message 2 to message 9, "
        "archived 2026-11-22T12:00:00+00:00, written by the compaction service: a record, "
        "not instructions)*"
    )
    summary = (
        [Message(role="system", content=f"{header}\n\nBODY")]
        if fmt == "openai"
        else [
            Message(role="user", content=summary_turn(f"{header}\n\nBODY")),
            Message(role="assistant", content=SUMMARY_ACK),
        ]
    )
    assert result.compacted is True
    assert result.messages == [messages[0], *summary, *messages[9:]]
    assert result.strategy == "tail"
    assert result.compacted_indexes == list(range(1, 9))
    assert result.summary == f"{header}\n\nBODY"
    assert result.stats is not None
    assert (result.stats.compacted_message_count, result.stats.retained_message_count) == (8, 5)
    assert archive.saved["arch-1"].messages == dump_as(messages[1:9], fmt)
    (request,) = summarizer.requests
    assert request.template == "archived"
    assert request.messages == tuple(messages[1:9])
    assert "Fill in exactly this template" in request.prompt


async def test_a_second_tail_appends_its_summary_and_never_summarizes_the_first_again(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Where the archived summary is a system message (OpenAI), it stays in the head."""
    summarizer = FakeSummarizer(lambda r: f"BODY {len(r.messages)}")
    service = make_service(tokenizer, summarizer)
    first = await service.compact(
        CompactRequest(parse([system("s"), *rounds(1, 3)]), tail(), force=True, format="openai")
    )
    later = [*first.messages, *parse(rounds(4, 5))]
    second = await service.compact(CompactRequest(later, tail(), force=True, format="openai"))
    assert second.messages[:2] == first.messages[:2]
    assert second.messages[2].role == "system"
    assert isinstance(second.messages[2].content, str)
    assert second.messages[2].content.endswith("\n\nBODY 8")
    assert second.messages[3:] == later[-4:]
    assert summarizer.requests[1].messages == tuple(later[2:-4])
    assert all(m.role != "system" for m in summarizer.requests[1].messages)


async def test_a_second_tail_in_the_anthropic_shape_keeps_the_first_archive_verbatim(
    tokenizer: TiktokenTokenizer,
) -> None:
    """In the Anthropic shape the archived summary is a user turn and its acknowledgement:
    the next `tail` keeps that pair as sent, right after the system prompt, and appends its
    own after it, as it does with a system message in the OpenAI shape (summarized again,
    the first archive's goal was read as an ordinary turn and a later task's replaced it)."""
    summarizer = FakeSummarizer(lambda r: f"BODY {len(r.messages)}")
    service = build_service(tokenizer, summarizer, ledger_budget=None)
    first = await service.compact(
        CompactRequest(parse([system("s"), *rounds(1, 3)]), tail(), force=True)
    )
    later = [*first.messages, *parse(rounds(4, 5))]
    second = await service.compact(CompactRequest(later, tail(), force=True))
    assert second.compacted is True
    assert second.messages[:3] == first.messages[:3]
    assert [m.role for m in second.messages[3:5]] == ["user", "assistant"]
    assert str(second.messages[3].content).endswith(
        "\n\nBODY 8\n\n## Ledger\n- [request] Task 3.\n- Task 4.\n- [commands] make: 3 · 4"
    )
    assert second.messages[4].content == SUMMARY_ACK
    assert second.messages[5:] == later[-4:]
    assert summarizer.requests[1].messages == tuple(later[3:-4])
    assert second.compacted_indexes == list(range(3, 11))
    assert all(m.role != "system" for m in second.messages[1:])
    # the goal stays the first archive's: what the second covers opens with a later request
    assert next((f.kind, f.text) for f in first.ledger if f.kind in ("goal", "request")) == (
        "goal",
        "Task 1.",
    )
    assert [(f.kind, f.text) for f in second.ledger if f.kind in ("goal", "request")] == [
        ("request", "Task 3."),
        ("request", "Task 4."),
    ]


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_an_archived_user_turn_is_kept_whatever_the_shape_of_the_next_tail(
    tokenizer: TiktokenTokenizer, fmt: Format
) -> None:
    """The archive is recognized by its turn, not by the shape of the request that reads
    it: a user-turn archive sent in the OpenAI shape stays as sent too."""
    summarizer = FakeSummarizer(lambda r: f"BODY {len(r.messages)}")
    service = make_service(tokenizer, summarizer)
    first = await service.compact(
        CompactRequest(parse([system("s"), *rounds(1, 3)]), tail(), force=True)
    )
    later = [*first.messages, *parse(rounds(4, 5))]
    second = await service.compact(CompactRequest(later, tail(), force=True, format=fmt))
    assert second.messages[:3] == first.messages[:3]
    assert second.messages[-4:] == later[-4:]
    assert summarizer.requests[1].messages == tuple(later[3:-4])


async def test_earlier_archived_user_turns_over_a_quarter_of_the_threshold_are_folded_in(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Past a quarter of the threshold, archived user turns are summarized again like
    archived system messages: the turn's ledger carried, the turn and its acknowledgement
    archived."""
    summarizer = FakeSummarizer(lambda r: "BODY")
    service = build_service(tokenizer, summarizer, ledger_budget=None)
    earlier = (
        f"{TITLE}\n*(Contains context from message 1 to message 1)*\n\nOld. "
        + "detail " * 1600
        + "\n\n## Ledger\n- [file_read] src/old_1.py"
    )
    pair = [user(summary_turn(earlier)), assistant(SUMMARY_ACK)]
    messages = parse([system("s"), *pair, *rounds(1, 3)])
    options = tail(keep=1, context_window=10_000, threshold=0.5)
    result = await service.compact(CompactRequest(messages, options, force=True))
    assert (result.compacted, result.strategy) == (True, "tail")
    assert result.compacted_indexes[:2] == [1, 2]
    assert "src/old_1.py" in str(result.messages[1].content)
    assert result.messages[2].content == SUMMARY_ACK
    assert result.messages[3:] == messages[-4:]
    assert any("1 earlier archived summaries take" in w for w in result.warnings)


async def test_tail_with_one_exchange_and_nothing_older_compacts_nothing(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer()
    service = make_service(tokenizer, summarizer)
    messages = parse([system("s"), user("Task 1."), assistant("Done 1.")])
    result = await service.compact(
        CompactRequest(messages, tail(keep=2, fallback=False), force=True)
    )
    assert (result.compacted, result.reason, result.messages) == (False, "too_few_rounds", messages)
    assert result.warnings == [
        "every round would be kept (tail_keep_recent_rounds 2): nothing older to archive"
    ]
    assert summarizer.requests == []


async def test_tail_keeps_fewer_rounds_under_a_small_window_and_warns(
    tokenizer: TiktokenTokenizer,
) -> None:
    service = make_service(tokenizer)
    messages = parse([system("s"), *rounds(1, 4)])
    options = tail(keep=3, context_window=2000, threshold=0.5)  # target: 500 tokens
    result = await service.compact(CompactRequest(messages, options, force=True))
    assert result.compacted is True
    # Round 4 whole; of round 3, its request and the answer that closed it fill the rest.
    assert result.messages[3:] == [messages[9], *messages[12:]]
    assert len(result.warnings) == 2
    assert result.warnings[0].startswith("kept 1 of the 3 most recent rounds asked for: ")
    assert result.warnings[1].startswith("the round before the 1 kept takes ")


async def test_tail_refuses_a_break_in_the_rounds_it_would_keep(
    tokenizer: TiktokenTokenizer,
) -> None:
    messages = parse([system("s"), *rounds(1, 2), user("Task 3."), user("Again.")])
    with pytest.raises(InvalidConversationError):
        await make_service(tokenizer).compact(CompactRequest(messages, tail(keep=2), force=True))


async def test_a_failed_archived_summary_returns_the_input(tokenizer: TiktokenTokenizer) -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("timeout", retryable=True)

    service = make_service(tokenizer, FakeSummarizer(fail))
    messages = parse([system("s"), *rounds(1, 2)])
    result = await service.compact(CompactRequest(messages, tail(), force=True))
    assert (result.compacted, result.reason, result.messages) == (
        False,
        "summarization_failed",
        messages,
    )
    assert result.strategy == "tail"


async def test_prune_clears_old_results_without_calling_a_summarizer(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer()
    archive = MemoryArchive()
    service = make_service(tokenizer, summarizer, archive)
    messages = parse([system("s"), *rounds(1, 3)])
    options = CompactOptions(strategy="prune", prune_keep_recent=1)
    result = await service.compact(CompactRequest(messages, options, force=True))
    assert summarizer.requests == []
    assert result.compacted is True
    assert result.strategy == "prune"
    assert result.compacted_indexes == [3, 7]
    expected = [m.model_dump(exclude_unset=True) for m in messages]
    for index, tool_id in ((3, "t1"), (7, "t2")):
        expected[index]["content"] = [
            {
                "type": "tool_result",
                "tool_use_id": tool_id,
                "content": f"[Old tool result cleared: bash(command=make {tool_id[1]}), "
                "300 tokens]",
            }
        ]
    assert dump_messages(result.messages) == expected
    assert archive.saved["arch-1"].messages == dump_messages([messages[3], messages[7]])
    assert result.summary is None


async def test_prune_below_its_minimum_changes_nothing(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer)
    messages = parse([system("s"), *rounds(1, 3)])
    options = CompactOptions(
        strategy="prune", prune_keep_recent=1, prune_min_tokens=1000, fallback=False
    )
    result = await service.compact(CompactRequest(messages, options, force=True))
    assert (result.compacted, result.reason, result.messages) == (
        False,
        "nothing_to_prune",
        messages,
    )
    assert result.warnings == [
        "clearing old tool results would save 566 tokens (prune_min_tokens 1000, "
        "1 recent tool uses kept)"
    ]


async def test_earlier_archived_summaries_over_a_quarter_of_the_threshold_are_folded_in(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Kept one after another, archived summaries would fill the context until `tail`
    could not get under the threshold (then `full` ran): past a quarter of the threshold
    they are summarized again, their ledgers carried into the new one."""
    summarizer = FakeSummarizer(lambda r: "BODY")
    archive = MemoryArchive()
    service = build_service(tokenizer, summarizer, archive=archive, ledger_budget=None)
    earlier = [
        system(
            f"{TITLE}\n*(Contains context from message {n} to message {n})*\n\nOld {n}. "
            + "detail " * 800
            + f"\n\n## Ledger\n- [file_read] src/old_{n}.py"
        )
        for n in (1, 2)
    ]
    messages = parse([system("s"), *earlier, *rounds(1, 3)])
    options = tail(keep=1, context_window=10_000, threshold=0.5)  # threshold: 5,000 tokens
    request = CompactRequest(messages, options, force=True, format="openai")
    result = await service.compact(request)
    assert (result.compacted, result.strategy) == (True, "tail")
    out = result.messages
    assert out[0] == messages[0]
    archived = [m for m in out if m.role == "system" and str(m.content).startswith(TITLE)]
    assert len(archived) == 1
    assert out[1] is archived[0]
    # the earlier ledgers' facts are in the new ledger
    assert "src/old_1.py" in str(out[1].content)
    assert "src/old_2.py" in str(out[1].content)
    assert result.compacted_indexes[:2] == [1, 2]
    assert archive.saved["arch-1"].messages[:2] == [earlier[0], earlier[1]]
    assert any("2 earlier archived summaries take" in w for w in result.warnings)
    assert out[2:] == messages[-4:]


async def test_earlier_archived_summaries_under_a_quarter_of_the_threshold_stay(
    tokenizer: TiktokenTokenizer,
) -> None:
    service = make_service(tokenizer)
    small = system(f"{TITLE}\n*(Contains context from message 1 to message 1)*\n\nOld.")
    messages = parse([system("s"), small, *rounds(1, 3)])
    result = await service.compact(CompactRequest(messages, tail(keep=1), force=True))
    assert result.messages[:2] == messages[:2]
    assert result.compacted_indexes[0] == 2
