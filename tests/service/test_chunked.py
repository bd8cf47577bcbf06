"""Chunked summaries through the real service, with a summarizer that records each request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.assemble import SUMMARY_ACK, summary_turn
from app.core.errors import InvalidConversationError
from app.core.messages import dump_messages
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest, Tokenizer
from app.core.provider.dialects import from_openai
from app.core.provider.rules import violations
from app.core.summary.extractive import ExtractiveSummarizer
from app.core.summary.prompt import SUMMARY_SYSTEM
from app.core.tokens import count_text
from app.core.vocabulary import Format
from app.service.compaction import CompactionService, CompactRequest
from tests.builders import (
    FakeSummarizer,
    assistant,
    build_service,
    parse,
    system,
    tool_result,
    tool_use,
    user,
)
from tests.corpus import FILES, load
from tests.fakes.tokenizer import WordTokenizer

pytestmark = pytest.mark.anyio

WORDS = WordTokenizer()
BUDGET = 1000  # 210 words of prompt overhead: 790 for the transcript


def make_service(
    summarizer: FakeSummarizer, budget: int = BUDGET, tokenizer: Tokenizer = WORDS
) -> CompactionService:
    return build_service(tokenizer, summarizer, read_tools=(), summary_input_budget=budget)


def numbered() -> FakeSummarizer:
    """Answers `S1`, `S2`, ... in call order."""
    calls: list[int] = []

    def answer(request: SummaryRequest) -> str:
        calls.append(1)
        return f"S{len(calls)}"

    return FakeSummarizer(answer)


def round_of(k: int, pairs: int = 1, words: int = 290) -> list[dict[str, Any]]:
    """A request and `pairs` tool calls, each answered by `words` words (~300 tokens)."""
    messages: list[dict[str, Any]] = [user(f"Task {k}.")]
    for p in range(pairs):
        tool_id = f"t{k}_{p}"
        messages += [
            assistant(tool_use("bash", tool_id, command="run")),
            tool_result(tool_id, f"out{k} " * words),
        ]
    return messages


def carried(summary: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": summary_turn(summary)},
        {"role": "assistant", "content": SUMMARY_ACK},
    ]


def input_tokens(request: SummaryRequest) -> int:
    return WORDS.count(request.system) + WORDS.count(request.prompt)


async def compact(service: CompactionService, raw: list[dict[str, Any]]) -> Any:
    return await service.compact(CompactRequest(messages=parse(raw), force=True))


async def test_a_rest_that_fits_is_summarized_in_one_call_as_before() -> None:
    summarizer = numbered()
    rounds = [*round_of(1), *round_of(2)]
    result = await compact(make_service(summarizer), [system("s"), *rounds])
    assert [dump_messages(r.messages) for r in summarizer.requests] == [rounds]
    assert (result.summary, result.summary_chunks) == ("S1", 1)


async def test_chunks_end_on_round_boundaries_and_carry_the_summary_so_far() -> None:
    summarizer = numbered()
    r1, r2, r3, r4, r5 = (round_of(k) for k in range(1, 6))
    result = await compact(make_service(summarizer), [system("s"), *r1, *r2, *r3, *r4, *r5])
    assert [dump_messages(r.messages) for r in summarizer.requests] == [
        [*r1, *r2],
        [*carried("S1"), *r3, *r4],
        [*carried("S2"), *r5],
    ]
    assert all(input_tokens(r) <= BUDGET for r in summarizer.requests)
    assert all(r.system == SUMMARY_SYSTEM for r in summarizer.requests)
    assert (result.compacted, result.summary, result.summary_chunks) == (True, "S3", 3)


async def test_a_round_longer_than_a_chunk_is_split_between_tool_pairs() -> None:
    summarizer = numbered()
    big = round_of(1, pairs=5)
    await compact(make_service(summarizer), [system("s"), *big, *round_of(2)])
    assert [dump_messages(r.messages) for r in summarizer.requests] == [
        big[:5],
        [*carried("S1"), *big[5:9]],
        [*carried("S2"), *big[9:], *round_of(2)],
    ]
    assert all(input_tokens(r) <= BUDGET for r in summarizer.requests)


async def test_a_message_larger_than_the_budget_is_cut_with_a_marker() -> None:
    summarizer = numbered()
    huge = round_of(1, words=5000)
    result = await compact(make_service(summarizer), [system("s"), *huge, *round_of(2)])
    first = summarizer.requests[0]
    assert input_tokens(first) <= BUDGET
    assert "[truncated by context-compact: 5000 tokens, the first" in first.prompt
    assert dump_messages(first.messages)[:2] == huge[:2]
    assert result.compacted is True
    assert all(input_tokens(r) <= BUDGET for r in summarizer.requests)


async def test_an_input_many_times_the_budget_compacts_with_every_prompt_under_it() -> None:
    summarizer = numbered()
    raw = [system("s")]
    for k in range(1, 51):
        raw += round_of(k)
    assert WORDS.count(" ".join(str(m["content"]) for m in raw)) > 14 * BUDGET
    result = await compact(make_service(summarizer), raw)
    assert result.compacted is True
    assert result.summary_chunks == len(summarizer.requests) == 25
    assert all(input_tokens(r) <= BUDGET for r in summarizer.requests)
    for k, request in enumerate(summarizer.requests[1:], start=1):
        assert dump_messages(request.messages[:2]) == carried(f"S{k}")
    assert result.summary == "S25"


async def test_a_failed_chunk_fails_the_whole_summary() -> None:
    def fail_second(request: SummaryRequest) -> str:
        if request.messages[0].content != "Task 1.":
            from app.core.errors import SummarizerError

            raise SummarizerError("boom", retryable=False)
        return "S1"

    summarizer = FakeSummarizer(fail_second)
    # Valid as sent (each round closed by a reply): a list that comes back unchanged must be.
    raw = [system("s")]
    for k in (1, 2, 3):
        raw += [*round_of(k), assistant(f"Done {k}.")]
    result = await compact(make_service(summarizer), raw)
    assert (result.compacted, result.reason, result.summary_chunks) == (
        False,
        "summarization_failed",
        2,
    )
    assert result.warnings == [
        "summarizer fake failed: boom",
        "summary failed at chunk 2 (2 summarizer calls made)",
    ]


def fail_from(call: int) -> FakeSummarizer:
    """Answers `S1`, `S2`, ... until call number `call`, which fails (and every later one)."""
    calls: list[int] = []

    def answer(request: SummaryRequest) -> str:
        calls.append(1)
        if len(calls) >= call:
            from app.core.errors import SummarizerError

            raise SummarizerError("boom", retryable=False)
        return f"S{len(calls)}"

    return FakeSummarizer(answer)


class RecordingExtractive(ExtractiveSummarizer):
    """The extractive summarizer, keeping the requests it got."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return await super().summarize(request)


