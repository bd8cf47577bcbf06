"""Recording what compactions do, without touching the pipeline: the service with its
outcomes counted, and a summarizer with its latency timed.

A subclass keeps `CompactionService.compact` free of bookkeeping, and keeps every caller
(the `/compact` route, background jobs, the command line) recorded the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime

from app.core.errors import InvalidConversationError, SummarizerError
from app.core.model_table import MODELS, ModelSpec
from app.core.ports import (
    ArchiveStore,
    ProviderCounter,
    Summarizer,
    SummaryRequest,
    Tokenizer,
    WorkdirReader,
)
from app.core.result import CompactResult
from app.core.sessions import RecordStore
from app.core.summary import known_reason
from app.service.clock import time_sortable_id, utc_now
from app.service.compaction import CompactionService, CompactRequest
from app.service.defaults import Defaults
from app.service.freshness import Freshness
from app.service.metrics import Metrics
from app.service.slots import BusyError, SummarySlots


class MeteredCompactionService(CompactionService):
    """A `CompactionService` that records each compaction's outcome in `metrics`."""

    def __init__(
        self,
        *,
        metrics: Metrics,
        tokenizer: Tokenizer,
        summarizer: Summarizer,
        workdir: WorkdirReader,
        archive: ArchiveStore,
        defaults: Defaults,
        fallback: Summarizer | None = None,
        provider_counter: ProviderCounter | None = None,
        freshness: Freshness | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = time_sortable_id,
        records: RecordStore | None = None,
        slots: SummarySlots | None = None,
        o200k: Tokenizer | None = None,
        models: Mapping[str, ModelSpec] = MODELS,
    ) -> None:
        super().__init__(
            tokenizer=tokenizer,
            summarizer=summarizer,
            workdir=workdir,
            archive=archive,
            defaults=defaults,
            fallback=fallback,
            provider_counter=provider_counter,
            freshness=freshness,
            clock=clock,
            new_id=new_id,
            records=records,
            slots=slots,
            o200k=o200k,
            models=models,
        )
        self.metrics = metrics

    async def compact(self, request: CompactRequest) -> CompactResult:
        requested: str = request.options.strategy
        try:
            result = await super().compact(request)
        except InvalidConversationError:
            self.metrics.observe_compaction(requested, "invalid_conversation", 0, None)
            raise
        except BusyError:
            self.metrics.observe_compaction(requested, "busy", 0, None)
            raise
        except Exception:
            self.metrics.observe_compaction(requested, "error", 0, None)
            raise
        strategy = result.strategy  # the one that ran: a cooldown may have run prune
        after = result.stats.compacted_token_count if result.stats else None
        outcome = "compacted" if result.compacted else str(result.reason)
        self.metrics.observe_compaction(strategy, outcome, result.token_count, after)
        for skipped in result.skipped_files:
            self.metrics.observe_restore_skip(skipped.reason)
        return result


class TimedSummarizer:
    """A `Summarizer` whose calls are timed into `metrics`, retries included, and whose
    failures are counted by reason."""

    def __init__(self, inner: Summarizer, metrics: Metrics) -> None:
        self._inner = inner
        self._metrics = metrics

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def reads_prompt(self) -> bool:
        """As the wrapped summarizer says (the extractive one reads the messages)."""
        return self._inner.reads_prompt

    async def summarize(self, request: SummaryRequest) -> str:
        started = time.perf_counter()
        outcome = "error"
        try:
            text = await self._inner.summarize(request)
            outcome = "ok"
            return text
        except SummarizerError as exc:
            self._metrics.observe_summary_failure(self.name, known_reason(exc.reason))
            raise
        finally:
            self._metrics.observe_summary(self.name, outcome, time.perf_counter() - started)

    async def aclose(self) -> None:
        await self._inner.aclose()
