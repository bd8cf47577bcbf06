"""Typed dependencies: routes receive the service as a plain parameter."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.service.compaction import CompactionService


def get_service(request: Request) -> CompactionService:
    service: CompactionService = request.app.state.service
    return service


ServiceDep = Annotated[CompactionService, Depends(get_service)]
