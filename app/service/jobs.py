"""Background compaction: jobs on a bounded worker pool, kept in the data dir.

States: `queued` (waiting for one of the `workers` slots) → `running` → `done` (the result,
compacted or not), `failed` (with a reason: `invalid_conversation`, `error`, or
`interrupted` when the process stopped while the job was in flight) or `cancelled`.
A session has at most one job in flight; at most `queue_limit` jobs wait for a slot.
Finished jobs expire `ttl` after finishing: swept on every access and on a timer, their
records deleted. Memory is the source of truth while running; every change is written
through to the store, so a restart keeps finished results.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from anyio import to_thread

from app.core.compaction import result_json
from app.core.errors import InvalidConversationError
from app.core.ids import archive_sha256
from app.core.jobs import (
    IN_FLIGHT,
    Job,
    JobState,
    JobStore,
    JobStoreError,
    first_difference,
    is_expired,
    job_from_json,
    job_to_json,
    message_hashes,
    seam_violations,
    swap_prefix,
)
from app.core.validate import Violation
from app.service.clock import time_sortable_id, utc_now
from app.service.compaction import CompactionService, CompactRequest

log = logging.getLogger("context_compact.jobs")

JsonDict = dict[str, Any]
INTERRUPTED_MESSAGE = "the service stopped while the job was queued or running"


class JobError(Exception):
    """Base of the job manager's refusals; the API maps each to a status."""


class SessionBusyError(JobError):
    def __init__(self, job_id: str) -> None:
        super().__init__(f"the session already has a job in flight: {job_id}")
        self.job_id = job_id


class QueueFullError(JobError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} jobs are already waiting for a worker")


class JobNotDoneError(JobError):
    def __init__(self, state: JobState) -> None:
        super().__init__(f"the job is {state}, not done")
        self.state = state


class PrefixMismatchError(JobError):
    def __init__(self, index: int, current_length: int) -> None:
        what = "is missing" if index >= current_length else "differs from the one sent"
        super().__init__(f"messages[{index}] {what}")
        self.index = index


class SeamError(JobError):
    """The kept messages do not fit after the compacted ones (the job was sent between a
    tool call and its result): applying would break a provider rule."""

    def __init__(self, broken: list[Violation]) -> None:
        super().__init__("; ".join(f"messages[{v.index}] {v}" for v in broken))
        self.violations = broken


@dataclass(frozen=True)
class Applied:
    job: Job
    messages: list[JsonDict]
    replaced_message_count: int
    kept_message_count: int