@pytest.mark.parametrize("failing_call", [1, 2, 3])
async def test_after_a_failed_chunk_the_fallback_summarizes_the_whole_rest_in_one_pass(
    failing_call: int,
) -> None:
    summarizer = fail_from(failing_call)
    fallback = RecordingExtractive()
    rounds = [round_of(k) for k in range(1, 8)]
    raw = [system("s"), *(m for r in rounds for m in r)]
    service = build_service(
        WORDS, summarizer, read_tools=(), summary_input_budget=BUDGET, fallback=fallback
    )
    result = await compact(service, raw)
    # no LLM call after the first failure; the fallback ran once, over every message
    assert len(summarizer.requests) == failing_call
    assert [dump_messages(r.messages) for r in fallback.requests] == [raw[1:]]
    assert (result.compacted, result.summarizer, result.summary_chunks) == (
        True,
        "extractive",
        failing_call,
    )
    # the first request and the latest: the summary covers the whole history
    assert "First request: Task 1.\n- Latest request: Task 7." in (result.summary or "")
    assert result.warnings[-1] == "summary written by the fallback summarizer extractive"


async def test_the_budget_is_a_per_request_option() -> None:
    summarizer = numbered()
    raw = [system("s"), *round_of(1), *round_of(2), *round_of(3)]
    options = CompactOptions(summary_input_budget=100_000)
    await make_service(summarizer).compact(
        CompactRequest(messages=parse(raw), force=True, options=options)
    )
    assert len(summarizer.requests) == 1


class RecordingWords(WordTokenizer):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def count(self, text: str) -> int:
        self.texts.append(text)
        return super().count(text)


async def test_a_rest_far_within_the_budget_is_not_tokenized_again_as_a_prompt() -> None:
    tokenizer = RecordingWords()
    service = make_service(numbered(), budget=100_000, tokenizer=tokenizer)
    await compact(service, [system("s"), *round_of(1), *round_of(2)])
    assert not any("<conversation>\n[user]" in text for text in tokenizer.texts)
    assert not any(text.startswith("[user]\nTask 1.") for text in tokenizer.texts)


