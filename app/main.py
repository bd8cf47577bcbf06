"""The app factory: settings in, a wired FastAPI app out. Nothing is built at import time.

The app, its lifespan and its routes; what they are handed is built in `app.wiring`
(`web.build_parts`, `service.build_service`), the one place that wires adapters.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from anyio import to_thread
from fastapi import FastAPI

from app import __version__
from app.api.auth import BearerAuth, document_bearer_auth
from app.api.deadline import RequestDeadline
from app.api.docs import install_docs
from app.api.errors import install_error_handlers
from app.api.limits import BodySizeLimit
from app.api.observe import ObserveRequests
from app.api.operations import operation_id
from app.api.parts import AppParts
from app.api.routes import archives, compaction, counting, health, jobs, metrics, sessions, toolkit
from app.api.spec import finish_openapi
from app.core.ports import DataDirectory
from app.core.summary import deadline_warning
from app.service.compaction import CompactionService
from app.settings import Settings
from app.wiring.service import Stores, build_service, close_ports, local_call_bound
from app.wiring.web import build_parts

__all__ = ["create_app"]

ROUTERS = (counting, compaction, jobs, archives, sessions, toolkit, health, metrics)

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
    """A ready app: its parts built from the settings (`app.wiring.web`), its lifespan and
    its routes. A `service` built beforehand should be given the same `stores` (one pool)."""
    settings = settings or Settings()
    stores = stores or Stores(settings)
    parts = build_parts(settings, service or build_service(settings, stores=stores), stores)
    app = FastAPI(
        title="Context Compact",
        version=__version__,
        description=DESCRIPTION,
        servers=SERVERS,
        license_info=LICENSE,
        lifespan=lifespan_of(settings, parts, stores),
        docs_url=None,  # served from installed assets instead of a CDN: install_docs
        redoc_url=None,
        generate_unique_id_function=operation_id,
    )
    parts.install(app)
    install_error_handlers(app)
    for module in ROUTERS:
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
    app.add_middleware(ObserveRequests, metrics=parts.metrics)  # last added: outermost
    return app


Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def lifespan_of(settings: Settings, parts: AppParts, stores: Stores) -> Lifespan:
    """Opens the stores, sweeps a killed process's debris and starts the jobs; closes them
    all, and the LLM clients, at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await stores.open()
        await to_thread.run_sync(parts.data_dir.sweep_temps)  # a killed process's debris
        sweeper = (
            asyncio.create_task(sweep_periodically(parts.data_dir, settings.temp_sweep_seconds))
            if settings.temp_sweep_seconds > 0
            else None
        )
        await parts.jobs.start()
        # Start-up builds ~120k long-lived objects (pydantic validators, the SDKs) that every
        # full collection walked, stalling every request (docs/design.md); a large request
        # allocates enough to trigger one every few requests. Frozen, they are skipped.
        gc.freeze()
        log_ready(settings, parts.service)
        yield
        gc.unfreeze()
        if sweeper is not None:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
        await parts.jobs.close()
        if parts.proxy is not None:
            await parts.proxy.aclose()
        if parts.summarizer_probe is not None:
            await parts.summarizer_probe.aclose()
        await close_ports(parts.service)
        await stores.close()

    return lifespan


def log_ready(settings: Settings, service: CompactionService) -> None:
    """The start-up line, and what the configuration may not do as its author meant."""
    bound = local_call_bound(settings)
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


async def sweep_periodically(data_dir: DataDirectory, seconds: float) -> None:
    """Sweeps the data directory's stale temp files every `seconds`, until cancelled; a
    failing sweep is logged and tried again next time."""
    while True:
        await asyncio.sleep(seconds)
        try:
            await to_thread.run_sync(data_dir.sweep_temps)
        except Exception:
            log.exception("temp file sweep failed")
