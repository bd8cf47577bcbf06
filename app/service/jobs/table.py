"""The jobs one replica holds, and the one way their records are written.

Every change to a job held here is followed by a write of its latest version, under one
lock, so the last write is always the latest state. A finished job is handed over to the
store (the source of truth for finished jobs) once its record is written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from anyio import to_thread

from app.core.sessions import (
    IN_FLIGHT,
    Job,
    JobQueue,
    JobStore,
    JobStoreError,
    JobTakenOverError,
    is_expired,
    job_to_json,
)

log = logging.getLogger("context_compact.jobs")

INTERRUPTED_MESSAGE = "the service stopped while the job was queued or running"


@dataclass(frozen=True)
class JobPolicy:
    """How one replica runs jobs: `workers` at once, at most `queue_limit` waiting, each
    within `deadline` seconds (None: none); finished ones kept `ttl`; a job whose owner
    has not renewed its `lease` is abandoned. The timers default to a sweep every
    `min(60 s, ttl)` and a heartbeat every `lease / 3`."""

    workers: int = 4
    queue_limit: int = 64
    ttl: timedelta = timedelta(hours=1)
    lease: timedelta = timedelta(seconds=30)
    deadline: float | None = None
    sweep_interval: float | None = None
    heartbeat_interval: float | None = None

    @property
    def sweep_every(self) -> float:
        return self.sweep_interval or min(60.0, self.ttl.total_seconds())

    @property
    def heartbeat_every(self) -> float:
        return self.heartbeat_interval or self.lease.total_seconds() / 3


@dataclass
class JobTable:
    """The jobs this replica runs (and finished ones whose last write failed), their
    tasks, and their store. With a `queue` (the database store), jobs carry their request
    and a job whose replica died is taken over and run to the end; without one (files),
    it ends `failed: interrupted`."""

    store: JobStore
    queue: JobQueue | None
    clock: Callable[[], datetime]
    instance_id: str
    policy: JobPolicy
    jobs: dict[str, Job] = field(default_factory=dict)
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def in_flight(self) -> list[Job]:
        return [j for j in self.jobs.values() if j.state in IN_FLIGHT]

    def room(self) -> int:
        """Jobs this replica may still accept: its workers and its queue, less those in
        flight."""
        return self.policy.workers + self.policy.queue_limit - len(self.in_flight())

    async def persist(self, job_id: str) -> None:
        """Writes the job's latest version (every change is followed by a write, so the
        last write is always the latest state)."""
        async with self.write_lock:
            job = self.jobs.get(job_id)
            if job is not None:
                await to_the_end(self.store.save, job_to_json(job))

    async def persist_quietly(self, job_id: str) -> None:
        try:
            await self.persist(job_id)
        except JobTakenOverError:
            self.give_up(job_id)
        except JobStoreError as exc:
            log.error("job record not written", extra={"job": job_id, "error": str(exc)})

    async def write_final(self, job_id: str, *, quietly: bool) -> None:
        """Writes a finished job and hands it over to the store, the source of truth for
        finished jobs (so a DELETE on another replica is seen here too). A job whose write
        failed stays in memory, answered from here until it expires."""
        try:
            await self.persist(job_id)
        except JobTakenOverError:
            self.give_up(job_id)  # the other replica's record is the job now
            if not quietly:
                raise
            return
        except JobStoreError as exc:
            if not quietly:
                raise
            log.error("job record not written", extra={"job": job_id, "error": str(exc)})
            return
        job = self.jobs.get(job_id)
        if job is not None and job.state not in IN_FLIGHT:
            del self.jobs[job_id]

    async def delete(self, job_id: str) -> None:
        """Deletes the record of a job already forgotten in memory. Under the write lock, so
        a write of the job still in flight finishes first and cannot bring the file back."""
        async with self.write_lock:
            await to_the_end(self.store.delete, job_id)

    async def delete_quietly(self, job_id: str) -> None:
        try:
            await self.delete(job_id)
        except JobStoreError as exc:
            log.warning("job record not deleted", extra={"job": job_id, "error": str(exc)})

    def give_up(self, job_id: str) -> None:
        """Stops running a job another replica took over (this one stalled past its lease):
        the other replica's record is the job now."""
        self.jobs.pop(job_id, None)
        task = self.tasks.pop(job_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        log.warning("compaction job taken over by another replica", extra={"job": job_id})

    async def interrupt(self, job: Job, now: datetime) -> Job:
        """Declares a job of a replica that stopped renewing its lease interrupted."""
        interrupted = interrupted_at(job, now)
        try:
            async with self.write_lock:
                await to_the_end(self.store.save, job_to_json(interrupted))
        except JobStoreError as exc:
            log.error("job record not written", extra={"job": job.id, "error": str(exc)})
        log.warning("compaction job interrupted", extra={"job": job.id, "owner": job.owner})
        return interrupted

    async def sweep_memory(self) -> None:
        """Forgets the finished jobs still in memory (their last write is in progress or
        failed) once older than the time to live, and deletes their records."""
        now = self.clock()
        expired = [j.id for j in self.jobs.values() if is_expired(j, now, self.policy.ttl)]
        for job_id in expired:
            del self.jobs[job_id]
        for job_id in expired:
            await self.delete_quietly(job_id)


async def to_the_end(write: Callable[[Any], Any], arg: Any) -> Any:
    """Runs a store write in a thread and, if the caller is cancelled meanwhile (a job
    cancelled, the app closing), still waits for it before giving up the write lock: a
    write left running would land after the next one (a `running` after `interrupted`)."""
    task = asyncio.ensure_future(to_thread.run_sync(write, arg))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise


def interrupted_at(job: Job, now: datetime) -> Job:
    return job.finish("failed", now, reason="interrupted", message=INTERRUPTED_MESSAGE)
