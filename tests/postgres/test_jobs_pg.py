"""Two `JobManager`s ("replicas") on one PostgreSQL database, with one injectable clock:
a job whose replica died is taken over and finished, not only declared interrupted."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any

import pytest

from app.adapters.pg_database import Database
from app.adapters.pg_stores import PgJobStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.sessions.jobs import JobStoreError
from app.service.jobs import (
    JobManager,
    JobPolicy,
    SessionBusyError,
    request_from_json,
    request_to_json,
)
from tests.builders import FakeSummarizer
from tests.service.test_compaction import make_service
from tests.service.test_jobs import Clock, Gate, request, submit, wait_for

pytestmark = pytest.mark.anyio

LEASE = timedelta(seconds=30)


class DyingStore(PgJobStore):
    """A replica that can die: once `dead`, nothing it writes reaches the database (like
    a process killed with SIGKILL)."""

    dead = False

    def save(self, job: dict[str, Any]) -> None:
        if not self.dead:
            super().save(job)

    def take_over(self, *args: Any, **kwargs: Any) -> list[tuple[dict[str, Any], Any]]:
        return [] if self.dead else super().take_over(*args, **kwargs)

    def release(self, owner: str, job_ids: Sequence[str]) -> None:
        if not self.dead:
            super().release(owner, job_ids)


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


Replica = Callable[..., Any]


@pytest.fixture
async def replica(
    database: Database, tokenizer: TiktokenTokenizer, clock: Clock
) -> AsyncIterator[Replica]:
    started: list[JobManager] = []

    async def make(name: str, summarizer: Any, store: PgJobStore | None = None) -> JobManager:
        store = store or PgJobStore(database)
        manager = JobManager(
            make_service(tokenizer, summarizer=FakeSummarizer(summarizer)),
            store,
            JobPolicy(lease=LEASE, ttl=timedelta(minutes=5)),
            queue=store,
            clock=clock,
            new_id=lambda: f"job-{secrets.token_hex(8)}",
            instance_id=f"{name}-{secrets.token_hex(3)}",
        )
        await manager.start()
        started.append(manager)
        return manager

    yield make
    for manager in started:
        await manager.close()


async def stored(database: Database, job_id: str, state: str) -> None:
    """Waits until the row says `state` (the owner's memory runs a write ahead; a row
    being written is locked, and a take-over skips locked rows)."""
    store = PgJobStore(database)
    for _ in range(200):
        record = store.load(job_id)
        if record is not None and record["state"] == state:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"the row of {job_id} never said {state}")


def session() -> str:
    return f"s-{secrets.token_hex(6)}"


def test_a_request_survives_its_round_trip_through_the_database_format() -> None:
    sent, _ = request(session="s1")
    again = request_from_json(request_to_json(sent))
    assert again == sent


async def test_a_job_whose_replica_died_is_taken_over_and_finished_elsewhere(
    replica: Replica, database: Database, clock: Clock
) -> None:
    store = DyingStore(database)
    a = await replica("a", Gate(), store)
    s = session()
    job = await submit(a, session=s)
    await stored(database, job.id, "running")
    store.dead = True
    await a.close()  # killed mid-job: the row still says running, owned by a

    b = await replica("b", lambda r: "SUMMARY FROM B")
    clock.now += LEASE - timedelta(seconds=1)
    await b.heartbeat()
    still = await b.get(job.id)
    assert still is not None
    assert (still.state, still.owner) == ("running", a.instance_id)
    with pytest.raises(SessionBusyError):
        await submit(b, session=s)

    clock.now += timedelta(seconds=1)
    await b.heartbeat()  # the lease ran out: b claims the job and runs its stored request
    done = await wait_for(b, job.id, "done")
    assert done.owner == b.instance_id
    assert done.result is not None
    assert "SUMMARY FROM B" in done.result["summary"]
    assert done.sent_hashes == job.sent_hashes
    next_job = await submit(b, session=s)
    await wait_for(b, next_job.id, "done")


async def test_a_get_on_another_replica_takes_over_an_abandoned_job(
    replica: Replica, database: Database, clock: Clock
) -> None:
    store = DyingStore(database)
    a = await replica("a", Gate(), store)
    job = await submit(a, session=session())
    await stored(database, job.id, "running")
    store.dead = True
    await a.close()
    b = await replica("b", lambda r: "SUMMARY")
    c = await replica("c", lambda r: "SUMMARY")
    clock.now += LEASE
    taken = await asyncio.gather(b.get(job.id), c.get(job.id))
    owners = {j.owner for j in taken if j is not None}
    assert owners & {b.instance_id, c.instance_id}  # exactly one claimed it; both answer
    done = await wait_for(b, job.id, "done")
    assert done.owner in (b.instance_id, c.instance_id)


async def test_a_replica_that_stops_cleanly_hands_its_jobs_over_at_once(
    replica: Replica, database: Database
) -> None:
    a = await replica("a", Gate())
    job = await submit(a, session=session())
    await stored(database, job.id, "running")
    await a.close()  # SIGTERM: the lease is released, not run out
    b = await replica("b", lambda r: "SUMMARY")
    await b.heartbeat()
    done = await wait_for(b, job.id, "done")
    assert done.owner == b.instance_id


async def test_a_stalled_owner_stops_once_its_job_was_taken_over(
    replica: Replica, database: Database, clock: Clock
) -> None:
    gate = Gate()
    a = await replica("a", gate)
    job = await submit(a, session=session())
    await stored(database, job.id, "running")
    b = await replica("b", Gate())
    clock.now += LEASE  # a stalled past its lease
    await b.heartbeat()
    assert (await b.get(job.id)).owner == b.instance_id  # type: ignore[union-attr]
    await a.heartbeat()  # its renewal is refused: it gives the job up
    gate.opened.set()
    await asyncio.sleep(0.05)
    seen = await b.get(job.id)
    assert seen is not None
    assert (seen.owner, seen.state) == (b.instance_id, "running")


async def test_cancel_from_another_replica_reaches_the_owner(replica: Replica) -> None:
    a = await replica("a", Gate())
    b = await replica("b", Gate())
    job = await submit(a, session=session())
    await wait_for(b, job.id, "running")
    requested = await b.cancel(job.id)
    assert requested is not None
    assert (requested.state, requested.cancel_requested) == ("running", True)
    await a.heartbeat()
    cancelled = await wait_for(b, job.id, "cancelled")
    assert cancelled.reason == "cancelled"


async def test_submits_racing_on_two_replicas_accept_one_job_per_session(
    replica: Replica,
) -> None:
    a = await replica("a", Gate())
    b = await replica("b", Gate())
    s = session()
    outcomes = await asyncio.gather(
        *(submit(m, session=s) for m in [a, b] * 10), return_exceptions=True
    )
    accepted = [o for o in outcomes if not isinstance(o, BaseException)]
    busy = [o for o in outcomes if isinstance(o, SessionBusyError)]
    assert len(accepted) == 1
    assert len(busy) == 19
    assert {e.job_id for e in busy} == {accepted[0].id}


async def test_a_submit_while_the_database_refuses_is_a_store_error(
    replica: Replica, database: Database
) -> None:
    class Down(PgJobStore):
        def create(self, job: dict[str, Any], request: dict[str, Any]) -> str | None:
            raise JobStoreError("job write failed: database unavailable")

    a = await replica("a", Gate(), Down(database))
    with pytest.raises(JobStoreError):
        await submit(a, session=session())


async def test_a_claimed_job_whose_request_is_unreadable_fails_instead_of_looping(
    replica: Replica, database: Database, clock: Clock
) -> None:
    b = await replica("b", lambda r: "SUMMARY")
    job_id = f"job-{secrets.token_hex(8)}"
    stale = (clock.now - 2 * LEASE).isoformat()
    record = {
        "id": job_id,
        "session_id": session(),
        "state": "running",
        "format": "anthropic",
        "created_at": stale,
        "finished_at": None,
        "sent_count": 1,
        "sent_sha256": "x",
        "sent_hashes": ["x"],
        "owner": "dead-replica",
        "heartbeat_at": stale,
    }
    assert PgJobStore(database).create(record, {"messages": "not a list"}) is None
    await b.heartbeat()
    failed = await wait_for(b, job_id, "failed")
    assert failed.reason == "error"
    assert failed.message is not None
    assert failed.message.startswith("stored request is unreadable")


class FrozenStore(PgJobStore):
    """A replica's view of a database that stopped answering: while `frozen`, every call
    fails as a stalled one does (after its bound), and nothing is written."""

    frozen = False

    def _check(self) -> None:
        if self.frozen:
            raise JobStoreError("job write failed: database unavailable: DatabaseStalled")

    def save(self, job: dict[str, Any]) -> None:
        self._check()
        super().save(job)

    def load(self, job_id: str) -> dict[str, Any] | None:
        self._check()
        return super().load(job_id)

    def cancel_requested(self, job_id: str) -> bool:
        self._check()
        return super().cancel_requested(job_id)

    def take_over(self, *args: Any, **kwargs: Any) -> list[tuple[dict[str, Any], Any]]:
        self._check()
        return super().take_over(*args, **kwargs)


async def test_a_job_finished_during_a_database_freeze_is_not_run_again(
    replica: Replica, database: Database, clock: Clock
) -> None:
    """Its owner could not write `done`, and no replica could renew a lease: once the
    database answers again, the owner writes the result and nobody runs the job again."""
    a_store, b_store = FrozenStore(database), FrozenStore(database)
    a_gate, b_gate = Gate(), Gate()
    a = await replica("a", a_gate, a_store)
    b = await replica("b", b_gate, b_store)
    job = await submit(a, session=session())
    await stored(database, job.id, "running")
    a_store.frozen = b_store.frozen = True
    a_gate.opened.set()
    await wait_for(a, job.id, "done")  # answered from a's memory: its write failed
    await b.heartbeat()  # b's looks for abandoned jobs fail too, all along the freeze
    clock.now += LEASE  # the freeze outlasts the lease
    await b.heartbeat()
    a_store.frozen = b_store.frozen = False
    await b.heartbeat()  # first after the thaw: a had no chance to renew
    await a.heartbeat()
    clock.now += LEASE
    await b.heartbeat()
    await a.heartbeat()
    seen = await b.get(job.id)
    assert seen is not None
    assert (seen.state, seen.owner) == ("done", a.instance_id)
    assert (a_gate.started, b_gate.started) == (1, 0)
    assert (await a.get(job.id)) == seen  # a answers it from the database now, as b does


async def test_a_job_its_own_replica_finished_during_a_freeze_is_not_claimed_by_it(
    replica: Replica, database: Database, clock: Clock
) -> None:
    store, gate = FrozenStore(database), Gate()
    a = await replica("a", gate, store)
    job = await submit(a, session=session())
    await stored(database, job.id, "running")
    store.frozen = True
    gate.opened.set()
    await wait_for(a, job.id, "done")
    clock.now += LEASE
    store.frozen = False
    await a.heartbeat()
    await stored(database, job.id, "done")
    assert gate.started == 1