async def test_the_plan_uses_the_counts_of_the_request_instead_of_counting_again() -> None:
    tokenizer = RecordingWords()
    service = make_service(numbered(), budget=100_000, tokenizer=tokenizer)
    messages = parse([system("s"), *round_of(1), *round_of(2)])
    await service.compact(CompactRequest(messages=messages, force=True))
    texts = [count_text(m)[0] for m in messages[1:]]  # the head is counted again in the answer
    assert [tokenizer.texts.count(t) for t in texts] == [texts.count(t) for t in texts]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
async def test_every_corpus_transcript_compacts_with_every_prompt_under_a_small_budget(
    path: Path, tokenizer: TiktokenTokenizer
) -> None:
    extractive = ExtractiveSummarizer()
    summarizer = FakeSummarizer(extractive.summarize)
    service = make_service(summarizer, budget=1500, tokenizer=tokenizer)
    raw = load(path)
    fmt: Format = "openai" if path.name.endswith(".openai.json") else "anthropic"
    messages = from_openai(raw) if fmt == "openai" else parse(raw)
    result = await service.compact(CompactRequest(messages=messages, force=True, format=fmt))
    assert result.compacted is True
    assert violations(result.messages, fmt) == []
    sizes = [tokenizer.count(r.system) + tokenizer.count(r.prompt) for r in summarizer.requests]
    assert max(sizes) <= 1500
    assert result.summary_chunks == len(sizes) > 1


async def test_the_extractive_summarizer_reads_the_whole_rest_at_once() -> None:
    service = make_service(FakeSummarizer(), budget=BUDGET)
    service.summarizer = ExtractiveSummarizer()
    raw = [system("s")]
    for k in range(1, 11):
        raw += round_of(k)
    result = await compact(service, raw)
    assert result.summary_chunks == 1
    assert result.summary is not None
    assert "- First request: Task 1." in result.summary
    assert "- Latest request: Task 10." in result.summary


async def test_a_failed_summary_of_a_list_broken_in_its_middle_is_refused_not_returned() -> None:
    """Had it compacted, the break would have been summarized away; unchanged, it would
    come back as sent, so it is refused as any list that comes back unchanged."""

    def fail(request: SummaryRequest) -> str:
        from app.core.errors import SummarizerError

        raise SummarizerError("boom", retryable=False)

    raw = [system("s"), *round_of(1), *round_of(2), *round_of(3)]  # user after tool_result
    with pytest.raises(InvalidConversationError) as refused:
        await compact(make_service(FakeSummarizer(fail)), raw)
    assert [v.rule for v in refused.value.violations] == ["roles_alternate", "roles_alternate"]


class Window:
    def __init__(self, tokens: int | None, ratio: float | None = None) -> None:
        self.tokens = tokens
        self.measured = ratio

    async def window(self) -> int | None:
        return self.tokens

    async def ratio(self) -> float | None:
        return self.measured


async def test_chunks_fit_the_window_the_server_reports() -> None:
    summarizer = numbered()
    service = build_service(WORDS, summarizer, read_tools=(), summary_input_budget=100_000)
    service.summaries.window = Window(1500)
    service.summaries.answer_tokens = 250
    raw = [system("s")]
    for k in range(1, 11):
        raw += round_of(k)
    result = await compact(service, raw)
    assert result.compacted is True
    assert len(summarizer.requests) > 1
    assert all(input_tokens(r) <= 1000 for r in summarizer.requests)  # (1500 - 250) / 1.25
    assert result.warnings[0] == (
        "summary_input_budget 100000 lowered to 1000: the summarizer's server has a context "
        "window of 1500 tokens (set COMPACT_SUMMARY_INPUT_BUDGET to match it)"
    )


async def test_chunks_fit_the_window_in_the_ratio_the_server_measured() -> None:
    summarizer = numbered()
    service = build_service(WORDS, summarizer, read_tools=(), summary_input_budget=100_000)
    service.summaries.window = Window(1500, ratio=1.1)
    service.summaries.answer_tokens = 250
    raw = [system("s")]
    for k in range(1, 31):
        raw += round_of(k, words=60)  # results short of the clip: chunks as sized
    result = await compact(service, raw)
    assert all(input_tokens(r) <= 1136 for r in summarizer.requests)  # (1500 - 250) / 1.1
    assert max(input_tokens(r) for r in summarizer.requests) > 1000  # the fixed 1.25's
    assert result.warnings[0].startswith("summary_input_budget 100000 lowered to 1136:")
