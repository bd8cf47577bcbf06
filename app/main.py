"""The app factory: settings in, a wired FastAPI app out. Nothing is built at import time.

This is the one place that knows which adapter implements which port.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
from anyio import to_thread
from fastapi import FastAPI

from app import __version__
from app.adapters.anthropic_counter import AnthropicCounter
from app.adapters.anthropic_summarizer import AnthropicSummarizer
from app.adapters.archive_store import FileArchiveStore
from app.adapters.data_dir import DataDirectory
from app.adapters.job_store import FileJobStore
from app.adapters.llm_probe import ModelsProbe
from app.adapters.logs import configure_logging
from app.adapters.openai_summarizer import OpenAICompatibleSummarizer
from app.adapters.pg_database import Database, PoolLimits
from app.adapters.pg_stores import PgArchiveStore, PgJobStore, PgRecordStore, PgSeenStore
from app.adapters.prometheus_metrics import PrometheusMetrics
from app.adapters.record_store import FileRecordStore
from app.adapters.retry import RetryingSummarizer
from app.adapters.seen_store import FileSeenStore
from app.adapters.token_cache import CachingTokenizer
from app.adapters.tokenizer import TiktokenTokenizer
from app.adapters.workdir import SandboxedWorkdir
from app.api.auth import BearerAuth, document_bearer_auth
from app.api.deadline import RequestDeadline
from app.api.docs import install_docs
from app.api.errors import install_error_handlers
from app.api.limits import BodySizeLimit, ShapeLimits
from app.api.observe import ObserveRequests
from app.api.parts import AppParts
from app.api.routes import (
    archives,
    compaction,
    counting,
    health,
    jobs,
    metrics,
    sessions,
    toolkit,
)
from app.api.sent_counts import SentCounts
from app.api.spec import finish_openapi
from app.core.extractive import ExtractiveSummarizer
from app.core.jobs import JobQueue, JobStore
from app.core.ledger import LedgerBudget
from app.core.local_speed import deadline_warning
from app.core.ports import ArchiveStore, ProviderCounter, SeenStore, Summarizer, Tokenizer
from app.core.records import RecordStore
from app.core.tool_results import ToolResultLimits
from app.service.checked import CheckedSummarizer
from app.service.compaction import CompactionService, Defaults
from app.service.defaults import server_options
from app.service.freshness import Freshness
from app.service.jobs import JobManager
from app.service.metered import MeteredCompactionService, TimedSummarizer
from app.service.metrics import Metrics
from app.service.slots import SummarySlots
from app.service.toolkit import ToolkitDefaults, ToolkitService
from app.settings import Settings

log = logging.getLogger("context_compact")
# An LLM summary may run to this many times `summary_max_tokens` in our (cl100k) count
# before it is `oversized`: tokenizers differ (Qwen's counts CJK text in fewer tokens than
# cl100k), an answer that ignored `max_tokens` by megabytes does not pass.
SUMMARY_CAP_FACTOR = 2

DESCRIPTION = """\
Keeps LLM agents alive in very long sessions. POST a message list, in either of the two
shapes agents use — Anthropic Messages (`role` system, user or assistant; `content` a
string or typed blocks) or OpenAI Chat Completions (roles system, developer, user,
assistant and tool; `tool_calls`, `tool_call_id`) — and the answer comes back in the same
shape. The service counts its tokens, decides whether it is near the window, and compacts
it: everything after the system prompt becomes a structured summary, the files the agent
read most recently are re-read from the work directory and re-injected, and the original
messages are archived so that nothing is ever lost.
"""

# "/" is wherever this document is served from (what `/docs` calls); the second is the
# address `python -m app serve` listens on by default.
SERVERS = [
    {"url": "/", "description": "The server that serves this document"},
    {"url": "http://127.0.0.1:8080", "description": "A local `python -m app serve`"},
]
LICENSE = {"name": "MIT", "identifier": "MIT"}


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
        if settings.database_url is None:
            self.archive = FileArchiveStore(settings.data_dir)
            self.records = FileRecordStore(settings.data_dir)
            self.seen = FileSeenStore(settings.data_dir)
            self.jobs = FileJobStore(settings.data_dir)
            return
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
        self.archive = PgArchiveStore(self.database)
        self.records = PgRecordStore(self.database)
        self.seen = PgSeenStore(self.database)
        jobs = PgJobStore(self.database)
        self.jobs, self.queue = jobs, jobs

    async def open(self) -> None:
        """Connects and migrates the schema; a database that is down is logged (`/readyz`
        says why) and the first use after it is back migrates."""
        if self.database is None:
            return
        self.database.open()
        reason = await to_thread.run_sync(self.database.unavailable_reason)
        if reason is not None:
            log.error("database not ready at start", extra={"error": reason})

    async def close(self) -> None:
        if self.database is not None:
            await to_thread.run_sync(self.database.close)


def build_summarizer(
    settings: Settings,
    count: Callable[[str], int] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Summarizer:
    """The configured summarizer. An LLM one makes one attempt per call behind the retry
    loop (each attempt bounded as a whole by `summary_timeout`, all of them by
    `summary_deadline`), and its answers are checked (`app.core.summary_check`) against a
    cap of `SUMMARY_CAP_FACTOR × summary_max_tokens` tokens counted by `count`.
    `transport`: the OpenAI-compatible client's (a benchmark records the calls with it)."""
    kind = settings.summarizer_kind
    if kind == "extractive":
        return ExtractiveSummarizer()
    client: Summarizer
    if kind == "openai":
        key = settings.openai_api_key
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
        if settings.anthropic_api_key is None:
            raise ValueError("COMPACT_SUMMARIZER=anthropic needs ANTHROPIC_API_KEY")
        client = AnthropicSummarizer(
            api_key=settings.anthropic_api_key.get_secret_value(),
            model=settings.summary_model,
            base_url=settings.anthropic_base_url,
            timeout=settings.summary_timeout,
            max_tokens=settings.summary_max_tokens,
            temperature=settings.summary_temperature,
        )
    retrying = RetryingSummarizer(
        client,
        attempts=settings.summary_attempts,
        deadline=settings.summary_deadline,
        attempt_timeout=settings.summary_timeout,
    )
    return CheckedSummarizer(
        retrying,
        cap_tokens=SUMMARY_CAP_FACTOR * settings.summary_max_tokens,
        count=count or TiktokenTokenizer().count,
        log_rejected=settings.log_rejected_summaries,
    )


