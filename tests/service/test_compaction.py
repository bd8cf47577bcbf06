from __future__ import annotations

import copy
from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.assemble import SUMMARY_ACK, summary_turn
from app.core.errors import InvalidConversationError, SummarizerError
from app.core.messages import dump_messages
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest
from app.core.recall.search import recall_note
from app.core.result import result_json
from app.core.summary.extractive import ExtractiveSummarizer, extract_summary
from app.core.summary.prompt import MOST_RECENT_RULE
from app.core.tokens import REPLY_PRIMING, count_total
from app.service.compaction import CompactionPorts, CompactionService, CompactRequest
from tests.builders import (
    NOW,
    SERVICE_DEFAULTS,
    DictWorkdir,
    FakeSummarizer,
    MemoryArchive,
    assistant,
    build_service,
    bulk_round,
    defaults_with,
    parse,
    read_round,
    system,
    tool_use,
    user,
)

pytestmark = pytest.mark.anyio


def make_service(
    tokenizer: TiktokenTokenizer,
    *,
    summarizer: FakeSummarizer | None = None,
    workdir: DictWorkdir | None = None,
    archive: MemoryArchive | None = None,
    fallback: FakeSummarizer | None = None,
) -> CompactionService:
    return build_service(tokenizer, summarizer, workdir=workdir, archive=archive, fallback=fallback)


CONVERSATION: list[dict[str, Any]] = [
    system("You are a coding agent."),
    user("Fix the bug in a.py."),
    *bulk_round(),
    *read_round("a.py", "old a"),
    *read_round("b.py", "old b"),
    assistant("Done."),
]


async def test_below_threshold_returns_the_input_unchanged(tokenizer: TiktokenTokenizer) -> None:
    summarizer = FakeSummarizer()
    service = make_service(tokenizer, summarizer=summarizer)
    messages = parse(CONVERSATION)
    result = await service.compact(CompactRequest(messages=messages))
    assert result.compacted is False
    assert result.reason == "below_threshold"
    assert result.messages == messages
    assert result.stats is None
    assert result.token_count == count_total(tokenizer, messages) + REPLY_PRIMING
    assert summarizer.requests == []


async def test_threshold_crossed_compacts_without_force(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer)
    options = CompactOptions(context_window=200, threshold=0.5)
    result = await service.compact(CompactRequest(messages=parse(CONVERSATION), options=options))
    assert result.compacted is True


async def test_too_few_messages_are_not_compacted(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer)
    options = CompactOptions(context_window=10)
    result = await service.compact(
        CompactRequest(messages=parse([system("s"), user("u")]), options=options)
    )
    assert (result.compacted, result.reason) == (False, "below_min_messages")


async def test_forced_compaction_produces_seed_000_output(tokenizer: TiktokenTokenizer) -> None:
    workdir = DictWorkdir({"a.py": "new a\n", "b.py": "new b\n"})
    archive = MemoryArchive()
    service = make_service(tokenizer, workdir=workdir, archive=archive)
    messages = parse(CONVERSATION)
    request = CompactRequest(messages=messages, force=True, session_id="s-1", recall_tool=True)
    result = await service.compact(request)
    out = dump_messages(result.messages)
    # With a session and the recall tool, the summary closes with how to recall what the
    # archive holds.
    summary = f"SUMMARY\n\n> Recall: {recall_note('s-1')}"
    assert out == [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": summary_turn(summary)},
        {"role": "assistant", "content": SUMMARY_ACK},
        {"role": "user", "content": "[Restored after compact] b.py:\nnew b\n"},
        {"role": "assistant", "content": "Noted, file content restored."},
        {"role": "user", "content": "[Restored after compact] a.py:\nnew a\n"},
        {"role": "assistant", "content": "Noted, file content restored."},
    ]
    assert result.summary == summary
    assert [f.path for f in result.restored_files] == ["b.py", "a.py"]
    assert result.restored_files[0].token_count == tokenizer.count("new b\n")
    stats = result.stats
    assert stats is not None
    # as `/count` counts a list: its messages and the reply's priming
    assert stats.original_token_count == count_total(tokenizer, messages) + REPLY_PRIMING
    assert stats.compacted_token_count == count_total(tokenizer, result.messages) + REPLY_PRIMING
    assert stats.original_token_count == result.token_count
    assert stats.compaction_ratio == round(
        stats.compacted_token_count / stats.original_token_count, 4
    )
    assert (stats.compacted_message_count, stats.retained_message_count) == (8, 1)
    assert (stats.restored_file_count, stats.restored_token_count) == (
        2,
        tokenizer.count("new a\n") + tokenizer.count("new b\n"),
    )
    # the archive holds exactly the rest, as sent, before anything was replaced
    saved = archive.saved["arch-1"]
    assert saved.messages == dump_messages(messages[1:])
    assert saved.ref.session_id == "s-1"
    assert saved.created_at == NOW.isoformat()
    assert result.archive is not None
    assert (result.archive.id, result.archive.message_count) == ("arch-1", 8)
    assert result.archive.sha256 == saved.ref.sha256


