"""Building the service from the settings: which adapter implements which port. Kept apart
from the web app (`app.main`) so that the command line's `compact` builds the same service
without importing the web framework (its `count` builds only `app.wiring.counting`). What
only some configurations use is imported when the settings choose it: the LLM SDKs with
the summary check and retry loop of an LLM summarizer, the PostgreSQL driver, and
Prometheus when no other metrics are given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from anyio import to_thread

from app.adapters.archive_store import FileArchiveStore
from app.adapters.file_retention import FileRetention
from app.adapters.job_store import FileJobStore
from app.adapters.logs import configure_logging
from app.adapters.record_store import FileRecordStore
from app.adapters.recorded_archives import RecordedArchives
from app.adapters.seen_store import FileSeenStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.adapters.workdir import SandboxedWorkdir
from app.core.ledger import LedgerBudget
from app.core.ports import ArchiveStore, SeenStore, Summarizer, Tokenizer
from app.core.sessions import JobQueue, JobStore, RecordStore, RetentionPolicy, Withdraws
from app.core.summary import DIGEST_PROMPT_TOKENS, DIGEST_SHARE, CallBound, ExtractiveSummarizer
from app.service.compaction import CompactionPorts, CompactionService, Defaults
from app.service.freshness import Freshness
from app.service.metered import MeteredCompactionService, TimedSummarizer
from app.service.metrics import Metrics
from app.service.retention import Discarder, Retention
from app.service.slots import SummarySlots
from app.settings import Settings
from app.wiring.counting import (
    build_o200k,
    build_provider_counter,
    build_tokenizer,
    model_table,
)

if TYPE_CHECKING:
    import httpx

    from app.adapters.llm_probe import ModelsProbe
    from app.adapters.pg_database import Database

log = logging.getLogger("context_compact")
# An LLM summary may run to this many times `summary_max_tokens` in our (cl100k) count
# before it is `oversized`: tokenizers differ (Qwen's counts CJK text in fewer tokens than
# cl100k), an answer that ignored `max_tokens` by megabytes does not pass.
SUMMARY_CAP_FACTOR = 2


class Stores:
    """Where the shared state lives: files under `data_dir` (the default), or PostgreSQL
    when `COMPACT_DATABASE_URL` is set. Built once per app; `open`/`close` belong to the
    lifespan (the file stores have nothing to open)."""

    def __init__(self, settings: Settings) -> None:
        self.database: Database | None = None
        self.archive: ArchiveStore
        self.records: RecordStore
        self.seen: SeenStore
        self.jobs: JobStore
        self.queue: JobQueue | None = None
        self.withdrawals: Withdraws
        self.sweeping: asyncio.Task[None] | None = None
        policy = RetentionPolicy(
            keep=settings.retention,
            grace=timedelta(seconds=settings.request_timeout + settings.summary_deadline),
            every=settings.retention_sweep_seconds,
        )
        if settings.database_url is None:
            recorded = RecordedArchives(settings.data_dir, policy.grace.total_seconds())
            self.archive = FileArchiveStore(settings.data_dir, recorded=recorded)
            records = FileRecordStore(settings.data_dir)
            self.records = self.withdrawals = records
            self.seen = FileSeenStore(settings.data_dir)
            self.jobs = FileJobStore(settings.data_dir)
            self.retention = Retention(FileRetention(settings.data_dir, recorded), policy)
            return
        from app.adapters.pg_database import Database, PoolLimits
        from app.adapters.pg_retention import PgRetention
        from app.adapters.pg_stores import PgArchiveStore, PgJobStore, PgRecordStore, PgSeenStore

        limits = PoolLimits(
            min_size=settings.database_pool_min,
            max_size=settings.database_pool_max,
            wait=settings.database_pool_wait,
            connect_timeout=settings.database_connect_timeout,
            statement_timeout=settings.database_statement_timeout,
            call_timeout=settings.database_call_timeout,
            keepalives_idle=settings.database_keepalives_idle,
            keepalives_interval=settings.database_keepalives_interval,
            keepalives_count=settings.database_keepalives_count,
            tcp_user_timeout=settings.database_tcp_user_timeout,
        )
        self.database = Database(settings.database_url.get_secret_value(), limits)
        self.archive = PgArchiveStore(self.database, policy.grace)
        pg_records = PgRecordStore(self.database)
        self.records = self.withdrawals = pg_records
        self.retention = Retention(PgRetention(self.database), policy)
        self.seen = PgSeenStore(self.database)
        jobs = PgJobStore(self.database)
        self.jobs, self.queue = jobs, jobs

    async def open(self) -> None:
        """Connects and migrates the schema; a database that is down is logged (`/readyz`
        says why) and the first use after it is back migrates. Starts the retention
        sweeps (`app.service.retention`): the first runs now, beside the start-up."""
        if self.database is not None:
            self.database.open()
            reason = await to_thread.run_sync(self.database.unavailable_reason)
            if reason is not None:
                log.error("database not ready at start", extra={"error": reason})
        self.sweeping = asyncio.create_task(self.retention.run())

    async def close(self) -> None:
        if self.sweeping is not None:
            self.retention.stop()
            self.sweeping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.sweeping
        if self.database is not None:
            await to_thread.run_sync(self.database.close)

    def discarder(self) -> Discarder:
        """What the proxy calls with a compaction it never put in."""
        return Discarder(self.archive, self.withdrawals)


def build_summarizer(
    settings: Settings,
    count: Callable[[str], int] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Summarizer:
    """The configured summarizer. An LLM one makes one attempt per call behind the retry
    loop (each attempt bounded as a whole by `summary_timeout`, all of them by
    `summary_deadline`), and its answers are checked (`app.core.gate.check`) against a
    cap of `SUMMARY_CAP_FACTOR × summary_max_tokens` tokens counted by `count`.
    `transport`: the OpenAI-compatible client's (a benchmark records the calls with it)."""
    kind = settings.summarizer_kind
    if kind == "extractive":
        return ExtractiveSummarizer()
    from app.adapters.retry import RetryingSummarizer, RetryPolicy
    from app.service.checked import CheckedSummarizer

    client: Summarizer
    if kind == "openai":
        key = settings.openai_api_key
        from app.adapters.openai_summarizer import OpenAICompatibleSummarizer

        client = OpenAICompatibleSummarizer(
            base_url=settings.openai_base_url,
            model=settings.summary_model,
            api_key=key.get_secret_value() if key else None,
            timeout=settings.summary_timeout,
            max_tokens=settings.summary_max_tokens,
            temperature=settings.summary_temperature,
            transport=transport,
        )
    else:
        key = settings.anthropic_key
        if key is None:
            raise ValueError(
                "COMPACT_SUMMARIZER=anthropic needs COMPACT_ANTHROPIC_API_KEY "
                "(or ANTHROPIC_API_KEY)"
            )
        from app.adapters.anthropic_summarizer import AnthropicSummarizer

        client = AnthropicSummarizer(
            api_key=key.get_secret_value(),
            model=settings.summary_model,
            base_url=settings.anthropic_base_url,
            timeout=settings.summary_timeout,
            max_tokens=settings.summary_max_tokens,
            temperature=settings.summary_temperature,
        )
    retrying = RetryingSummarizer(
        client,
        RetryPolicy(
            attempts=settings.summary_attempts,
            deadline=settings.summary_deadline,
            attempt_timeout=settings.summary_timeout,
        ),
    )
    return CheckedSummarizer(
        retrying,
        cap_tokens=SUMMARY_CAP_FACTOR * settings.summary_max_tokens,
        count=count or TiktokenTokenizer().count,
        log_rejected=settings.log_rejected_summaries,
    )


