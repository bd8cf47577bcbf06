"""The app factory: settings in, a wired FastAPI app out. Nothing is built at import time.

This is the one place that knows which adapter implements which port.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from anyio import to_thread
from fastapi import FastAPI

from app import __version__
from app.adapters.anthropic_counter import AnthropicCounter
from app.adapters.anthropic_summarizer import AnthropicSummarizer
from app.adapters.archive_store import FileArchiveStore
from app.adapters.job_store import FileJobStore
from app.adapters.logs import configure_logging
from app.adapters.openai_summarizer import OpenAICompatibleSummarizer
from app.adapters.prometheus_metrics import PrometheusMetrics
from app.adapters.record_store import FileRecordStore
from app.adapters.retry import RetryingSummarizer
from app.adapters.seen_store import FileSeenStore
from app.adapters.token_cache import CachingTokenizer
from app.adapters.tokenizer import TiktokenTokenizer
from app.adapters.workdir import SandboxedWorkdir
from app.api.auth import BearerAuth, document_bearer_auth
from app.api.deadline import RequestDeadline
from app.api.errors import install_error_handlers
from app.api.limits import BodySizeLimit, ShapeLimits
from app.api.observe import ObserveRequests
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
from app.core.decide import Thresholds
from app.core.extractive import ExtractiveSummarizer
from app.core.ledger import LedgerBudget
from app.core.ports import ProviderCounter, Summarizer, Tokenizer
from app.core.restore import RestoreLimits, read_tools_from
from app.core.selective import SelectiveLimits
from app.core.tool_results import ToolResultLimits
from app.service.compaction import CompactionService, Defaults
from app.service.freshness import Freshness
from app.service.jobs import JobManager
from app.service.metered import MeteredCompactionService, TimedSummarizer
from app.service.metrics import Metrics
from app.service.slots import SummarySlots
from app.service.toolkit import ToolkitDefaults, ToolkitService
from app.settings import Settings

log = logging.getLogger("context_compact")

DESCRIPTION = """\
Keeps LLM agents alive in very long sessions. POST a message list (Anthropic Messages
shape): the service counts its tokens, decides whether it is near the window, and compacts
it — everything after the system prompt becomes a structured summary, the files the agent
read most recently are re-read from the work directory and re-injected, and the original
messages are archived so that nothing is ever lost.
"""


def build_summarizer(settings: Settings) -> Summarizer:
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
        )
    return RetryingSummarizer(
        client, attempts=settings.summary_attempts, deadline=settings.summary_deadline
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
) -> MeteredCompactionService:
    """The service, its compactions and summarizer calls recorded in `metrics` (a new
    Prometheus registry unless one is given)."""
    metrics = metrics or PrometheusMetrics()
    summarizer = summarizer or build_summarizer(settings)
    fallback = (
        TimedSummarizer(ExtractiveSummarizer(), metrics)
        if settings.summary_fallback == "extractive" and summarizer.name != "extractive"
        else None
    )
    return MeteredCompactionService(
        metrics=metrics,
        tokenizer=build_tokenizer(settings, tokenizer),
        summarizer=TimedSummarizer(summarizer, metrics),
        fallback=fallback,
        provider_counter=build_provider_counter(settings),
        workdir=SandboxedWorkdir(settings.workdir, aliases=settings.workdir_aliases),
        archive=FileArchiveStore(settings.data_dir),
        freshness=Freshness(FileSeenStore(settings.data_dir)),
        records=FileRecordStore(settings.data_dir),
        defaults=Defaults(
            thresholds=Thresholds(
                context_window=settings.context_window,
                threshold=settings.threshold,
                overflow_threshold=settings.overflow_threshold,
                min_messages=settings.min_messages,
            ),
            restore=RestoreLimits(
                max_files=settings.max_restore_files,
                max_tokens_per_file=settings.max_restore_tokens_per_file,
                max_tokens_total=settings.max_restore_tokens_total,
            ),
            read_tools=read_tools_from(settings.read_tools),
            max_summary_words=settings.max_summary_words,
            ledger_budget=settings.ledger_budget,
            ledger=LedgerBudget(
                settings.ledger_share, settings.ledger_min_tokens, settings.ledger_max_tokens
            ),
            keep_recent_rounds=settings.keep_recent_rounds,
            prune_keep_recent=settings.prune_keep_recent,
            prune_exclude_tools=tuple(settings.prune_exclude_tools),
            prune_min_tokens=settings.prune_min_tokens,
            prune_clear_inputs=settings.prune_clear_inputs,
            max_iterations=settings.max_iterations,
            summary_cooldown_seconds=settings.summary_cooldown_seconds,
            summary_input_budget=settings.summary_input_budget,
            selective=SelectiveLimits(
                keep_recent=settings.selective_keep_recent,
                tool_call_threshold=settings.selective_tool_call_threshold,
                tool_result_threshold=settings.selective_tool_result_threshold,
                preview_tokens=settings.selective_preview_tokens,
                fallback_to_summary=settings.selective_fallback_to_summary,
            ),
        ),
        slots=SummarySlots(settings.max_concurrent_summaries, settings.summary_slot_wait),
    )


def build_toolkit(settings: Settings) -> ToolkitService:
    """Seed 004's toolkit: the same sandbox and data directory as the compaction."""
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
        freshness=Freshness(FileSeenStore(settings.data_dir)),
        defaults=ToolkitDefaults(
            limits=ToolResultLimits(**limits),
            mention_limit=settings.mention_limit,
            rules_max_bytes=settings.project_rules_max_bytes,
        ),
    )


