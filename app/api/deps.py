"""Typed dependencies: routes receive the service as a plain parameter."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.service.compaction import CompactionService
from app.service.jobs import JobManager
from app.service.metrics import Metrics
from app.service.toolkit import ToolkitService


def get_service(request: Request) -> CompactionService:
    service: CompactionService = request.app.state.service
    return service


ServiceDep = Annotated[CompactionService, Depends(get_service)]


def get_jobs(request: Request) -> JobManager:
    jobs: JobManager = request.app.state.jobs
    return jobs


JobsDep = Annotated[JobManager, Depends(get_jobs)]


def get_toolkit(request: Request) -> ToolkitService:
    toolkit: ToolkitService = request.app.state.toolkit
    return toolkit


ToolkitDep = Annotated[ToolkitService, Depends(get_toolkit)]


def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


MetricsDep = Annotated[Metrics, Depends(get_metrics)]