def build_probe(
    settings: Settings, count: Callable[[str], int] | None = None
) -> ModelsProbe | None:
    """`/readyz`'s look at the `openai` summarizer's server, and its window and ratio of
    tokens (with `count`, cl100k's); None for any other summarizer."""
    if settings.summarizer_kind != "openai":
        return None
    from app.adapters.llm_probe import ModelsProbe

    key = settings.openai_api_key
    return ModelsProbe(
        settings.openai_base_url,
        api_key=key.get_secret_value() if key else None,
        model=settings.summary_model,
        count=count,
        configured_window=settings.summary_server_window,
    )


def local_call_bound(settings: Settings) -> CallBound | None:
    """The largest summary call and the time it gets, for an OpenAI-compatible server on a
    loopback address (a local model, likely on a CPU); None for any other. Here, not in
    `Settings`, so that reading the settings loads no summary code (`count`)."""
    if settings.summarizer_kind != "openai" or not settings.local_server:
        return None
    read = settings.server(_CallInput)
    budget = read.summary_input_budget
    if settings.summary_path == "digest":  # the notes, within a share of the window
        budget = min(budget, int(DIGEST_SHARE * read.context_window) + DIGEST_PROMPT_TOKENS)
    return CallBound(
        input_tokens=budget,
        output_tokens=settings.summary_max_tokens,
        timeout=settings.summary_timeout,
        attempts=settings.summary_attempts,
        deadline=settings.summary_deadline,
    )


