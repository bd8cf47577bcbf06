"""Compactions as the metrics see them: the strategy that ran and every outcome."""

from __future__ import annotations

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.options.compact import CompactOptions
from app.service.compaction import CompactionPorts, CompactionService, CompactRequest
from app.service.metered import MeteredCompactionService
from app.service.metrics import NoMetrics
from app.service.slots import BusyError, SummarySlots
from tests.builders import (
    SERVICE_DEFAULTS,
    DictWorkdir,
    FakeSummarizer,
    MemoryArchive,
    parse,
    rounds,
    system,
)

pytestmark = pytest.mark.anyio

Observed = tuple[str, str, int, int | None]


class RecordingMetrics(NoMetrics):
    """Records the compactions only."""

    def __init__(self) -> None:
        self.compactions: list[Observed] = []

    def observe_compaction(
        self, strategy: str, outcome: str, tokens_before: int, tokens_after: int | None
    ) -> None:
        self.compactions.append((strategy, outcome, tokens_before, tokens_after))


def make_service(
    tokenizer: TiktokenTokenizer, metrics: RecordingMetrics, slots: SummarySlots
) -> MeteredCompactionService:
    return MeteredCompactionService(
        CompactionService(
            CompactionPorts(
                tokenizer=tokenizer,
                summarizer=FakeSummarizer(lambda r: "BODY"),
                workdir=DictWorkdir(),
                archive=MemoryArchive(),
                slots=slots,
            ),
            SERVICE_DEFAULTS,
        ),
        metrics,
    )


async def test_a_compaction_refused_for_want_of_a_summary_slot_is_counted_as_busy(
    tokenizer: TiktokenTokenizer,
) -> None:
    metrics = RecordingMetrics()
    slots = SummarySlots(1, wait=0)
    service = make_service(tokenizer, metrics, slots)
    messages = parse([system("s"), *rounds(1, 3)])
    async with slots.hold():
        with pytest.raises(BusyError):
            await service.compact(CompactRequest(messages=messages, force=True))
    assert metrics.compactions == [("full", "busy", 0, None)]


async def test_the_strategy_counted_is_the_one_that_ran(tokenizer: TiktokenTokenizer) -> None:
    metrics = RecordingMetrics()
    service = make_service(tokenizer, metrics, SummarySlots(1, wait=0))
    messages = parse([system("s"), *rounds(1, 3)])
    options = CompactOptions(strategy="prune", prune_keep_recent=1)
    result = await service.compact(CompactRequest(messages=messages, options=options, force=True))
    assert result.stats is not None
    assert metrics.compactions == [
        (
            "prune",
            "compacted",
            result.stats.original_token_count,
            result.stats.compacted_token_count,
        )
    ]


def test_the_metered_service_wraps_a_service_and_holds_no_state_of_its_own(
    tokenizer: TiktokenTokenizer,
) -> None:
    metered = make_service(tokenizer, RecordingMetrics(), SummarySlots(1, wait=0))
    wrapped = metered.wrapped
    assert set(vars(metered)) == {"wrapped", "metrics"}
    assert metered.summaries is wrapped.summaries
    assert metered.archive is wrapped.archive
    metered.summarizer = FakeSummarizer(lambda r: "OTHER")
    assert wrapped.summarizer is metered.summarizer
