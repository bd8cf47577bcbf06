"""Two `JobManager`s ("replicas") over one job directory, with one injectable clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from app.adapters.job_store import FileJobStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.service.jobs import INTERRUPTED_MESSAGE, JobManager, JobPolicy, SessionBusyError
from tests.builders import FakeSummarizer, user
from tests.service.test_compaction import make_service
from tests.service.test_jobs import CONVERSATION, Clock, Gate, submit, wait_for

pytestmark = pytest.mark.anyio

LEASE = timedelta(seconds=30)


class DyingStore(FileJobStore):
    """A store whose replica can die: once `dead`, nothing it writes reaches the disk
    (like a process killed with SIGKILL, which writes nothing on its way out)."""

    dead = False

    def save(self, job: dict[str, Any]) -> None:
        if not self.dead:
            super().save(job)


Replica = Callable[..., Any]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def replica(
    tmp_path: Path, tokenizer: TiktokenTokenizer, clock: Clock
) -> AsyncIterator[Replica]:
    """Starts a replica named `name` over the shared `tmp_path`, its summarizer given."""
    started: list[JobManager] = []
    ids = iter(f"job-{i}" for i in range(1000))

    async def make(name: str, summarizer: Any, store: FileJobStore | None = None) -> JobManager:
        service = make_service(tokenizer, summarizer=FakeSummarizer(summarizer))
        manager = JobManager(
            service,
            store or FileJobStore(str(tmp_path)),
            JobPolicy(lease=LEASE, ttl=timedelta(minutes=5)),
            clock=clock,
            new_id=lambda: next(ids),
            instance_id=name,
        )
        await manager.start()
        started.append(manager)
        return manager

    yield make
    for manager in started:
        await manager.close()


def record(tmp_path: Path, job_id: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((tmp_path / "jobs" / f"{job_id}.json").read_bytes())
    return data


async def written(tmp_path: Path, job_id: str, state: str) -> None:
    """Waits until the job's record on disk says `state` (memory runs a write ahead)."""
    for _ in range(200):
        path = tmp_path / "jobs" / f"{job_id}.json"
        if path.exists() and record(tmp_path, job_id)["state"] == state:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"the record of {job_id} never said {state}")


async def test_a_replica_that_starts_leaves_a_live_replicas_running_job_alone(
    replica: Replica, tmp_path: Path
) -> None:
    gate = Gate()
    a = await replica("a", gate)
    job = await submit(a)
    await wait_for(a, job.id, "running")

    b = await replica("b", Gate())
    seen = await wait_for(b, job.id, "running")  # as on disk
    assert (seen.owner, seen.reason) == ("a", None)
    assert record(tmp_path, job.id)["state"] == "running"
    gate.opened.set()
    done = await wait_for(b, job.id, "done")
    assert done.result is not None
    assert done.result["summary"] == "SUMMARY"


async def test_a_job_whose_replica_died_is_interrupted_once_its_lease_ran_out(
    replica: Replica, tmp_path: Path, clock: Clock
) -> None:
    store = DyingStore(str(tmp_path))
    a = await replica("a", Gate(), store)
    job = await submit(a)
    await written(tmp_path, job.id, "running")
    store.dead = True
    await a.close()  # killed: the job's record still says running

    b = await replica("b", Gate())
    clock.now += LEASE - timedelta(seconds=1)
    still = await b.get(job.id)
    assert still is not None
    assert still.state == "running"
    clock.now += timedelta(seconds=1)
    interrupted = await b.get(job.id)
    assert interrupted is not None
    assert (interrupted.state, interrupted.reason, interrupted.message) == (
        "failed",
        "interrupted",
        INTERRUPTED_MESSAGE,
    )
    on_disk = record(tmp_path, job.id)
    assert (on_disk["state"], on_disk["reason"], on_disk["owner"]) == ("failed", "interrupted", "a")


async def test_a_replica_that_starts_after_the_lease_ran_out_interrupts_the_job(
    replica: Replica, tmp_path: Path, clock: Clock
) -> None:
    store = DyingStore(str(tmp_path))
    a = await replica("a", Gate(), store)
    job = await submit(a)
    store.dead = True
    await a.close()
    clock.now += LEASE
    await replica("b", Gate())
    assert (record(tmp_path, job.id)["state"], record(tmp_path, job.id)["reason"]) == (
        "failed",
        "interrupted",
    )


async def test_heartbeats_keep_a_long_job_alive_past_the_lease(
    replica: Replica, tmp_path: Path, clock: Clock
) -> None:
    gate = Gate()
    a = await replica("a", gate)
    job = await submit(a)
    await wait_for(a, job.id, "running")
    b = await replica("b", Gate())
    for _ in range(3):
        clock.now += timedelta(seconds=20)
        await a.heartbeat()
    assert record(tmp_path, job.id)["heartbeat_at"] == clock.now.isoformat()
    seen = await b.get(job.id)
    assert seen is not None
    assert seen.state == "running"
    await b.sweep()
    assert record(tmp_path, job.id)["state"] == "running"