def build_provider_counter(settings: Settings) -> ProviderCounter | None:
    if settings.anthropic_api_key is None:
        return None
    return AnthropicCounter(
        api_key=settings.anthropic_api_key.get_secret_value(),
        model=settings.count_model,
        base_url=settings.anthropic_base_url,
        timeout=settings.count_timeout,
    )


def build_probe(settings: Settings) -> ModelsProbe | None:
    """`/readyz`'s look at the `openai` summarizer's server; None for any other summarizer."""
    if settings.summarizer_kind != "openai":
        return None
    key = settings.openai_api_key
    return ModelsProbe(settings.openai_base_url, api_key=key.get_secret_value() if key else None)


def build_tokenizer(settings: Settings, tokenizer: Tokenizer | None = None) -> Tokenizer:
    """The exact tokenizer, behind the per-message count cache unless it is disabled."""
    base = tokenizer or TiktokenTokenizer()
    if settings.token_cache_entries == 0:
        return base
    return CachingTokenizer(base, settings.token_cache_entries)


def build_service(
    settings: Settings,
    tokenizer: Tokenizer | None = None,
    summarizer: Summarizer | None = None,
    metrics: Metrics | None = None,
    stores: Stores | None = None,
) -> MeteredCompactionService:
    """The service, its compactions and summarizer calls recorded in `metrics` (a new
    Prometheus registry unless one is given)."""
    metrics = metrics or PrometheusMetrics()
    stores = stores or Stores(settings)
    counting = build_tokenizer(settings, tokenizer)
    summarizer = summarizer or build_summarizer(settings, counting.count)
    fallback = (
        TimedSummarizer(ExtractiveSummarizer(), metrics)
        if settings.summary_fallback == "extractive" and summarizer.name != "extractive"
        else None
    )
    return MeteredCompactionService(
        metrics=metrics,
        tokenizer=counting,
        summarizer=TimedSummarizer(summarizer, metrics),
        fallback=fallback,
        provider_counter=build_provider_counter(settings),
        workdir=SandboxedWorkdir(settings.workdir, aliases=settings.workdir_aliases),
        archive=stores.archive,
        freshness=Freshness(stores.seen),
        records=stores.records,
        defaults=Defaults(
            options=server_options(settings.model_dump()),
            overflow_threshold=settings.overflow_threshold,
            ledger=LedgerBudget(
                settings.ledger_share, settings.ledger_min_tokens, settings.ledger_max_tokens
            ),
            summary_cooldown_seconds=settings.summary_cooldown_seconds,
            summary_mode=settings.summary_path,
        ),
        slots=SummarySlots(settings.max_concurrent_summaries, settings.summary_slot_wait),
    )


def build_toolkit(settings: Settings, seen: SeenStore | None = None) -> ToolkitService:
    """The context-engineering toolkit: the same sandbox and data directory as the compaction."""
    workdir = SandboxedWorkdir(settings.workdir, aliases=settings.workdir_aliases)
    prefix = "tool_result_"
    limits = {
        name.removeprefix(prefix): value
        for name, value in settings.model_dump().items()
        if name.startswith(prefix)
    }
    return ToolkitService(
        reader=workdir,
        inspector=workdir,
        freshness=Freshness(seen or FileSeenStore(settings.data_dir)),
        defaults=ToolkitDefaults(
            limits=ToolResultLimits(**limits),
            mention_limit=settings.mention_limit,
            rules_max_bytes=settings.project_rules_max_bytes,
        ),
    )


