"""What the service and the API record about their work, for metrics.

`Metrics` is a port: the API layer records requests, the service records compactions,
summarizer calls and restore skips, and `app.main` wires an implementation in
(`app.adapters.prometheus_metrics`). Labels are closed vocabularies (route templates,
strategies, reasons), never caller-supplied text, so no series is made per request.
"""

from __future__ import annotations

from typing import Protocol

from app.core.cost import SummarizerCost


class Metrics(Protocol):
    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """One HTTP request, by route template (`/archives/{archive_id}`), not raw path."""

    def observe_compaction(
        self, strategy: str, outcome: str, tokens_before: int, tokens_after: int | None
    ) -> None:
        """One compaction: `outcome` is `compacted`, a not-compacted reason,
        `invalid_conversation`, `busy` (no summary slot) or `error`; `tokens_after` is None
        when nothing was compacted."""

    def observe_summary(self, summarizer: str, outcome: str, seconds: float) -> None:
        """One summarizer call (its retries included): `outcome` is `ok` or `error`."""

    def observe_summary_failure(self, summarizer: str, reason: str) -> None:
        """One failed summarizer call, by reason (`app.core.summary.reasons.SUMMARY_FAILURES`,
        or `other`)."""

    def observe_restore_skip(self, reason: str) -> None:
        """One file named in the history that was not restored, and why."""

    def observe_summarizer_cost(self, cost: SummarizerCost) -> None:
        """What one compaction's summaries cost (`CompactResult.summarizer_cost`): calls,
        answers reused, tokens read and written, seconds."""

    def observe_proxy(self, action: str, overhead_seconds: float) -> None:
        """One request through the proxy: what it did (`none`, `skipped`,
        `precompact_started`, `applied`, `compacted`, `retried`) and the time it added
        before the request left for the provider."""

    def exposition(self) -> tuple[bytes, str]:
        """The current values in the text format scrapers read, and its content type."""


class NoMetrics:
    """Records nothing: a one-shot command (`context-compact compact`) has no scraper, and
    need not load the Prometheus client."""

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        pass

    def observe_compaction(
        self, strategy: str, outcome: str, tokens_before: int, tokens_after: int | None
    ) -> None:
        pass

    def observe_summary(self, summarizer: str, outcome: str, seconds: float) -> None:
        pass

    def observe_summary_failure(self, summarizer: str, reason: str) -> None:
        pass

    def observe_restore_skip(self, reason: str) -> None:
        pass

    def observe_summarizer_cost(self, cost: SummarizerCost) -> None:
        pass

    def observe_proxy(self, action: str, overhead_seconds: float) -> None:
        pass

    def exposition(self) -> tuple[bytes, str]:
        return b"", "text/plain; version=0.0.4; charset=utf-8"
