"""Recording what compactions do, without touching the pipeline: the service with its
outcomes counted, and a summarizer with its latency timed.

A wrapper keeps `CompactionService.compact` free of bookkeeping, and keeps every caller
(the `/compact` route, background jobs, the command line) recorded the same way.
"""

from __future__ import annotations

import time
from typing import Any

from app.core.errors import InvalidConversationError, SummarizerError
from app.core.ports import Summarizer, SummaryRequest
from app.core.result import CompactResult
from app.core.summary import known_reason
from app.service.compaction import CompactionService, CompactRequest
from app.service.metrics import Metrics
from app.service.slots import BusyError


class MeteredCompactionService(CompactionService):
    """`wrapped`, each compaction's outcome recorded in `metrics`.

    A wrapper by delegation, as pydantic-ai's `WrapperModel`: it holds the wrapped service
    and the metrics only, and every attribute it does not define is the wrapped service's
    (`__getattr__`), so the ports and the state live in one object. Only `compact` is its
    own; the inherited methods run against the wrapped service's attributes."""

    def __init__(self, wrapped: CompactionService, metrics: Metrics) -> None:
        # No `super().__init__`: the wrapped service holds every port and all state.
        self.wrapped = wrapped
        self.metrics = metrics

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def compact(self, request: CompactRequest) -> CompactResult:
        requested: str = request.options.strategy
        try:
            result = await self.wrapped.compact(request)
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
        before = result.stats.original_token_count if result.stats else result.token_count
        self.metrics.observe_compaction(strategy, outcome, before, after)
        self.metrics.observe_summarizer_cost(result.summarizer_cost)
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