async def close_ports(service: CompactionService) -> None:
    """Closes the HTTP clients of the LLM ports (when the app or a command ends)."""
    for port in (service.summarizer, service.provider_counter):
        close = getattr(port, "aclose", None)
        if close is not None:
            await close()


def create_app(
    settings: Settings | None = None, *, service: CompactionService | None = None
) -> FastAPI:
    """A ready app. The tokenizer loads here, at start-up, never on the first request."""
    settings = settings or Settings()
    service = service or build_service(settings)
    recorder = service.metrics if isinstance(service, MeteredCompactionService) else None
    recorder = recorder or PrometheusMetrics()
    job_manager = JobManager(
        service,
        FileJobStore(settings.data_dir),
        workers=settings.job_workers,
        queue_limit=settings.job_queue_limit,
        ttl=timedelta(seconds=settings.job_ttl_seconds),
        lease=timedelta(seconds=settings.job_lease_seconds),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweep = getattr(service.archive, "remove_stale_temps", None)
        if sweep is not None:  # debris of a process killed mid-write
            await to_thread.run_sync(sweep)
        await job_manager.start()
        # Start-up builds ~120k long-lived objects (pydantic validators, the SDKs) that a
        # full collection walked in 110-180 ms, stalling every request; a large request
        # allocates enough to trigger one every few requests. Frozen, they are skipped.
        gc.freeze()
        log.info(
            "context compact ready",
            extra={"summarizer": service.summarizer.name, "workdir": settings.workdir},
        )
        yield
        gc.unfreeze()
        await job_manager.close()
        await close_ports(service)

    app = FastAPI(
        title="Context Compact",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.settings = settings
    app.state.jobs = job_manager
    app.state.toolkit = build_toolkit(settings)
    app.state.metrics = recorder
    install_error_handlers(app)
    for module in (counting, compaction, jobs, archives, sessions, toolkit, health, metrics):
        app.include_router(module.router)
    app.state.shape_limits = ShapeLimits(
        max_messages=settings.max_messages,
        max_blocks=settings.max_blocks,
        max_depth=settings.max_depth,
    )
    # Added last runs first: observe (request id, metrics), authenticate, start the clock,
    # then count the body.
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(RequestDeadline, seconds=settings.request_timeout)
    if settings.api_token is not None:
        app.add_middleware(BearerAuth, token=settings.api_token.get_secret_value())
    document_bearer_auth(app)
    app.add_middleware(ObserveRequests, metrics=recorder)  # last added: outermost
    return app


def setup_logging(settings: Settings, level: str | None = None) -> None:
    """JSON or text log lines on stderr, each with its request id (`COMPACT_LOG_FORMAT`)."""
    configure_logging(settings.log_format, level or settings.log_level)
