"""A database that stops answering without closing anything (a frozen network path): every
request still ends within `COMPACT_REQUEST_TIMEOUT` + 2 s with its defined answer, `/readyz`
says within 3 s that the database is not ready, and once the path thaws the service
recovers on fresh connections."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import httpx
import psycopg
import pytest

from tests.postgres.conftest import ADMIN_URL, url_through
from tests.postgres.freezing_proxy import FreezingProxy
from tests.postgres.test_replicas_api import App, app_on, ready_again, session  # noqa: F401
from tests.service.test_compaction import CONVERSATION

pytestmark = pytest.mark.anyio

READY_BOUND = 3.0  # seconds /readyz may take, whatever the database does
GRACE = 2.0  # seconds past the request timeout a request may take


@pytest.fixture
def frozen_proxy() -> Iterator[FreezingProxy]:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    proxy = FreezingProxy(str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432))
    yield proxy
    proxy.close()


async def timed(call: Awaitable[httpx.Response]) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    response = await call
    return time.monotonic() - started, response


def requests_during_stall(
    app: httpx.AsyncClient, s: str, archive_id: str
) -> dict[str, Callable[[], Awaitable[httpx.Response]]]:
    body = {"messages": CONVERSATION, "force": True, "session_id": s}
    return {
        "compact": lambda: app.post("/compact", json=body),
        "submit": lambda: app.post("/compactions", json={**body, "session_id": session()}),
        "records": lambda: app.get(f"/sessions/{s}/compactions"),
        "recall": lambda: app.post(f"/sessions/{s}/recall", json={"query": "fields.py"}),
        "archive": lambda: app.get(f"/archives/{archive_id}"),
        "readyz": lambda: app.get("/readyz"),
    }


def check_answers(answers: dict[str, tuple[float, httpx.Response]], request_timeout: float) -> None:
    """Each request's defined answer to a stalled database, within its bound."""
    late = {
        name: round(elapsed, 2)
        for name, (elapsed, _) in answers.items()
        if elapsed > (READY_BOUND if name == "readyz" else request_timeout + GRACE)
    }
    assert late == {}
    got = {name: (r.status_code, r.json().get("error")) for name, (_, r) in answers.items()}
    assert got == {
        "compact": (200, None),
        "submit": (503, "job_store_failed"),
        "records": (503, "records_unreadable"),
        "recall": (503, "archive_unreadable"),
        "archive": (503, "archive_unreadable"),
        "readyz": (503, None),
    }
    compact = answers["compact"][1].json()
    assert (compact["compacted"], compact["reason"]) == (False, "archive_failed")
    assert compact["messages"] == CONVERSATION
    assert any("database" in w for w in compact["warnings"])
    ready = answers["readyz"][1].json()
    assert ready["checks"]["database_ready"] is False
    assert ready["reasons"]["database_ready"].startswith("database unavailable: ")
    assert all(
        "database" in r.json()["message"]
        for n, (_, r) in answers.items()
        if n not in {"compact", "readyz"}
    )


async def stall_and_recover(
    app_on: App,  # noqa: F811
    database_url: str,
    proxy: FreezingProxy,
    request_timeout: float,
    freeze_for: float,
) -> None:
    app = await app_on(url_through(database_url, proxy.port), request_timeout=request_timeout)
    s = session()
    body = {"messages": CONVERSATION, "force": True, "session_id": s}
    first = await app.post("/compact", json=body)
    assert first.json()["compacted"] is True
    archive_id = first.json()["archive"]["id"]

    proxy.freeze()
    # Without bounds the requests would wait for the thaw: thaw late rather than hang.
    safety = threading.Timer(freeze_for + 15, proxy.thaw)
    safety.start()
    frozen_at = time.monotonic()
    try:
        rounds = 0
        while rounds == 0 or time.monotonic() - frozen_at < freeze_for:
            calls = requests_during_stall(app, s, archive_id)
            answers = await asyncio.gather(*(timed(call()) for call in calls.values()))
            check_answers(dict(zip(calls, answers, strict=True)), request_timeout)
            rounds += 1
    finally:
        safety.cancel()
    proxy.thaw()

    await ready_again(app)
    again = await app.post("/compact", json=body)
    assert again.json()["compacted"] is True
    records = (await app.get(f"/sessions/{s}/compactions")).json()["records"]
    assert [(r["outcome"], r["archive_id"]) for r in records] == [
        ("compacted", archive_id),
        ("compacted", again.json()["archive"]["id"]),
    ]


@pytest.mark.slow
async def test_a_stalled_database_answers_every_request_within_its_deadline(
    app_on: App,  # noqa: F811
    database_url: str,
    frozen_proxy: FreezingProxy,
) -> None:
    await stall_and_recover(app_on, database_url, frozen_proxy, request_timeout=2.0, freeze_for=3.0)


@pytest.mark.slow
async def test_a_database_stalled_for_a_minute_holds_no_request_past_its_deadline(
    app_on: App,  # noqa: F811
    database_url: str,
    frozen_proxy: FreezingProxy,
) -> None:
    await stall_and_recover(
        app_on, database_url, frozen_proxy, request_timeout=20.0, freeze_for=60.0
    )
