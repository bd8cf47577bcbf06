"""One archive per compaction that happened, none for one that did not: whatever way an
attempt ends without a kept result (refused, declined after its archive, a failed summary,
an exception, a cancellation), the archive it wrote is removed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from app.core.errors import SummarizerError
from app.core.messages import dump_messages
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest
from app.core.vocabulary import StrategyName
from app.service.compaction import CompactRequest
from app.service.registry import STRATEGIES
from tests.builders import (
    FakeSummarizer,
    MemoryArchive,
    assistant,
    build_service,
    parse,
    rounds,
    system,
    user,
)
from tests.fakes.tokenizer import WordTokenizer

pytestmark = pytest.mark.anyio

WORDS = WordTokenizer()
CONVERSATION = [system("You are an agent."), *rounds(1, 3)]
SUMMARIZERS: list[StrategyName] = [name for name, s in STRATEGIES.items() if s.summarizes]


def request(strategy: StrategyName, raw: list[dict[str, Any]] = CONVERSATION) -> CompactRequest:
    # A 300-token window: the rules of `selective` alone cannot reach it, so it summarizes.
    options = CompactOptions(
        strategy=strategy, context_window=300, fallback=False, tail_keep_recent_rounds=1
    )
    return CompactRequest(messages=parse(raw), options=options, force=True)


@pytest.mark.parametrize("strategy", SUMMARIZERS)
async def test_a_failed_summary_leaves_no_archive(strategy: StrategyName) -> None:
    def fail(summary: SummaryRequest) -> str:
        raise SummarizerError("HTTP 503 after 3 attempts", retryable=True)

    archive = MemoryArchive()
    service = build_service(WORDS, FakeSummarizer(fail), archive=archive)
    result = await service.compact(request(strategy))
    assert (result.compacted, result.reason) == (False, "summarization_failed")
    assert result.summary_chunks == 1  # the call made, though it failed
    assert dump_messages(result.messages) == CONVERSATION
    assert archive.saved == {}


async def test_a_forced_selective_with_nothing_to_compact_leaves_no_archive() -> None:
    archive = MemoryArchive()
    raw = [system("s"), user("Hi."), assistant("Hello.")]
    result = await build_service(WORDS, archive=archive).compact(request("selective", raw))
    assert (result.compacted, result.reason) == (False, "nothing_to_compact")
    assert archive.saved == {}


def explode(summary: SummaryRequest) -> str:
    raise RuntimeError("bug in a summarizer")


@pytest.mark.parametrize("strategy", ["full", "tail"])
async def test_an_exception_after_the_archive_leaves_no_archive(strategy: StrategyName) -> None:
    archive = MemoryArchive()
    service = build_service(WORDS, FakeSummarizer(explode), archive=archive)
    with pytest.raises(RuntimeError, match="bug in a summarizer"):
        await service.compact(request(strategy))
    assert archive.saved == {}


async def test_a_selective_rolled_back_after_an_exception_leaves_no_archive() -> None:
    archive = MemoryArchive()
    service = build_service(WORDS, FakeSummarizer(explode), archive=archive)
    result = await service.compact(request("selective"))
    assert (result.compacted, result.reason) == (False, "selective_failed")
    assert archive.saved == {}


@pytest.mark.parametrize("strategy", SUMMARIZERS)
async def test_a_compaction_cancelled_during_its_summary_leaves_no_archive(
    strategy: StrategyName,
) -> None:
    started = anyio.Event()

    async def hang(summary: SummaryRequest) -> str:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    archive = MemoryArchive()
    service = build_service(WORDS, FakeSummarizer(hang), archive=archive)
    async with anyio.create_task_group() as group:
        group.start_soon(service.compact, request(strategy))
        await started.wait()
        assert len(archive.saved) == 1  # written before the summary, as always
        group.cancel_scope.cancel()
    assert archive.saved == {}


@pytest.mark.parametrize("strategy", SUMMARIZERS)
async def test_a_kept_compaction_leaves_exactly_its_own_archive(strategy: StrategyName) -> None:
    archive = MemoryArchive()
    result = await build_service(WORDS, archive=archive).compact(request(strategy))
    assert result.compacted is True
    assert result.archive is not None
    assert list(archive.saved) == [result.archive.id]
    assert archive.saved[result.archive.id].ref.message_count >= 1
