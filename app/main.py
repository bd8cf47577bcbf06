"""The app factory: settings in, a wired FastAPI app out. Nothing is built at import time.

With `app.wiring.service` (which adapter implements which port), the one place that wires
adapters to the service and the routes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from anyio import to_thread
from fastapi import FastAPI

from app import __version__
from app.adapters.data_dir import DataDirectory
from app.adapters.lazy_counter import LazyProviderCounter
from app.adapters.prometheus_metrics import PrometheusMetrics
from app.api.auth import BearerAuth, document_bearer_auth
from app.api.deadline import RequestDeadline
from app.api.docs import install_docs
from app.api.errors import install_error_handlers
from app.api.limits import BodySizeLimit, ShapeLimits
from app.api.observe import ObserveRequests
from app.api.operations import operation_id
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
from app.core.summary import deadline_warning
from app.service.compaction import CompactionService
from app.service.jobs import JobManager, JobPolicy
from app.service.metered import MeteredCompactionService
from app.service.recall import Recaller
from app.settings import Settings
from app.wiring.counting import build_provider_counter, build_tokenizer, shared_o200k

# The service's construction lives in `app.wiring.service`, `app.wiring.counting` and
# `app.wiring.toolkit` (the command line builds what it needs without the web framework);
# these names stay importable from here.
from app.wiring.service import (
    SUMMARY_CAP_FACTOR,
    Stores,
    build_probe,
    build_service,
    build_summarizer,
    close_ports,
    setup_logging,
)
from app.wiring.toolkit import build_toolkit

__all__ = [
    "SUMMARY_CAP_FACTOR",
    "Stores",
    "build_probe",
    "build_provider_counter",
    "build_service",
    "build_summarizer",
    "build_tokenizer",
    "build_toolkit",
    "close_ports",
    "create_app",
    "setup_logging",
    "shared_o200k",
]

log = logging.getLogger("context_compact")
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
# address `context-compact serve` listens on by default.
SERVERS = [
    {"url": "/", "description": "The server that serves this document"},
    {"url": "http://127.0.0.1:8080", "description": "A local `context-compact serve`"},
]
LICENSE = {"name": "MIT", "identifier": "MIT"}
IGNORED_SDK_KEY = (
    "ANTHROPIC_API_KEY is set but not used: COMPACT_SUMMARIZER=auto summarizes with Anthropic "
    "only for COMPACT_ANTHROPIC_API_KEY; set COMPACT_SUMMARIZER=anthropic to use it"
)
IGNORED_OPENAI_KEY = (
    "OPENAI_API_KEY (or COMPACT_OPENAI_API_KEY) is set but not used: COMPACT_SUMMARIZER=auto "
    "never summarizes with an OpenAI-compatible server; set COMPACT_SUMMARIZER=openai to use it"
)


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
    shared_o200k()  # o200k loads at start-up too (the command line loads it when it counts)
    if isinstance(service.provider_counter, LazyProviderCounter):
        service.provider_counter.load()  # and the provider's counter, with its SDK
    recorder = service.metrics if isinstance(service, MeteredCompactionService) else None
    recorder = recorder or PrometheusMetrics()
    policy = JobPolicy(
        workers=settings.job_workers,
        queue_limit=settings.job_queue_limit,
        ttl=timedelta(seconds=settings.job_ttl_seconds),
        lease=timedelta(seconds=settings.job_lease_seconds),
        deadline=settings.request_timeout,
    )
    job_manager = JobManager(service, stores.jobs, policy, queue=stores.queue)

    data_dir = DataDirectory(settings.data_dir, min_free_bytes=settings.min_free_bytes)
    probe = build_probe(settings, count=service.summaries.tokenizer.count)
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
        fallback = service.fallback
        log.info(
            "context compact ready",
            extra={
                "summarizer": service.summarizer.name,
                "summary_fallback": fallback.name if fallback is not None else "none",
                "workdir": settings.workdir,
            },
        )
        if settings.summarizer == "auto" and settings.anthropic_key != settings.anthropic_api_key:
            log.info(IGNORED_SDK_KEY)
        if settings.summarizer == "auto" and settings.openai_api_key is not None:
            log.info(IGNORED_OPENAI_KEY)
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
        generate_unique_id_function=operation_id,
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
        recaller=Recaller(
            service.archive,
            slots=settings.recall_slots,
            wait=settings.recall_slot_wait,
            deadline=settings.request_timeout,
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
