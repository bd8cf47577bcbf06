"""The routes and the request parser find what `create_app` built through one typed object."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI

from app.adapters.tokenizer import TiktokenTokenizer
from app.api.deps import ServiceDep
from app.api.limits import ShapeLimits
from app.api.parts import parts_of
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service

pytestmark = pytest.mark.anyio


def test_create_app_installs_its_parts(
    settings_for: Callable[..., Settings], tokenizer: TiktokenTokenizer
) -> None:
    settings = settings_for(max_messages=7, max_blocks=8, max_depth=9)
    service = build_service(settings, tokenizer)
    parts = parts_of(create_app(settings, service=service))
    assert parts is not None
    assert parts.service is service
    assert parts.metrics is service.metrics
    assert parts.shape_limits == ShapeLimits(max_messages=7, max_blocks=8, max_depth=9)


def test_an_app_create_app_did_not_build_has_no_parts() -> None:
    app = FastAPI()
    assert parts_of(app) is None
    app.state.parts = "something else"
    assert parts_of(app) is None


async def test_a_route_needing_a_part_of_an_app_without_them_says_how_to_build_it() -> None:
    app = FastAPI()

    @app.get("/x")
    async def needs_service(service: ServiceDep) -> str:
        return "unreachable"

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        with pytest.raises(RuntimeError, match="the app has no AppParts: build it with create_app"):
            await client.get("/x")
