"""A job run again after its replica died leaves one archive, not two: the archive has the
job's id, and the run again removes what the dead run wrote before it writes its own.
Jobs on PostgreSQL (the only store that runs a dead replica's job again), archives on
the file store or on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.adapters.archive_store import FileArchiveStore
from app.adapters.pg_database import Database
from app.adapters.pg_stores import PgArchiveStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.ports import Archive, ArchiveStore
from app.service.clock import time_sortable_id
from app.service.jobs import JobManager, JobPolicy
from tests.builders import FakeSummarizer, build_service
from tests.postgres.test_jobs_pg import LEASE, DyingStore, stored
from tests.service.test_jobs import CONVERSATION, Clock, Gate, submit, wait_for

pytestmark = pytest.mark.anyio


class DyingArchives:
    """The archive store as a replica sees it: once `dead`, nothing it writes or removes
    reaches the shared store (a process killed with SIGKILL cleans nothing up)."""

    def __init__(self, shared: ArchiveStore) -> None:
        self.shared = shared
        self.dead = False

    def save(self, archive: Archive) -> None:
        if not self.dead:
            self.shared.save(archive)

    def load(self, archive_id: str) -> Archive | None:
        return self.shared.load(archive_id)

    def delete(self, archive_id: str) -> None:
        if not self.dead:
            self.shared.delete(archive_id)

    def writable(self) -> bool:
        return self.shared.writable()

    def search(self, session_id: str, query: str, limit: int) -> list[Any]:
        return self.shared.search(session_id, query, limit)


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.close()


Stores = tuple[ArchiveStore, Callable[[str], list[str]]]


@pytest.fixture(params=["files", "postgres"])
def archives(request: pytest.FixtureRequest, tmp_path: Path, database: Database) -> Stores:
    """The shared archive store, and the ids of a session's archives in it."""
    if request.param == "files":
        directory = tmp_path / "data" / "archives"

        def on_disk(session_id: str) -> list[str]:
            names = os.listdir(directory) if directory.exists() else []
            return sorted(n.removesuffix(".json") for n in names if n.endswith(".json"))

        return FileArchiveStore(str(tmp_path / "data")), on_disk

    def in_table(session_id: str) -> list[str]:
        with database.connection() as conn:
            rows = conn.execute(
                "SELECT id FROM compact_archives WHERE session_id = %s ORDER BY id",
                (session_id,),
            ).fetchall()
        return [row[0] for row in rows]

    return PgArchiveStore(database), in_table


Replica = Callable[..., Any]


@pytest.fixture
async def replica(
    database: Database, tokenizer: TiktokenTokenizer, clock: Clock
) -> AsyncIterator[Replica]:
    started: list[JobManager] = []

    async def make(name: str, summarizer: Any, archive: Any, store: DyingStore) -> JobManager:
        service = build_service(
            tokenizer, FakeSummarizer(summarizer), archive=archive, new_id=time_sortable_id
        )
        manager = JobManager(
            service,
            store,
            JobPolicy(lease=LEASE, ttl=timedelta(minutes=5)),
            queue=store,
            clock=clock,
            new_id=time_sortable_id,
            instance_id=f"{name}-{secrets.token_hex(3)}",
        )
        await manager.start()
        started.append(manager)
        return manager

    yield make
    for manager in started:
        await manager.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


async def test_a_job_run_again_after_its_replica_died_leaves_exactly_one_archive(
    replica: Replica, database: Database, clock: Clock, archives: Stores
) -> None:
    shared, listed = archives
    session = f"s-{secrets.token_hex(6)}"
    gate = Gate()
    dying = DyingArchives(shared)
    jobs = DyingStore(database)
    a = await replica("a", gate, dying, jobs)
    job = await submit(a, session=session)
    await stored(database, job.id, "running")
    for _ in range(200):  # the archive is written before the summary starts
        if gate.started:
            break
        await asyncio.sleep(0.005)
    written_by_a = listed(session)
    assert len(written_by_a) == 1
    jobs.dead = dying.dead = True
    await a.close()  # killed mid-summary: its archive stays, its row says running

    b = await replica("b", lambda r: "SUMMARY FROM B", shared, DyingStore(database))
    clock.now += LEASE
    await b.heartbeat()  # the lease ran out: b runs the stored request again
    done = await wait_for(b, job.id, "done")
    assert done.owner == b.instance_id
    assert done.result is not None
    assert listed(session) == [done.result["archive"]["id"]] == [job.id]
    kept = shared.load(job.id)
    assert kept is not None
    assert kept.messages == CONVERSATION[1:]
    assert kept.ref.message_count == len(CONVERSATION) - 1
