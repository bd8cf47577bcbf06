"""Building the transparent proxy from the settings (none when `COMPACT_PROXY_PORT` is
unset): its upstreams, the HTTP client that reaches them, and its compactor, which shares
the service's ports (archives, records, slots, summarizer) and adds an extractive twin for
the requests that cannot wait. With a database its sessions live there, shared by the
replicas on it, and so does the key of their session ids (each replica must name a
session alike); a database that cannot be read at start leaves the replica with a key of
its own, as without one."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING

from app.adapters.upstream import HttpxUpstream
from app.core.proxy import Marks
from app.core.sessions import Discards
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp, ProxyConfig
from app.proxy.compactor import ProxyCompactor
from app.proxy.discards import DiscardingCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.compaction import CompactionService
from app.service.metrics import Metrics
from app.settings import Settings

if TYPE_CHECKING:
    from app.adapters.pg_database import Database
    from app.adapters.pg_proxy_sessions import PgProxySessions

log = logging.getLogger("context_compact.proxy")


def build_proxy(
    settings: Settings,
    service: CompactionService,
    metrics: Metrics,
    discards: Discards | None = None,
    database: Database | None = None,
) -> ProxyApp | None:
    """The proxy; with `discards`, a compaction it never puts in leaves no archive and no
    record (`app.proxy.discards`); with `database`, its sessions are shared there."""
    if settings.proxy_port is None:
        return None
    store = None
    if database is not None:
        from app.adapters.pg_proxy_sessions import PgProxySessions

        store = PgProxySessions(database)
    token = settings.proxy_token
    config = ProxyConfig(
        anthropic_url=settings.proxy_anthropic_url,
        openai_url=settings.proxy_openai_url,
        upstreams=dict(settings.proxy_upstreams),
        token=token.get_secret_value() if token is not None else None,
        max_body_bytes=settings.max_request_bytes,
        default_window=service.defaults.options.context_window or 200_000,
        secret=_secret(store),  # session ids never reveal a credential
    )
    immediate = CompactionService(
        replace(service.ports, summarizer=ExtractiveSummarizer(), fallback=None), service.defaults
    )
    policy = ProxyPolicy(
        marks=Marks(settings.proxy_start, settings.proxy_splice),
        wait_seconds=settings.proxy_wait_seconds,
        pin_share=settings.proxy_pin,
    )
    compactor = (
        ProxyCompactor(service, immediate, policy, store)
        if discards is None
        else DiscardingCompactor(service, immediate, policy, discards, store)
    )
    return ProxyApp(config, HttpxUpstream(), compactor, service.models, metrics)


def _secret(store: PgProxySessions | None) -> bytes:
    """The database's key when there is one, else the process's own."""
    if store is not None:
        from app.adapters.pg_database import READY_TIMEOUT
        from app.adapters.pg_proxy_sessions import ProxyStoreError

        try:
            return store.secret(READY_TIMEOUT)
        except ProxyStoreError as exc:
            log.error(
                "proxy session key unreadable: this replica's session ids are its own",
                extra={"error": str(exc)},
            )
    return os.urandom(32)