@dataclass(frozen=True)
class _CallInput:
    """The options `local_call_bound` reads (a record like a strategy's)."""

    context_window: int
    summary_input_budget: int


def build_service(
    settings: Settings,
    tokenizer: Tokenizer | None = None,
    summarizer: Summarizer | None = None,
    metrics: Metrics | None = None,
    stores: Stores | None = None,
    o200k: Tokenizer | None = None,
) -> MeteredCompactionService:
    """The service, its compactions and summarizer calls recorded in `metrics` (a new
    Prometheus registry unless one is given)."""
    if metrics is None:
        from app.adapters.prometheus_metrics import PrometheusMetrics

        metrics = PrometheusMetrics()
    stores = stores or Stores(settings)
    counting = build_tokenizer(settings, tokenizer)
    summarizer = summarizer or build_summarizer(settings, counting.count)
    fallback = (
        TimedSummarizer(ExtractiveSummarizer(), metrics)
        if settings.summary_fallback == "extractive" and summarizer.name != "extractive"
        else None
    )
    ports = CompactionPorts(
        tokenizer=counting,
        summarizer=TimedSummarizer(summarizer, metrics),
        fallback=fallback,
        provider_counter=build_provider_counter(settings),
        workdir=SandboxedWorkdir(settings.workdir, aliases=settings.workdir_aliases),
        archive=stores.archive,
        freshness=Freshness(stores.seen),
        records=stores.records,
        slots=SummarySlots(settings.max_concurrent_summaries, settings.summary_slot_wait),
        o200k=build_o200k(settings, o200k),
        models=model_table(settings),
    )
    defaults = Defaults(
        options=settings.options,
        overflow_threshold=settings.overflow_threshold,
        ledger=LedgerBudget(
            settings.ledger_share, settings.ledger_min_tokens, settings.ledger_max_tokens
        ),
        summary_cooldown_seconds=settings.summary_cooldown_seconds,
        summary_mode=settings.summary_path,
    )
    return MeteredCompactionService(CompactionService(ports, defaults), metrics)


async def close_ports(service: CompactionService) -> None:
    """Closes the HTTP clients of the LLM ports (when the app or a command ends)."""
    await service.summarizer.aclose()
    if service.provider_counter is not None:
        await service.provider_counter.aclose()


def setup_logging(settings: Settings, level: str | None = None) -> None:
    """JSON or text log lines on stderr, each with its request id (`COMPACT_LOG_FORMAT`)."""
    configure_logging(settings.log_format, level or settings.log_level)
