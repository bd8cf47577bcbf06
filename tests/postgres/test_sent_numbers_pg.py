"""Archives on PostgreSQL keep every number as the agent sent it, as the file store does:
stored as the JSON text written, never as jsonb (which rewrites `1e-400` and `-0`)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.adapters.pg_database import Database
from app.adapters.pg_stores import PgArchiveStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.json_numbers import LiteralFloat, LiteralInt, dumps
from app.core.ports import Archive, ArchiveRef
from app.core.vocabulary import Format
from app.main import create_app
from app.settings import Settings
from app.wiring.service import Stores, build_service
from tests.api.test_sent_numbers import assert_archived_as_sent
from tests.sent_numbers import ODD_NUMBERS, numbered_messages, tagged, with_numbers

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.close()


def test_an_archive_on_postgresql_keeps_each_literal(database: Database) -> None:
    store = PgArchiveStore(database)
    kept = [LiteralInt(0, "-0"), LiteralFloat(float("inf"), "1e309"), LiteralFloat(0.0, "1e-400")]
    big = LiteralInt(10**30)
    messages = [{"role": "user", "content": "x", "numbers": [*kept, big, 1.5, 7]}]
    archive_id = f"0001-{secrets.token_hex(6)}"
    ref = ArchiveRef(id=archive_id, session_id=None, message_count=1, sha256="abc")
    store.save(Archive(ref=ref, created_at="2026-11-25T00:00:00+00:00", messages=messages))
    loaded = store.load(archive_id)
    assert loaded is not None
    assert dumps(loaded.messages) == (
        b'[{"role":"user","content":"x","numbers":[-0,1e309,1e-400,'
        + b"1"
        + b"0" * 30
        + b",1.5,7]}]"
    )


@pytest.fixture
async def replicas(
    database_url: str, tmp_path: Path, tokenizer: TiktokenTokenizer
) -> AsyncIterator[Callable[[], Awaitable[httpx.AsyncClient]]]:
    """Starts app instances on the one database, each with its own data directory."""
    async with contextlib.AsyncExitStack() as stack:

        async def start() -> httpx.AsyncClient:
            values: dict[str, Any] = {
                "workdir": str(tmp_path),
                "data_dir": str(tmp_path / f"data-{secrets.token_hex(3)}"),
                "summarizer": "extractive",
                "database_url": database_url,
            }
            settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
            stores = Stores(settings)
            service = build_service(settings, tokenizer, stores=stores)
            app = create_app(settings, service=service, stores=stores)
            manager = await stack.enter_async_context(LifespanManager(app))
            transport = httpx.ASGITransport(app=manager.app)
            return await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, base_url="http://compact.test")
            )

        yield start


@pytest.fixture
async def client(replicas: Callable[[], Awaitable[httpx.AsyncClient]]) -> httpx.AsyncClient:
    return await replicas()


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_an_archive_served_from_postgresql_holds_every_number_as_sent(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    for start in (0, 6, 10):
        numbers = ODD_NUMBERS[start : start + 6]
        body = with_numbers({"messages": numbered_messages(fmt, 300), "force": True}, numbers)
        await assert_archived_as_sent(client, body)


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_a_background_compaction_on_postgresql_archives_every_number_as_sent(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    numbers = ["1e309", "123456789012345678901", "-0", "1E+2", "1e-400", "2.50"]
    body = with_numbers({"messages": numbered_messages(fmt, 300), "force": True}, numbers)
    started = await client.post("/compactions", content=body, headers=JSON)
    assert started.status_code == 202, started.text
    job = await finished(client, started.json()["id"])
    assert job["state"] == "done", job
    stored = await client.get(f"/archives/{job['result']['archive']['id']}")
    archived = tagged(stored.content)["messages"]
    sent = tagged(body)["messages"]
    start = sent.index(archived[0])
    assert archived == sent[start : start + len(archived)]


JSON = {"content-type": "application/json"}


async def finished(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    for _ in range(200):
        job: dict[str, Any] = (await client.get(f"/compactions/{job_id}")).json()
        if job["state"] not in ("queued", "running"):
            return job
        await anyio.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


async def test_a_job_row_holding_numbers_past_64_bits_is_read_back_by_value_not_a_500(
    client: httpx.AsyncClient, replicas: Callable[[], Awaitable[httpx.AsyncClient]]
) -> None:
    numbers = ["1e309", "123456789012345678901", "-0", "1E+2", "1e-400", "2.50"]
    body = with_numbers({"messages": numbered_messages("anthropic")}, numbers)
    started = await client.post("/compactions", content=body, headers=JSON)
    job = await finished(client, started.json()["id"])
    assert job["result"]["reason"] == "below_threshold"
    other = await replicas()  # reads the job's row, not the first replica's memory
    answer = await other.get(f"/compactions/{job['id']}")
    assert answer.status_code == 200
    read = answer.json()["result"]["messages"][2]
    # jsonb keeps values, not spellings (docs/postgres.md).
    assert read["content"][1]["input"] == {"n": 10**309, "pair": [123456789012345678901, 0]}
    assert read["content"][1]["weight"] == 100
    assert read["metadata"] == {"bounds": [1e-400, 2.5]}