class JobManager:
    """Runs compactions in the background. `start` and `close` belong to the app lifespan."""

    def __init__(
        self,
        service: CompactionService,
        store: JobStore,
        *,
        workers: int = 4,
        queue_limit: int = 64,
        ttl: timedelta = timedelta(hours=1),
        sweep_interval: float | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = time_sortable_id,
    ) -> None:
        self._service = service
        self._store = store
        self._workers = workers
        self._queue_limit = queue_limit
        self._ttl = ttl
        self._sweep_interval = sweep_interval or min(60.0, ttl.total_seconds())
        self._clock = clock
        self._new_id = new_id
        self._slots = asyncio.Semaphore(workers)
        self._write_lock = asyncio.Lock()
        self._jobs: dict[str, Job] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Loads the stored jobs: those in flight when the process stopped become
        `failed: interrupted`; expired ones are deleted. An unreadable store is logged,
        not fatal."""
        try:
            records = await to_thread.run_sync(self._store.load_all)
        except JobStoreError as exc:  # the service still starts; /readyz reports the data dir
            log.error("stored jobs not loaded", extra={"error": str(exc)})
            records = []
        now = self._clock()
        for record in records:
            try:
                job = job_from_json(record)
            except ValueError as exc:
                log.warning("skipping corrupt job record", extra={"error": str(exc)})
                continue
            self._jobs[job.id] = job
            if job.state in IN_FLIGHT:
                self._jobs[job.id] = job.finish(
                    "failed", now, reason="interrupted", message=INTERRUPTED_MESSAGE
                )
                await self._persist_quietly(job.id)
        await self.sweep()
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def close(self) -> None:
        """Stops the sweeper and every job; their records stay in flight, so the next
        start marks them interrupted."""
        tasks = [*self._tasks.values(), *([self._sweeper] if self._sweeper else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._sweeper = None

    async def submit(self, request: CompactRequest, sent: list[JsonDict]) -> Job:
        """Queues a compaction of `request`; `sent` are its messages as JSON in the
        request's format (what `apply` will compare the agent's list with)."""
        hashes, sha = await to_thread.run_sync(lambda: (message_hashes(sent), archive_sha256(sent)))
        await self.sweep()
        session = request.session_id
        if session is not None:
            for other in self._jobs.values():
                if other.session_id == session and other.state in IN_FLIGHT:
                    raise SessionBusyError(other.id)
        in_flight = sum(1 for j in self._jobs.values() if j.state in IN_FLIGHT)
        if in_flight >= self._workers + self._queue_limit:  # this one would have to wait
            raise QueueFullError(self._queue_limit)
        job = Job(
            id=self._new_id(),
            session_id=session,
            state="queued",
            format=request.format,
            created_at=self._clock(),
            sent_count=len(sent),
            sent_sha256=sha,
            sent_hashes=hashes,
        )
        self._jobs[job.id] = job
        try:
            await self._persist(job.id)
        except JobStoreError:
            self._jobs.pop(job.id, None)
            raise
        self._tasks[job.id] = asyncio.create_task(self._run(job.id, request))
        log.info("compaction job queued", extra={"job": job.id, "session_id": session})
        return job

    async def get(self, job_id: str) -> Job | None:
        await self.sweep()
        return self._jobs.get(job_id)

    async def cancel(self, job_id: str) -> Job | None:
        """Cancels a job in flight (→ `cancelled`); a finished job is forgotten (its record
        deleted) and returned as it was. None when there is no such job."""
        job = await self.get(job_id)
        if job is None:
            return None
        if job.state in IN_FLIGHT:
            self._jobs[job_id] = job.finish("cancelled", self._clock(), reason="cancelled")
            task = self._tasks.pop(job_id, None)
            if task is not None:
                task.cancel()
            await self._persist(job_id)
            return self._jobs[job_id]
        del self._jobs[job_id]
        await self._delete(job_id)
        return job

    async def apply(self, job_id: str, current: list[JsonDict]) -> Applied | None:
        """The agent's `current` list (JSON in the job's format) with the sent prefix
        swapped for the result. Raises `JobNotDoneError`, `PrefixMismatchError` or
        `SeamError`; None
        when there is no such job. Nothing is changed on the server."""
        job = await self.get(job_id)
        if job is None:
            return None
        if job.state != "done":
            raise JobNotDoneError(job.state)
        index = await to_thread.run_sync(first_difference, job.sent_hashes, current)
        if index is not None:
            raise PrefixMismatchError(index, len(current))
        messages = swap_prefix(job, current)
        if job.replaces_message_count:
            broken = await to_thread.run_sync(seam_violations, messages, job.format)
            if broken:
                raise SeamError(broken)
        return Applied(
            job=job,
            messages=messages,
            replaced_message_count=job.replaces_message_count or 0,
            kept_message_count=len(current) - job.sent_count,
        )

    async def sweep(self) -> None:
        """Forgets finished jobs older than the time to live and deletes their records."""
        now = self._clock()
        expired = [j.id for j in self._jobs.values() if is_expired(j, now, self._ttl)]
        for job_id in expired:
            del self._jobs[job_id]
        for job_id in expired:
            try:
                await self._delete(job_id)
            except JobStoreError as exc:
                log.warning("expired job not deleted", extra={"job": job_id, "error": str(exc)})

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval)
            await self.sweep()

    async def _run(self, job_id: str, request: CompactRequest) -> None:
        try:
            async with self._slots:
                job = self._jobs.get(job_id)
                if job is None or job.state != "queued":
                    return
                self._jobs[job_id] = replace(job, state="running")
                await self._persist_quietly(job_id)
                try:
                    # A job waits for a summary slot; only /compact gets `busy`.
                    result = await self._service.compact(replace(request, background=True))
                except InvalidConversationError as exc:
                    await self._finish(
                        job_id, "failed", reason="invalid_conversation", message=str(exc)
                    )
                except Exception as exc:
                    log.exception("compaction job failed", extra={"job": job_id})
                    message = f"{type(exc).__name__}: {exc}"
                    await self._finish(job_id, "failed", reason="error", message=message)
                else:
                    await self._finish(job_id, "done", result=result_json(result))
        finally:
            if self._tasks.get(job_id) is asyncio.current_task():
                del self._tasks[job_id]

    async def _finish(
        self,
        job_id: str,
        state: JobState,
        *,
        reason: str | None = None,
        message: str | None = None,
        result: JsonDict | None = None,
    ) -> None:
        job = self._jobs.get(job_id)
        if job is None or job.state != "running":
            return  # cancelled meanwhile
        now = self._clock()
        self._jobs[job_id] = job.finish(state, now, reason=reason, message=message, result=result)
        await self._persist_quietly(job_id)
        log.info("compaction job finished", extra={"job": job_id, "state": state})

    async def _persist(self, job_id: str) -> None:
        """Writes the job's latest version (every change is followed by a write, so the
        last write is always the latest state)."""
        async with self._write_lock:
            job = self._jobs.get(job_id)
            if job is not None:
                await to_thread.run_sync(self._store.save, job_to_json(job))

    async def _delete(self, job_id: str) -> None:
        """Deletes the record of a job already forgotten in memory. Under the write lock, so
        a write of the job still in flight finishes first and cannot bring the file back."""
        async with self._write_lock:
            await to_thread.run_sync(self._store.delete, job_id)

    async def _persist_quietly(self, job_id: str) -> None:
        try:
            await self._persist(job_id)
        except JobStoreError as exc:
            log.error("job record not written", extra={"job": job_id, "error": str(exc)})
