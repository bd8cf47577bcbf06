"""`/readyz` answers within seconds even when a store's own readiness check hangs (every
worker thread busy, a call that never returns): it stops waiting and says so."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.api.routes.health import READY_CHECK_SECONDS
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service

pytestmark = pytest.mark.anyio


class HungDatabase:
    """A store whose readiness check does not return until released."""

    check_name = "database_ready"

    def __init__(self) -> None:
        self.released = threading.Event()

    def unavailable_reason(self) -> str | None:
        self.released.wait(30)
        return None


@pytest.fixture
def hung() -> Iterator[HungDatabase]:
    store = HungDatabase()
    yield store
    store.released.set()


@pytest.mark.slow
async def test_readyz_stops_waiting_for_a_hung_check_and_names_it(
    settings_for: Callable[..., Settings], tokenizer: TiktokenTokenizer, hung: HungDatabase
) -> None:
    settings = settings_for()
    service = build_service(settings, tokenizer)
    service.archive = hung  # type: ignore[assignment]
    async with LifespanManager(create_app(settings, service=service)) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            started = time.monotonic()
            ready = await client.get("/readyz")
            elapsed = time.monotonic() - started
    assert READY_CHECK_SECONDS <= elapsed <= READY_CHECK_SECONDS + 0.5
    assert ready.status_code == 503
    assert ready.json()["checks"]["database_ready"] is False
    assert ready.json()["reasons"] == {"database_ready": "no answer within 2.5 s"}