async def test_a_replica_answers_get_and_apply_for_a_job_another_finished(
    replica: Replica,
) -> None:
    a = await replica("a", lambda r: "SUMMARY")
    job = await submit(a)
    done = await wait_for(a, job.id, "done")
    b = await replica("b", Gate())
    seen = await wait_for(b, job.id, "done")
    assert seen == done
    applied = await b.apply(job.id, [*CONVERSATION, user("next")])
    assert applied is not None
    assert done.result is not None
    assert applied.messages == [*done.result["messages"], user("next")]


async def test_a_session_has_one_job_in_flight_across_replicas(
    replica: Replica, tmp_path: Path, clock: Clock
) -> None:
    gate = Gate()
    store = DyingStore(str(tmp_path))
    a = await replica("a", gate, store)
    b = await replica("b", lambda r: "SUMMARY")
    first = await submit(a, session="s1")
    with pytest.raises(SessionBusyError) as busy:
        await submit(b, session="s1")
    assert busy.value.job_id == first.id
    assert (tmp_path / "jobs" / "sessions" / "s1").read_text() == first.id
    other = await submit(b, session="s2")
    await wait_for(b, other.id, "done")

    gate.opened.set()
    await wait_for(b, first.id, "done")  # b reads the record: done once it is on disk
    second = await submit(b, session="s1")
    await wait_for(a, second.id, "done")

    gate.opened.clear()
    third = await submit(a, session="s1")
    store.dead = True
    await a.close()  # died with s1's job in flight
    with pytest.raises(SessionBusyError):
        await submit(b, session="s1")
    clock.now += LEASE
    fourth = await submit(b, session="s1")  # the dead job is declared interrupted
    interrupted = await b.get(third.id)
    assert interrupted is not None
    assert interrupted.reason == "interrupted"
    await wait_for(b, fourth.id, "done")


async def test_cancel_on_another_replica_is_a_request_the_owner_honours_at_its_heartbeat(
    replica: Replica, tmp_path: Path
) -> None:
    gate = Gate()
    a = await replica("a", gate)
    b = await replica("b", Gate())
    job = await submit(a)
    await wait_for(b, job.id, "running")
    requested = await b.cancel(job.id)
    assert requested is not None
    assert (requested.state, requested.cancel_requested) == ("running", True)
    seen = await b.get(job.id)
    assert seen is not None
    assert seen.cancel_requested is True
    await a.heartbeat()
    cancelled = await b.get(job.id)
    assert cancelled is not None
    assert (cancelled.state, cancelled.reason, cancelled.cancel_requested) == (
        "cancelled",
        "cancelled",
        False,
    )
    gate.opened.set()
    after = await a.get(job.id)
    assert after is not None
    assert after.state == "cancelled"


async def test_cancel_of_a_finished_job_on_another_replica_forgets_it_everywhere(
    replica: Replica, tmp_path: Path
) -> None:
    a = await replica("a", lambda r: "SUMMARY")
    job = await submit(a)
    b = await replica("b", Gate())
    await wait_for(b, job.id, "done")
    # The owner hands a finished job over to the store right after writing it; `b` can read
    # the record a moment before that (both replicas share one event loop here). Wait for
    # the hand-over, as any later request to `a` would come after it.
    for _ in range(200):
        if job.id not in a._table.jobs:
            break
        await asyncio.sleep(0.005)
    forgotten = await b.cancel(job.id)
    assert forgotten is not None
    assert forgotten.state == "done"
    assert await a.get(job.id) is None
    assert not (tmp_path / "jobs" / f"{job.id}.json").exists()


async def test_whichever_replica_sweeps_deletes_expired_records_and_their_index(
    replica: Replica, tmp_path: Path, clock: Clock
) -> None:
    a = await replica("a", lambda r: "SUMMARY")
    b = await replica("b", Gate())
    job = await submit(a, session="s1")
    await wait_for(b, job.id, "done")
    clock.now += timedelta(minutes=5)
    await b.sweep()
    await a.sweep()  # finds it already deleted
    assert sorted(p.name for p in (tmp_path / "jobs").iterdir()) == ["sessions"]
    assert list((tmp_path / "jobs" / "sessions").iterdir()) == []
    assert await a.get(job.id) is None


async def test_a_job_that_finishes_before_the_owner_sees_the_cancel_request_stays_done(
    replica: Replica,
) -> None:
    gate = Gate()
    a = await replica("a", gate)
    b = await replica("b", Gate())
    job = await submit(a)
    await wait_for(b, job.id, "running")
    await b.cancel(job.id)
    gate.opened.set()
    await wait_for(b, job.id, "done")
    await a.heartbeat()
    done = await b.get(job.id)
    assert done is not None
    assert (done.state, done.cancel_requested) == ("done", False)
