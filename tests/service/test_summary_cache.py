"""An identical summarizer input is never sent twice: within a session, the answer of the
earlier call is reused (no call, `summarizer_cost.reused`); never across sessions."""

from __future__ import annotations

from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.core.summary import ExtractiveSummarizer
from app.service.compaction import CompactRequest
from app.service.summary_cache import SummaryCache
from tests.builders import FakeSummarizer, build_service, parse, rounds, system

pytestmark = pytest.mark.anyio

ANSWER = "## Goals & Decisions\nFix the parser build."


def _request(messages: list[Any], session: str | None) -> CompactRequest:
    return CompactRequest(messages=parse(messages), force=True, session_id=session)


async def test_the_same_input_in_one_session_is_answered_from_the_earlier_call(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer(lambda r: ANSWER)
    service = build_service(tokenizer, summarizer)
    messages = [system("s"), *rounds(1, 6)]
    first = await service.compact(_request(messages, "a"))
    second = await service.compact(_request(messages, "a"))
    assert len(summarizer.requests) == 1
    assert (first.summarizer_cost.calls, first.summarizer_cost.reused) == (1, 0)
    assert second.summarizer_cost.model_dump() == {
        "calls": 0,
        "reused": 1,
        "input_tokens": 0,
        "output_tokens": 0,
        "seconds": 0.0,
    }
    assert second.messages == first.messages


@pytest.mark.parametrize("sessions", [("a", "b"), (None, None)])
async def test_no_answer_is_reused_across_sessions_or_without_one(
    tokenizer: TiktokenTokenizer, sessions: tuple[str | None, str | None]
) -> None:
    summarizer = FakeSummarizer(lambda r: ANSWER)
    service = build_service(tokenizer, summarizer)
    messages = [system("s"), *rounds(1, 6)]
    for session in sessions:
        result = await service.compact(_request(messages, session))
        assert (result.summarizer_cost.calls, result.summarizer_cost.reused) == (1, 0)
    assert len(summarizer.requests) == 2


class CountingExtractive:
    """The extractive summarizer (it reads the messages), counting its calls."""

    def __init__(self) -> None:
        self.inner = ExtractiveSummarizer()
        self.calls = 0
        self.name = self.inner.name
        self.reads_prompt = self.inner.reads_prompt

    async def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        return await self.inner.summarize(request)

    async def aclose(self) -> None:
        """Nothing to close."""


async def test_a_moved_cache_breakpoint_is_the_same_input(tokenizer: TiktokenTokenizer) -> None:
    summarizer = CountingExtractive()
    service = build_service(tokenizer, summarizer)
    plain = [system("s"), *rounds(1, 6)]
    marked = [dict(m) for m in plain]
    text = marked[1]["content"]
    assert isinstance(text, str)
    marked[1]["content"] = [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]
    first = await service.compact(_request(plain, "a"))
    second = await service.compact(_request(marked, "a"))
    assert summarizer.calls == 1
    assert second.summarizer_cost.reused == 1
    assert first.summary == second.summary


async def test_a_failed_call_is_not_kept(tokenizer: TiktokenTokenizer) -> None:
    answers = iter([SummarizerError("down", retryable=False), ANSWER])

    def answer(request: SummaryRequest) -> str:
        got = next(answers)
        if isinstance(got, Exception):
            raise got
        return got

    summarizer = FakeSummarizer(answer)
    service = build_service(tokenizer, summarizer, fallback_strategy=None)
    messages = [system("s"), *rounds(1, 6)]
    failed = await service.compact(_request(messages, "a"))
    written = await service.compact(_request(messages, "a"))
    assert failed.summarizer_cost.calls == 1
    assert written.summarizer_cost.calls == 1
    assert len(summarizer.requests) == 2


def test_the_least_recently_used_answer_goes_first() -> None:
    cache = SummaryCache(size=2)
    cache.put(b"a", "A")
    cache.put(b"b", "B")
    assert cache.get(b"a") == "A"
    cache.put(b"c", "C")
    assert (cache.get(b"a"), cache.get(b"b"), cache.get(b"c")) == ("A", None, "C")