async def close_ports(service: CompactionService) -> None:
    """Closes the HTTP clients of the LLM ports (when the app or a command ends)."""
    await service.summarizer.aclose()
    if service.provider_counter is not None:
        await service.provider_counter.aclose()


def create_app(
    settings: Settings | None = None,
    *,
    service: CompactionService | None = None,
    stores: Stores | None = None,
) -> FastAPI:
    """A ready app. The tokenizer loads here, at start-up, never on the first request.
    A `service` built beforehand should be given the same `stores` (one pool)."""
    settings = settings or Settings()
    stores = stores or Stores(settings)
    service = service or build_service(settings, stores=stores)
    recorder = service.metrics if isinstance(service, MeteredCompactionService) else None
    recorder = recorder or PrometheusMetrics()
    job_manager = JobManager(
        service,
        stores.jobs,
        queue=stores.queue,
        workers=settings.job_workers,
        queue_limit=settings.job_queue_limit,
        ttl=timedelta(seconds=settings.job_ttl_seconds),
        lease=timedelta(seconds=settings.job_lease_seconds),
        deadline=settings.request_timeout,
    )

    data_dir = DataDirectory(settings.data_dir, min_free_bytes=settings.min_free_bytes)
    probe = build_probe(settings)
    if probe is not None:  # chunks fit the server's window when it reports one
        service.summaries.window = probe
        service.summaries.answer_tokens = settings.summary_max_tokens

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await stores.open()
        await to_thread.run_sync(data_dir.sweep_temps)  # debris of a process killed mid-write
        sweeper = (
            asyncio.create_task(sweep_periodically(data_dir, settings.temp_sweep_seconds))
            if settings.temp_sweep_seconds > 0
            else None
        )
        await job_manager.start()
        # Start-up builds ~120k long-lived objects (pydantic validators, the SDKs) that every
        # full collection walked, stalling every request (docs/design.md); a large request
        # allocates enough to trigger one every few requests. Frozen, they are skipped.
        gc.freeze()
        bound = settings.local_call_bound
        too_slow = deadline_warning(bound) if bound is not None else None
        if too_slow is not None:
            log.warning(too_slow)
        log.info(
            "context compact ready",
            extra={"summarizer": service.summarizer.name, "workdir": settings.workdir},
        )
        yield
        gc.unfreeze()
        if sweeper is not None:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
        await job_manager.close()
        if probe is not None:
            await probe.aclose()
        await close_ports(service)
        await stores.close()

    app = FastAPI(
        title="Context Compact",
        version=__version__,
        description=DESCRIPTION,
        servers=SERVERS,
        license_info=LICENSE,
        lifespan=lifespan,
        docs_url=None,  # served from installed assets instead of a CDN: install_docs
        redoc_url=None,
    )
    AppParts(
        service=service,
        jobs=job_manager,
        toolkit=build_toolkit(settings, stores.seen),
        metrics=recorder,
        data_dir=data_dir,
        shape_limits=ShapeLimits(
            max_messages=settings.max_messages,
            max_blocks=settings.max_blocks,
            max_depth=settings.max_depth,
        ),
        summarizer_probe=probe,
        summarizer_required=settings.readyz_requires_summarizer,
        sent_counts=(
            SentCounts(settings.token_cache_entries) if settings.token_cache_entries else None
        ),
    ).install(app)
    install_error_handlers(app)
    for module in (counting, compaction, jobs, archives, sessions, toolkit, health, metrics):
        app.include_router(module.router)
    install_docs(app)
    # Added last runs first: observe (request id, metrics), authenticate, start the clock,
    # then count the body.
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(RequestDeadline, seconds=settings.request_timeout)
    if settings.api_token is not None:
        app.add_middleware(BearerAuth, token=settings.api_token.get_secret_value())
    document_bearer_auth(app)
    finish_openapi(app)
    app.add_middleware(ObserveRequests, metrics=recorder)  # last added: outermost
    return app


async def sweep_periodically(data_dir: DataDirectory, seconds: float) -> None:
    """Sweeps the data directory's stale temp files every `seconds`, until cancelled; a
    failing sweep is logged and tried again next time."""
    while True:
        await asyncio.sleep(seconds)
        try:
            await to_thread.run_sync(data_dir.sweep_temps)
        except Exception:
            log.exception("temp file sweep failed")


def setup_logging(settings: Settings, level: str | None = None) -> None:
    """JSON or text log lines on stderr, each with its request id (`COMPACT_LOG_FORMAT`)."""
    configure_logging(settings.log_format, level or settings.log_level)
