"""A job's archive has the job's id; a job that does not finish leaves none, unless it
was given up to another replica, whose run writes that id."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from app.adapters.job_store import FileJobStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.sessions.jobs import JobTakenOverError
from app.service.jobs import JobManager, JobPolicy
from tests.builders import FakeSummarizer, MemoryArchive, build_service
from tests.service.test_jobs import CONVERSATION, Clock, Gate, submit, wait_for

pytestmark = pytest.mark.anyio


class TakenOverStore(FileJobStore):
    """Once `taken`, every write is refused as after another replica's take-over."""

    taken = False

    def save(self, job: dict[str, Any]) -> None:
        if self.taken:
            raise JobTakenOverError("taken over")
        super().save(job)


Made = tuple[JobManager, MemoryArchive, TakenOverStore]


@pytest.fixture
async def manager_for(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> AsyncIterator[Callable[..., Any]]:
    managers: list[JobManager] = []
    ids = iter(f"0000000000000000000{i}-job" for i in range(10))

    async def make(summarizer: Any, **options: Any) -> Made:
        archive = MemoryArchive()
        service = build_service(tokenizer, FakeSummarizer(summarizer), archive=archive)
        store = TakenOverStore(str(tmp_path))
        policy = JobPolicy(**options)
        manager = JobManager(service, store, policy, new_id=lambda: next(ids), clock=Clock())
        await manager.start()
        managers.append(manager)
        return manager, archive, store

    yield make
    for manager in managers:
        await manager.close()


async def started(gate: Gate) -> None:
    for _ in range(200):
        if gate.started:
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the summary never started")


async def test_a_done_job_leaves_one_archive_with_its_own_id(
    manager_for: Callable[..., Any],
) -> None:
    manager, archive, _ = await manager_for(lambda r: "SUMMARY")
    job = await submit(manager)
    done = await wait_for(manager, job.id, "done")
    assert done.result is not None
    assert done.result["archive"]["id"] == job.id
    assert list(archive.saved) == [job.id]
    assert archive.saved[job.id].ref.message_count == len(CONVERSATION) - 1


async def test_a_job_cancelled_during_its_summary_leaves_no_archive(
    manager_for: Callable[..., Any],
) -> None:
    gate = Gate()
    manager, archive, _ = await manager_for(gate)
    job = await submit(manager)
    await started(gate)
    assert list(archive.saved) == [job.id]
    cancelled = await manager.cancel(job.id)
    assert cancelled is not None
    assert cancelled.state == "cancelled"
    for _ in range(200):
        if not archive.saved:
            break
        await asyncio.sleep(0.005)
    assert archive.saved == {}


async def test_a_job_past_its_deadline_leaves_no_archive(
    manager_for: Callable[..., Any],
) -> None:
    gate = Gate()
    manager, archive, _ = await manager_for(gate, deadline=0.2)
    job = await submit(manager)
    failed = await wait_for(manager, job.id, "failed")
    assert (failed.reason, gate.started) == ("deadline_exceeded", 1)
    assert archive.saved == {}


async def test_a_job_given_up_to_another_replica_leaves_the_archive_to_it(
    manager_for: Callable[..., Any],
) -> None:
    gate = Gate()
    manager, archive, store = await manager_for(gate)
    job = await submit(manager)
    await started(gate)
    store.taken = True
    await manager.heartbeat()  # its renewal is refused: it stops running the job
    await asyncio.sleep(0.05)
    assert list(archive.saved) == [job.id]
