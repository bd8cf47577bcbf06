"""Two app instances on one PostgreSQL database, each with its own (empty) data directory:
what one writes the other serves; the database decides which of racing submits wins; the
database going away and coming back is a defined outcome, never a 500."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import create_app
from app.settings import Settings
from app.wiring.service import Stores, build_service
from tests.builders import FakeSummarizer
from tests.postgres.conftest import CuttableProxy, url_through
from tests.service.test_compaction import CONVERSATION
from tests.service.test_jobs import Gate

pytestmark = pytest.mark.anyio

App = Callable[..., Any]


@pytest.fixture
async def app_on(tmp_path: Path, tokenizer: TiktokenTokenizer) -> AsyncIterator[App]:
    """Starts an app on `url` with its own data directory; its summarizer may be given."""
    managers: list[LifespanManager] = []
    clients: list[httpx.AsyncClient] = []

    async def make(url: str, summarizer: Any = None, **overrides: Any) -> httpx.AsyncClient:
        data = tmp_path / f"data-{len(managers)}"
        values: dict[str, Any] = {
            "workdir": str(tmp_path),
            "data_dir": str(data),
            "summarizer": "extractive",
            "database_url": url,
            "database_pool_wait": 1.0,
            "database_connect_timeout": 1,
            **overrides,
        }
        settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
        stores = Stores(settings)
        service = build_service(settings, tokenizer, stores=stores)
        if summarizer is not None:
            service.summarizer = FakeSummarizer(summarizer)
        manager = LifespanManager(create_app(settings, service=service, stores=stores))
        await manager.__aenter__()
        managers.append(manager)
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://compact.test"
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
    for manager in managers:
        await manager.__aexit__(None, None, None)


def local_archives(tmp_path: Path) -> list[Path]:
    return list(tmp_path.glob("data-*/archives/*"))


def session() -> str:
    return f"s-{secrets.token_hex(6)}"


async def test_two_instances_share_archives_records_and_jobs(
    app_on: App, database_url: str, tmp_path: Path
) -> None:
    a = await app_on(database_url)
    b = await app_on(database_url)
    s = session()
    compacted = await a.post(
        "/compact", json={"messages": CONVERSATION, "force": True, "session_id": s}
    )
    assert compacted.status_code == 200
    archive_id = compacted.json()["archive"]["id"]
    fetched = await b.get(f"/archives/{archive_id}")
    assert fetched.status_code == 200
    assert fetched.json()["messages"] == CONVERSATION[1:]
    records = (await b.get(f"/sessions/{s}/compactions")).json()["records"]
    assert [(r["outcome"], r["archive_id"]) for r in records] == [("compacted", archive_id)]

    posted = await a.post("/compactions", json={"messages": CONVERSATION, "force": True})
    assert posted.status_code == 202
    job_id = posted.json()["id"]
    for _ in range(200):
        job = (await b.get(f"/compactions/{job_id}")).json()
        if job["state"] == "done":
            break
        await asyncio.sleep(0.01)
    assert job["state"] == "done"
    applied = await b.post(f"/compactions/{job_id}/apply", json={"messages": CONVERSATION})
    assert applied.status_code == 200
    assert local_archives(tmp_path) == []  # nothing on the local disks


async def test_twenty_concurrent_submits_across_two_instances_give_one_202(
    app_on: App, database_url: str
) -> None:
    gate = Gate()
    a = await app_on(database_url, gate)
    b = await app_on(database_url, gate)
    s = session()
    body = {"messages": CONVERSATION, "force": True, "session_id": s}
    answers = await asyncio.gather(*(c.post("/compactions", json=body) for c in [a, b] * 10))
    codes = sorted(r.status_code for r in answers)
    assert codes == [202] + [409] * 19
    accepted = next(r.json()["id"] for r in answers if r.status_code == 202)
    assert {r.json()["error"] for r in answers if r.status_code == 409} == {"session_busy"}
    assert all(accepted in r.json()["message"] for r in answers if r.status_code == 409)
    cancelled = await b.delete(f"/compactions/{accepted}")
    assert cancelled.status_code in (200, 202)
    gate.opened.set()


async def ready_again(app: httpx.AsyncClient) -> None:
    """Waits for /readyz to say 200: the pool reconnects on its own (a few seconds)."""
    for _ in range(100):
        if (await app.get("/readyz")).status_code == 200:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("never ready again")


@pytest.mark.slow
async def test_the_database_stopping_and_starting_mid_run(
    app_on: App, database_url: str, proxy: CuttableProxy
) -> None:
    app = await app_on(url_through(database_url, proxy.port), database_pool_wait=0.3)
    s = session()
    body = {"messages": CONVERSATION, "force": True, "session_id": s}
    assert (await app.get("/readyz")).status_code == 200
    assert (await app.post("/compact", json=body)).json()["compacted"] is True

    proxy.cut()
    ready = await app.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["database_ready"] is False
    assert ready.json()["reasons"]["database_ready"].startswith("database unavailable: ")
    assert (await app.get("/healthz")).status_code == 200
    failed = await app.post("/compact", json=body)
    assert failed.status_code == 200
    assert (failed.json()["compacted"], failed.json()["reason"]) == (False, "archive_failed")
    assert failed.json()["messages"] == CONVERSATION
    submitted = await app.post("/compactions", json=body)
    assert (submitted.status_code, submitted.json()["error"]) == (503, "job_store_failed")
    assert (await app.get(f"/sessions/{s}/compactions")).status_code == 503

    proxy.restore()
    await ready_again(app)
    again = await app.post("/compact", json=body)
    assert again.json()["compacted"] is True
    assert (await app.get(f"/archives/{again.json()['archive']['id']}")).status_code == 200


@pytest.mark.slow
async def test_a_database_down_at_start_is_reported_then_used_once_back(
    app_on: App, empty_database_url: str, proxy: CuttableProxy
) -> None:
    proxy.cut()
    url = url_through(empty_database_url, proxy.port) + " password=hunter2-not-logged"
    app = await app_on(url, database_pool_wait=0.3)
    assert (await app.get("/healthz")).status_code == 200
    ready = await app.get("/readyz")
    assert ready.status_code == 503
    assert "database_ready" in ready.json()["reasons"]
    assert "hunter2" not in ready.text
    proxy.restore()
    await ready_again(app)  # and migrated on first use
    body = {"messages": CONVERSATION, "force": True}
    assert (await app.post("/compact", json=body)).json()["compacted"] is True
