"""What the web app's routes and lifespan are handed: the parts built from the settings and
the service (`build_parts`), one typed object in the app's state (`AppParts`). Kept out of
`create_app`, which builds only the app, its lifespan and its routes."""

from __future__ import annotations

from datetime import timedelta

from app.adapters.data_dir import DataDirectory
from app.adapters.lazy_counter import LazyProviderCounter
from app.adapters.prometheus_metrics import PrometheusMetrics
from app.api.limits import ShapeLimits
from app.api.parts import AppParts
from app.api.sent_counts import SentCounts
from app.service.compaction import CompactionService
from app.service.jobs import JobManager, JobPolicy
from app.service.metered import MeteredCompactionService
from app.service.recall import Recaller
from app.settings import Settings
from app.wiring.counting import shared_o200k
from app.wiring.proxy import build_proxy
from app.wiring.service import Stores, build_probe
from app.wiring.toolkit import build_toolkit


def build_parts(settings: Settings, service: CompactionService, stores: Stores) -> AppParts:
    """The routes' parts. The encodings and the provider's counter load here, at start-up,
    never on the first request; the summarizer server's probe, when there is one, fits the
    chunks to its window."""
    shared_o200k()  # o200k loads at start-up too (the command line loads it when it counts)
    if isinstance(service.provider_counter, LazyProviderCounter):
        service.provider_counter.load()  # and the provider's counter
    probe = build_probe(settings, count=service.summaries.tokenizer.count)
    if probe is not None:
        service.summaries.window = probe
        service.summaries.answer_tokens = settings.summary_max_tokens
    metrics = service.metrics if isinstance(service, MeteredCompactionService) else None
    metrics = metrics or PrometheusMetrics()
    return AppParts(
        service=service,
        jobs=JobManager(service, stores.jobs, _job_policy(settings), queue=stores.queue),
        toolkit=build_toolkit(settings, stores.seen),
        metrics=metrics,
        data_dir=DataDirectory(settings.data_dir, min_free_bytes=settings.min_free_bytes),
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
        proxy=build_proxy(settings, service, metrics, stores.discarder(), stores.database),
    )


def _job_policy(settings: Settings) -> JobPolicy:
    return JobPolicy(
        workers=settings.job_workers,
        queue_limit=settings.job_queue_limit,
        ttl=timedelta(seconds=settings.job_ttl_seconds),
        lease=timedelta(seconds=settings.job_lease_seconds),
        deadline=settings.request_timeout,
    )
