"""The `selective` pipeline through the real service: rules, fallback summary, rollback."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.assemble import SUMMARY_ACK
from app.core.errors import InvalidConversationError, SummarizerError
from app.core.messages import dump_messages
from app.core.options.compact import CompactOptions
from app.core.plans.selective import GAP_TEXT, SelectivePlan, plan_selective
from app.core.ports import FileSkip, FileText, SummaryRequest
from app.core.result import CompactResult
from app.core.tokens import REPLY_PRIMING, count_total
from app.service.compaction import CompactionService, CompactRequest
from app.service.prepared import Prepared
from app.service.strategies.selective import Selective
from tests.builders import (
    DictWorkdir,
    FakeSummarizer,
    MemoryArchive,
    assistant,
    build_service,
    parse,
    read_round,
    system,
    tool_result,
    tool_use,
    user,
)
from tests.fakes.tokenizer import WordTokenizer

pytestmark = pytest.mark.anyio

WORDS = WordTokenizer()


def make_service(
    summarizer: FakeSummarizer | None = None, archive: MemoryArchive | None = None
) -> CompactionService:
    return build_service(WORDS, summarizer, archive=archive, read_tools=())


def block(n: int, words: int = 20) -> list[dict[str, Any]]:
    call = tool_use("bash", f"t{n}", command=f"step {n}")
    return [assistant(f"Step {n}.", call), tool_result(f"t{n}", "out " * words)]


S = system("You are an agent.")
MEMORY = user("Remember: tabs.") | {"metadata": {"kind": "memory"}}
RAW = [
    S,
    MEMORY,
    assistant("Noted."),
    user("Fix the bug."),
    *block(1),
    *block(2),
    *block(3),
    assistant("Done."),
]


def options(window: int, **more: Any) -> CompactOptions:
    return CompactOptions(strategy="selective", context_window=window, threshold=1.0, **more)


async def run(
    service: CompactionService, raw: list[dict[str, Any]], opts: CompactOptions
) -> CompactResult:
    return await service.compact(CompactRequest(messages=parse(raw), options=opts))


async def test_the_rules_alone_bring_the_list_under_the_threshold() -> None:
    archive = MemoryArchive()
    expected = [S, MEMORY, assistant("Noted."), user("Fix the bug."), *block(3), assistant("Done.")]
    # The result is judged as the decision is: the reply's priming counts too.
    window = count_total(WORDS, parse(expected)) + REPLY_PRIMING + 1
    summarizer = FakeSummarizer()
    result = await run(
        make_service(summarizer, archive), RAW, options(window, selective_keep_recent=1)
    )
    assert result.compacted is True
    assert dump_messages(result.messages) == expected
    assert result.strategy == "selective"
    assert result.compacted_indexes == [4, 5, 6, 7]
    assert [p.phase for p in result.phases] == ["selective_start", "tool_blocks", "selective_done"]
    assert result.phases[-1].tokens_after == count_total(WORDS, result.messages)
    assert (result.summary, result.summarizer, summarizer.requests) == (None, None, [])
    assert result.stats is not None
    assert (result.stats.compacted_message_count, result.stats.retained_message_count) == (4, 7)
    assert archive.saved["arch-1"].messages == RAW[1:]


async def test_still_over_the_threshold_it_falls_back_to_a_summary_of_the_rules_output() -> None:
    summarizer = FakeSummarizer()
    result = await run(make_service(summarizer), RAW, options(50, selective_keep_recent=1))
    assert dump_messages(result.messages) == [
        S,
        MEMORY,
        {"role": "assistant", "content": GAP_TEXT},
        {"role": "user", "content": "[Conversation compressed]\n\nSUMMARY"},
        {"role": "assistant", "content": SUMMARY_ACK},
    ]
    summarized = dump_messages(summarizer.requests[0].messages)
    assert summarized == [
        {"role": "assistant", "content": GAP_TEXT},
        user("Fix the bug."),
        *block(3),
        assistant("Done."),
    ]
    assert [p.phase for p in result.phases] == [
        "selective_start",
        "tool_blocks",
        "skill_prompt",
        "assistant_message",
        "skill_metadata",
        "user_message",
        "selective_done",
        "summary_start",
        "summary_done",
    ]
    assert result.phases[-1].tokens_after == count_total(WORDS, result.messages)
    assert (result.summary, result.summarizer, result.summary_chunks) == ("SUMMARY", "fake", 1)
    assert result.compacted_indexes == [2, 3, 4, 5, 6, 7, 8, 9, 10]


async def test_without_its_summary_rules_left_over_the_threshold_hand_over_to_full() -> None:
    summarizer = FakeSummarizer()
    opts = options(50, selective_keep_recent=1, selective_fallback_to_summary=False)
    result = await run(make_service(summarizer), RAW, opts)
    assert (result.compacted, result.strategy) == (True, "full")
    [tried] = result.fallbacks
    assert (tried.strategy, tried.reason) == ("selective", "no_gain")
    assert tried.tokens_after is not None
    assert tried.tokens_after >= 50
    assert tried.detail == (
        f"selective would leave {tried.tokens_after} tokens: not smaller than the "
        f"{result.token_count} sent and under the threshold of 50"
    )


async def test_without_any_fallback_rules_left_over_the_threshold_are_refused() -> None:
    summarizer = FakeSummarizer()
    opts = options(50, selective_keep_recent=1, selective_fallback_to_summary=False).model_copy(
        update={"fallback": False}
    )
    archive = MemoryArchive()
    result = await run(make_service(summarizer, archive=archive), RAW, opts)
    assert (result.compacted, result.reason, result.strategy) == (False, "no_gain", "selective")
    assert dump_messages(result.messages) == RAW
    assert (result.fallbacks, result.stats, result.archive) == ([], None, None)
    assert summarizer.requests == []
    assert archive.saved == {}


async def test_a_failed_summary_rolls_back_to_the_input() -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("503", retryable=True)

    messages = parse(RAW)
    result = await make_service(FakeSummarizer(fail)).compact(
        CompactRequest(messages=messages, options=options(30))
    )
    assert (result.compacted, result.reason) == (False, "summarization_failed")
    assert result.messages == messages
    assert result.warnings == ["summarizer fake failed: 503"]


class ExplodingWorkdir(DictWorkdir):
    """A work directory whose reads fail with an error no step expects."""

    def read_text(self, path: str, max_bytes: int) -> FileText | FileSkip:
        raise RuntimeError("disk on fire")


async def test_a_failure_after_the_summary_rolls_back_with_its_reason_alone() -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("503", retryable=True)

    service = build_service(
        WORDS,
        FakeSummarizer(fail),
        fallback=FakeSummarizer(name="backup"),
        workdir=ExplodingWorkdir(),
    )
    messages = parse([*RAW[:4], *read_round("a.py", "x " * 30), *RAW[4:]])
    request = CompactRequest(messages=messages, options=options(30, fallback=False))
    result = await service.compact(request)
    assert (result.compacted, result.reason) == (False, "selective_failed")
    assert result.messages == messages
    assert result.warnings == ["summary fallback failed: disk on fire"]


async def _compact_with_plan(plan: Any) -> CompactResult:
    """The selective step alone, as `compact` dispatches it, with another plan."""
    service = make_service()
    request = CompactRequest(messages=parse(RAW), options=options(30), force=True)
    prepared, _, _ = await service._prepare(request)
    assert isinstance(prepared, Prepared)
    strategy = Selective(plan=plan)
    return await strategy.run(prepared, prepared.params(strategy.params), service.steps)


async def test_an_exception_in_the_rules_rolls_back_to_the_input() -> None:
    def broken(*args: Any, **kwargs: Any) -> SelectivePlan:
        raise RuntimeError("rule exploded")

    result = await _compact_with_plan(broken)
    assert (result.compacted, result.reason) == (False, "selective_failed")
    assert dump_messages(result.messages) == RAW
    assert result.warnings == ["rules failed: rule exploded"]


async def test_an_output_that_breaks_a_provider_rule_rolls_back_to_the_input() -> None:
    def orphaning(*args: Any, **kwargs: Any) -> SelectivePlan:
        planned = plan_selective(*args, **kwargs)
        messages = [m for m in planned.messages if m.role != "assistant"]
        return SelectivePlan(tuple(messages), 1, planned.phases, planned.compacted_indexes, 1, ())

    result = await _compact_with_plan(orphaning)
    assert (result.compacted, result.reason) == (False, "selective_failed")
    assert dump_messages(result.messages) == RAW
    assert result.warnings[0].startswith("rules failed: the output breaks a provider rule:")


async def test_nothing_to_drop_and_under_the_threshold_returns_the_input() -> None:
    raw = [S, user("Hi."), assistant("Hello.")]
    opts = CompactOptions(strategy="selective", fallback=False)
    result = await make_service().compact(
        CompactRequest(messages=parse(raw), options=opts, force=True)
    )
    assert (result.compacted, result.reason) == (False, "nothing_to_compact")
    assert dump_messages(result.messages) == raw


async def test_a_break_anywhere_in_the_input_is_refused() -> None:
    raw = [S, user("a"), user("b"), assistant("c"), user("d")]
    with pytest.raises(InvalidConversationError):
        await run(make_service(), raw, options(5))


def run_block(n: int, command: str) -> list[dict[str, Any]]:
    call = tool_use("bash", f"c{n}", command=command)
    return [assistant("Running.", call), tool_result(f"c{n}", "out " * 20)]


def refused_read(n: int) -> list[dict[str, Any]]:
    call = tool_use("read_file", f"r{n}", path=f"secrets/key{n}.pem")
    error = f"Error: access to secrets/key{n}.pem is denied by the workspace policy"
    return [assistant("Reading the key.", call), tool_result(f"r{n}", error, is_error=True)]


async def test_rules_that_reach_the_threshold_write_the_ledger_of_what_they_dropped() -> None:
    """An early refused read in a tool block the rules drop: its failure, its path and the
    commands of the other dropped blocks stay, as a ledger after the system prompt."""
    raw = [
        S,
        user("Fix the bug."),
        *refused_read(1),
        *run_block(1, "make lint"),
        *run_block(2, "pytest -x tests"),
        *block(3),
    ]
    service = build_service(WORDS, FakeSummarizer(), read_tools=(), ledger_budget=None)
    opts = options(200, selective_keep_recent=1, selective_fallback_to_summary=False)
    result = await service.compact(CompactRequest(parse(raw), opts, force=True))
    assert (result.compacted, result.strategy) == (True, "selective")
    ledger = (
        "## Ledger\n"
        "- [error] read_file `secrets/key1.pem`: Error: access to secrets/key1.pem is denied "
        "by the workspace policy\n"
        "- [file_read] secrets/key1.pem\n"
        "- [command] make lint\n"
        "- pytest -x tests"
    )
    assert dump_messages(result.messages) == [
        S,
        system(ledger),
        user("Fix the bug."),
        *block(3),
    ]
    assert result.summary == ledger
    assert [f.kind for f in result.ledger] == ["error", "file_read", "command", "command"]
    assert result.phases[-1].phase == "ledger"


async def test_a_second_selective_compaction_merges_the_earlier_ledger_not_stacks_it() -> None:
    service = build_service(WORDS, FakeSummarizer(), read_tools=(), ledger_budget=None)
    opts = options(200, selective_keep_recent=1, selective_fallback_to_summary=False)
    raw = [S, user("Fix the bug."), *refused_read(1), *run_block(1, "make lint"), *block(2)]
    first = await service.compact(CompactRequest(parse(raw), opts, force=True))
    later = [*dump_messages(first.messages), *run_block(4, "git status"), *block(5)]
    second = await service.compact(CompactRequest(parse(later), opts, force=True))
    assert second.compacted is True
    out = dump_messages(second.messages)
    ledgers = [m for m in out if m["role"] == "system" and m["content"].startswith("## Ledger")]
    assert len(ledgers) == 1
    assert out[:2] == [S, ledgers[0]]
    # The earlier ledger it replaced is archived with the rest, and counted as compacted.
    assert second.compacted_indexes[0] == 1
    assert dump_messages(first.messages)[1] in service.archive.saved["arch-1"].messages
    assert ledgers[0]["content"] == (
        "## Ledger\n"
        "- [error] read_file `secrets/key1.pem`: Error: access to secrets/key1.pem is denied "
        "by the workspace policy\n"
        "- [file_read] secrets/key1.pem\n"
        "- [command] make lint\n"
        "- step 2\n"
        "- git status"
    )
