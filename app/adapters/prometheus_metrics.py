"""The `Metrics` port on `prometheus_client`, one `CollectorRegistry` per app.

A registry of its own (never the library's global one) keeps two apps in one process,
as the tests build them, from sharing counters, and keeps the library's process
collectors out of our exposition. Metric names and labels are listed in the README
(Observability).
"""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)

from app.core.cost import SummarizerCost

PREFIX = "context_compact"

# Request and summarizer latency in seconds: a count under 10 ms up to LLM calls of minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# Conversation sizes in tokens, from a short chat to beyond the largest windows.
TOKEN_BUCKETS = (1_000, 5_000, 10_000, 25_000, 50_000, 100_000, 150_000, 200_000, 500_000, 1e6)
# The proxy's own time before forwarding: a millisecond when it passes through, seconds when it
# compacts at once.
PROXY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30)


# What compactions' summaries cost, summed over every compaction (`SummarizerCost`).
COST_COUNTERS = {
    "calls": "Summarizer calls made by compactions (the fallback's included).",
    "reused": "Summaries answered from an earlier call of the same input: no call made.",
    "input_tokens": "Tokens the summarizer calls read (the service's tokenizer).",
    "output_tokens": "Tokens the summarizer calls wrote.",
    "seconds": "Time the summarizer calls of compactions took.",
}


class PrometheusMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._requests = Counter(
            f"{PREFIX}_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=r,
        )
        self._request_seconds = Histogram(
            f"{PREFIX}_http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._compactions = Counter(
            f"{PREFIX}_compactions",
            "Compactions, by strategy and outcome (compacted or the reason it did not).",
            ["strategy", "outcome"],
            registry=r,
        )
        self._tokens_before = Histogram(
            f"{PREFIX}_compaction_tokens_before",
            "Tokens of the input of each compaction that compacted.",
            ["strategy"],
            buckets=TOKEN_BUCKETS,
            registry=r,
        )
        self._tokens_after = Histogram(
            f"{PREFIX}_compaction_tokens_after",
            "Tokens of the output of each compaction that compacted.",
            ["strategy"],
            buckets=TOKEN_BUCKETS,
            registry=r,
        )
        self._summary_seconds = Histogram(
            f"{PREFIX}_summarizer_duration_seconds",
            "Time of each summarizer call, retries included, by summarizer and outcome.",
            ["summarizer", "outcome"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._summary_failures = Counter(
            f"{PREFIX}_summarizer_failures",
            "Failed summarizer calls, by summarizer and reason (refusal, truncated, timeout...).",
            ["summarizer", "reason"],
            registry=r,
        )
        self._cost = {
            name: Counter(f"{PREFIX}_summarizer_{name}", text, registry=r)
            for name, text in COST_COUNTERS.items()
        }
        self._restore_skips = Counter(
            f"{PREFIX}_restore_skips",
            "Files named in the history that were not restored, by reason.",
            ["reason"],
            registry=r,
        )
        self._proxied = Counter(
            f"{PREFIX}_proxy_requests",
            "Requests through the proxy, by what it did (none, applied, compacted, ...).",
            ["action"],
            registry=r,
        )
        self._proxy_overhead = Histogram(
            f"{PREFIX}_proxy_overhead_seconds",
            "Time the proxy added before a request left for the provider, by action.",
            ["action"],
            buckets=PROXY_BUCKETS,
            registry=r,
        )

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self._requests.labels(method, route, str(status)).inc()
        self._request_seconds.labels(method, route).observe(seconds)

    def observe_compaction(
        self, strategy: str, outcome: str, tokens_before: int, tokens_after: int | None
    ) -> None:
        self._compactions.labels(strategy, outcome).inc()
        if tokens_after is not None:
            self._tokens_before.labels(strategy).observe(tokens_before)
            self._tokens_after.labels(strategy).observe(tokens_after)

    def observe_summary(self, summarizer: str, outcome: str, seconds: float) -> None:
        self._summary_seconds.labels(summarizer, outcome).observe(seconds)

    def observe_summary_failure(self, summarizer: str, reason: str) -> None:
        self._summary_failures.labels(summarizer, reason).inc()

    def observe_restore_skip(self, reason: str) -> None:
        self._restore_skips.labels(reason).inc()

    def observe_summarizer_cost(self, cost: SummarizerCost) -> None:
        for name, counter in self._cost.items():
            value = getattr(cost, name)
            if value:
                counter.inc(value)

    def observe_proxy(self, action: str, overhead_seconds: float) -> None:
        self._proxied.labels(action).inc()
        self._proxy_overhead.labels(action).observe(overhead_seconds)

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_PLAIN_0_0_4