async def test_request_messages_are_not_mutated(tokenizer: TiktokenTokenizer) -> None:
    raw = copy.deepcopy(CONVERSATION)
    messages = parse(raw)
    before = dump_messages(messages)
    service = make_service(tokenizer, workdir=DictWorkdir({"a.py": "x"}))
    await service.compact(CompactRequest(messages=messages, force=True))
    assert dump_messages(messages) == before
    assert raw == CONVERSATION


async def test_archive_failure_compacts_nothing_and_skips_the_llm(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer()
    service = make_service(tokenizer, summarizer=summarizer, archive=MemoryArchive(fail=True))
    messages = parse(CONVERSATION)
    result = await service.compact(CompactRequest(messages=messages, force=True))
    assert (result.compacted, result.reason) == (False, "archive_failed")
    assert result.messages == messages
    assert result.warnings == ["archive failed: archive write failed: ENOSPC"]
    assert summarizer.requests == []


def _failing(request: SummaryRequest) -> str:
    raise SummarizerError("HTTP 500 after 3 attempts", retryable=True)


async def test_summarizer_failure_returns_the_original_messages(
    tokenizer: TiktokenTokenizer,
) -> None:
    service = make_service(tokenizer, summarizer=FakeSummarizer(_failing, name="anthropic"))
    messages = parse(CONVERSATION)
    result = await service.compact(CompactRequest(messages=messages, force=True))
    assert (result.compacted, result.reason) == (False, "summarization_failed")
    assert result.messages == messages
    assert result.warnings == ["summarizer anthropic failed: HTTP 500 after 3 attempts"]


async def test_empty_summary_counts_as_a_failure(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer, summarizer=FakeSummarizer(lambda r: "  \n "))
    result = await service.compact(CompactRequest(messages=parse(CONVERSATION), force=True))
    assert (result.compacted, result.reason) == (False, "summarization_failed")
    assert result.warnings == ["summarizer fake failed: empty summary"]


async def test_configured_fallback_summarizes_when_the_llm_fails(
    tokenizer: TiktokenTokenizer,
) -> None:
    fallback = FakeSummarizer(lambda r: "EXTRACTED", name="extractive")
    service = make_service(
        tokenizer, summarizer=FakeSummarizer(_failing, name="anthropic"), fallback=fallback
    )
    result = await service.compact(CompactRequest(messages=parse(CONVERSATION), force=True))
    assert result.compacted is True
    assert result.summary == "EXTRACTED"
    assert result.summarizer == "extractive"
    assert result.warnings == [
        "summarizer anthropic failed: HTTP 500 after 3 attempts",
        "summary written by the fallback summarizer extractive",
    ]


async def test_only_system_messages_leave_nothing_to_compact(
    tokenizer: TiktokenTokenizer,
) -> None:
    service = make_service(tokenizer)
    result = await service.compact(CompactRequest(messages=parse([system("s")]), force=True))
    assert (result.compacted, result.reason) == (False, "nothing_to_compact")


async def test_summary_request_carries_the_rest_prompt_and_focus(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer()
    service = make_service(tokenizer, summarizer=summarizer)
    messages = parse(CONVERSATION)
    await service.compact(
        CompactRequest(
            messages=messages,
            force=True,
            instructions="Focus on a.py",
            options=CompactOptions(max_summary_words=300),
        )
    )
    (request,) = summarizer.requests
    assert request.messages == tuple(messages[1:])
    assert MOST_RECENT_RULE in request.prompt
    assert "Keep the summary under 300 words." in request.prompt
    assert request.prompt.count("Focus on a.py") == 1
    assert "[tool call read_file id=" in request.prompt
    assert request.max_words == 300


async def test_restore_skips_are_reported_with_reasons(tokenizer: TiktokenTokenizer) -> None:
    workdir = DictWorkdir({"b.py": "x " * 6000})
    service = make_service(tokenizer, workdir=workdir)
    result = await service.compact(CompactRequest(messages=parse(CONVERSATION), force=True))
    assert [(s.path, s.reason) for s in result.skipped_files] == [
        ("b.py", "too_many_tokens"),
        ("a.py", "not_found"),
    ]
    assert result.restored_files == []


async def test_restore_options_override_defaults(tokenizer: TiktokenTokenizer) -> None:
    workdir = DictWorkdir({"a.py": "a", "b.py": "b"})
    service = make_service(tokenizer, workdir=workdir)
    result = await service.compact(
        CompactRequest(
            messages=parse(CONVERSATION), force=True, options=CompactOptions(max_restore_files=1)
        )
    )
    assert [f.path for f in result.restored_files] == ["b.py"]
    assert workdir.reads == ["b.py"]


async def test_result_json_keeps_messages_as_sent(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer)
    raw = [user("hi"), {"role": "assistant", "content": "x", "id": "m2", "metadata": {"k": 1}}]
    result = await service.compact(CompactRequest(messages=parse(raw)))
    data = result_json(result)
    assert data["messages"] == raw
    assert data["compacted"] is False
    assert data["stats"] is None


async def test_a_broken_conversation_that_would_come_back_unchanged_is_refused(
    tokenizer: TiktokenTokenizer,
) -> None:
    messages = parse([system("s"), user("a"), assistant(tool_use("x", "t1")), user("b")])
    with pytest.raises(InvalidConversationError) as caught:
        await make_service(tokenizer).compact(CompactRequest(messages=messages))
    [violation] = caught.value.violations
    assert (violation.rule, violation.index) == ("tool_use_unanswered", 2)


async def test_a_break_in_the_summarized_part_is_compacted(tokenizer: TiktokenTokenizer) -> None:
    messages = parse(
        [system("s"), user("a"), *bulk_round(), assistant(tool_use("x", "t1")), user("b")]
    )
    result = await make_service(tokenizer).compact(CompactRequest(messages=messages, force=True))
    assert result.compacted is True


async def test_an_agent_mid_tool_call_gets_its_messages_back(tokenizer: TiktokenTokenizer) -> None:
    messages = parse([system("s"), user("a"), assistant(tool_use("bash", "t1", command="ls"))])
    result = await make_service(tokenizer).compact(CompactRequest(messages=messages))
    assert (result.compacted, result.reason) == (False, "below_threshold")
    assert result.messages == messages


async def test_pending_tool_calls_are_not_summarized_away(tokenizer: TiktokenTokenizer) -> None:
    summarizer = FakeSummarizer()
    service = make_service(tokenizer, summarizer=summarizer)
    messages = parse([system("s"), user("a"), assistant(tool_use("bash", "t1", command="ls"))])
    result = await service.compact(CompactRequest(messages=messages, force=True))
    assert (result.compacted, result.reason) == (False, "pending_tool_calls")
    assert result.messages == messages
    assert result.warnings == [
        "the last assistant message has tool calls that are not answered yet"
    ]
    assert summarizer.requests == []


async def test_the_summary_carries_a_ledger_by_default(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer)
    service.defaults = defaults_with(SERVICE_DEFAULTS, ledger_budget=None)
    messages = parse([system("s"), user("Never use tabs."), *bulk_round(), assistant("ok")])
    result = await service.compact(CompactRequest(messages=messages, force=True))
    # The instruction is the goal's own words: written once.
    assert result.summary == "SUMMARY\n\n## Ledger\n- [goal] Never use tabs."
    assert [(f.kind, f.in_summary) for f in result.ledger] == [("goal", False)]
    assert result.ledger_dropped == 0
    assert result.stats is not None
    # The room a window under 240k gives the ledger, over 5% of it and under the 20k cap;
    # the ledger's own tokens are reported.
    assert result.stats.ledger_budget == 12_000
    assert result.stats.ledger_token_count == tokenizer.count("## Ledger\n- [goal] Never use tabs.")


@pytest.mark.parametrize(
    ("window", "budget"),
    [
        (64_000, 12_000),
        (32_000, 8000),
        (2000, 1000),
        (128_000, 12_000),
        (1_000_000, 20_000),
        (None, 12_000),
    ],
)
async def test_the_ledger_budget_follows_the_window_within_floor_and_cap(
    tokenizer: TiktokenTokenizer, window: int | None, budget: int
) -> None:
    service = make_service(tokenizer)
    service.defaults = defaults_with(SERVICE_DEFAULTS, ledger_budget=None)
    messages = parse([system("s"), user("Go."), *bulk_round(), assistant("ok")])
    options = CompactOptions(context_window=window)
    result = await service.compact(CompactRequest(messages=messages, options=options, force=True))
    assert result.stats is not None
    assert result.stats.ledger_budget == budget


async def test_facts_left_out_are_counted_by_kind(tokenizer: TiktokenTokenizer) -> None:
    service = make_service(tokenizer)
    reads = [m for i in range(40) for m in read_round(f"src/module_{i}.py")]
    messages = parse([system("s"), user("Go."), *reads, user("Next."), assistant("ok")])
    options = CompactOptions(ledger_budget=60)
    result = await service.compact(CompactRequest(messages=messages, options=options, force=True))
    assert result.ledger_dropped == sum(result.ledger_dropped_kinds.values()) > 0
    # What the user asked takes its part first (the goal and the later request fit it):
    # what is left out is only the older paths.
    assert result.ledger_dropped_kinds == {"file_read": result.ledger_dropped}
    kinds = [f.kind for f in result.ledger]
    assert kinds == ["file_read"] * (len(kinds) - 2) + ["goal", "request"]
    assert kinds.count("file_read") > 0


class RecordingExtractive(ExtractiveSummarizer):
    """The extractive summarizer, recording the requests it gets."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return await super().summarize(request)


async def test_the_extractive_summarizer_gets_its_messages_without_a_prompt(
    tokenizer: TiktokenTokenizer,
) -> None:
    extractive = RecordingExtractive()
    service = CompactionService(
        CompactionPorts(
            tokenizer=tokenizer,
            summarizer=extractive,
            workdir=DictWorkdir(),
            archive=MemoryArchive(),
        ),
        SERVICE_DEFAULTS,
    )
    messages = parse(CONVERSATION)
    result = await service.compact(CompactRequest(messages=messages, force=True))
    (request,) = extractive.requests
    assert (request.messages, request.prompt) == (tuple(messages[1:]), "")
    assert result.summary == extract_summary(messages[1:], 1200)


async def test_an_llm_with_an_extractive_fallback_still_gets_the_prompt(
    tokenizer: TiktokenTokenizer,
) -> None:
    llm = FakeSummarizer(name="anthropic")
    service = CompactionService(
        CompactionPorts(
            tokenizer=tokenizer,
            summarizer=llm,
            fallback=RecordingExtractive(),
            workdir=DictWorkdir(),
            archive=MemoryArchive(),
        ),
        SERVICE_DEFAULTS,
    )
    await service.compact(CompactRequest(messages=parse(CONVERSATION), force=True))
    (request,) = llm.requests
    assert MOST_RECENT_RULE in request.prompt


async def test_a_small_window_lowers_the_summary_word_limit(tokenizer: TiktokenTokenizer) -> None:
    summarizer = FakeSummarizer()
    service = make_service(tokenizer, summarizer=summarizer)
    for window, words in ((16_000, 600), (200_000, 1200)):
        options = CompactOptions(context_window=window)
        await service.compact(
            CompactRequest(messages=parse(CONVERSATION), options=options, force=True)
        )
        assert summarizer.requests[-1].max_words == words
    options = CompactOptions(context_window=16_000, max_summary_words=900)
    await service.compact(CompactRequest(messages=parse(CONVERSATION), options=options, force=True))
    assert summarizer.requests[-1].max_words == 900
