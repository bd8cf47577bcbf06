"""Typed dependencies: routes receive the parts `create_app` built as plain parameters
(`service: ServiceDep`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from app.api.parts import AppParts, parts_of
from app.api.sent_counts import SentCounts
from app.core.ports import DataDirectory
from app.service.compaction import CompactionService
from app.service.jobs import JobManager
from app.service.metrics import Metrics
from app.service.recall import Recaller
from app.service.toolkit import ToolkitService


def _parts(request: Request) -> AppParts:
    parts = parts_of(request.app)
    if parts is None:
        raise RuntimeError("the app has no AppParts: build it with create_app")
    return parts


PartsDep = Annotated[AppParts, Depends(_parts)]


def _service(parts: PartsDep) -> CompactionService:
    return parts.service


def _jobs(parts: PartsDep) -> JobManager:
    return parts.jobs


def _toolkit(parts: PartsDep) -> ToolkitService:
    return parts.toolkit


def _metrics(parts: PartsDep) -> Metrics:
    return parts.metrics


def _data_dir(parts: PartsDep) -> DataDirectory:
    return parts.data_dir


def _recaller(parts: PartsDep) -> Recaller:
    return parts.recaller


def _sent_counts(parts: PartsDep) -> SentCounts | None:
    return parts.sent_counts


ServiceDep = Annotated[CompactionService, Depends(_service)]
JobsDep = Annotated[JobManager, Depends(_jobs)]
ToolkitDep = Annotated[ToolkitService, Depends(_toolkit)]
MetricsDep = Annotated[Metrics, Depends(_metrics)]
DataDirDep = Annotated[DataDirectory, Depends(_data_dir)]
SentCountsDep = Annotated[SentCounts | None, Depends(_sent_counts)]
RecallerDep = Annotated[Recaller, Depends(_recaller)]

BetaHeaderDep = Annotated[
    str | None,
    Header(
        alias="anthropic-beta",
        description=(
            "Anthropic betas, comma-separated, as the SDK sends them to the provider (the body's "
            "`betas` counts too): `context-1m-...` gives the models that take it their 1M window."
        ),
    ),
]
