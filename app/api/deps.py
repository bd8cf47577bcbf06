"""Typed dependencies: routes receive the objects `create_app` put in the app's state as
plain parameters (`service: ServiceDep`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from app.api.sent_counts import SentCounts
from app.core.ports import DataDirectory
from app.service.compaction import CompactionService
from app.service.jobs import JobManager
from app.service.metrics import Metrics
from app.service.toolkit import ToolkitService


def _state(name: str) -> Any:
    """A dependency on `app.state.<name>`; the alias using it declares its type."""

    def from_state(request: Request) -> Any:
        return getattr(request.app.state, name)

    return Depends(from_state)


ServiceDep = Annotated[CompactionService, _state("service")]
JobsDep = Annotated[JobManager, _state("jobs")]
ToolkitDep = Annotated[ToolkitService, _state("toolkit")]
MetricsDep = Annotated[Metrics, _state("metrics")]
DataDirDep = Annotated[DataDirectory, _state("data_dir")]
SentCountsDep = Annotated[SentCounts | None, _state("sent_counts")]
