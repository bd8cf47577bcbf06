"""Background compaction: jobs on a bounded worker pool, kept in the shared data dir.

States: `queued` (waiting for one of the `workers` slots) → `running` → `done` (the result,
compacted or not), `failed` (with a reason: `invalid_conversation`, `error`,
`deadline_exceeded` when it ran longer than its `deadline`, as a `/compact` would have, or
`interrupted` when its replica stopped while the job was in flight) or `cancelled`.
A session has at most one job in flight; at most `queue_limit` jobs wait for a slot.

Several replicas may share one store. A job belongs to the replica that accepted it (its
`owner`), which holds it in memory while it is in flight and renews its lease
(`heartbeat_at`) every `lease / 3`; every change is written through. Everything else is
read from the store: any replica answers for any job, and a job whose owner stopped
renewing is declared `failed: interrupted` by whichever replica next looks at it. Only the
owner writes a live job's record; another replica asks it to cancel through the store.
Finished jobs expire `ttl` after finishing; whoever sweeps first deletes them.

With a `JobQueue` (the database store) three things change: the store, not a read, refuses
a second job in flight for a session; the request is stored with the job; and a job whose
owner stopped renewing is claimed by another replica and run again from its request to the
end, instead of being declared interrupted. A clean stop hands its jobs over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import platform
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from anyio import to_thread
from pydantic import TypeAdapter, ValidationError

from app.core.compaction import CompactOptions, result_json
from app.core.errors import (
    ArchiveError,
    CompactError,
    InvalidConversationError,
    InvalidRequestError,
)
from app.core.ids import archive_sha256
from app.core.jobs import (
    IN_FLIGHT,
    Job,
    JobQueue,
    JobState,
    JobStore,
    JobStoreError,
    JobTakenOverError,
    first_difference,
    is_abandoned,
    is_expired,
    job_from_json,
    job_to_json,
    message_hashes,
    seam_violations,
    swap_prefix,
)
from app.core.messages import Message, dump_messages
from app.core.request_context import DEADLINE, answer_reserve, deadline_at
from app.core.validate import Violation
from app.service.clock import time_sortable_id, utc_now
from app.service.compaction import CompactionService, CompactRequest

log = logging.getLogger("context_compact.jobs")

JsonDict = dict[str, Any]
INTERRUPTED_MESSAGE = "the service stopped while the job was queued or running"


def new_instance_id() -> str:
    """Names this replica in the records of the jobs it runs: host, process, and a random
    part, so two processes on one host, or a restarted one, never share an id."""
    return f"{platform.node() or 'replica'}-{os.getpid()}-{secrets.token_hex(3)}"


class JobError(CompactError):
    """Base of the job manager's refusals, each with its HTTP answer."""


class SessionBusyError(JobError):
    status = 409
    code = "session_busy"
    field = "session_id"

    def __init__(self, job_id: str) -> None:
        super().__init__(f"the session already has a job in flight: {job_id}")
        self.job_id = job_id


class QueueFullError(JobError):
    status = 503
    code = "queue_full"
    retry_after_seconds = 5

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} jobs are already waiting for a worker")


class JobNotDoneError(JobError):
    status = 409
    code = "job_not_done"
    field = "job_id"

    def __init__(self, state: JobState) -> None:
        super().__init__(f"the job is {state}, not done")
        self.state = state


class PrefixMismatchError(JobError):
    status = 409
    code = "prefix_mismatch"

    def __init__(self, index: int, current_length: int) -> None:
        what = "is missing" if index >= current_length else "differs from the one sent"
        super().__init__(f"messages[{index}] {what}")
        self.index = index

    def details(self) -> list[tuple[str, str]]:
        return [(f"messages[{self.index}]", self.message)]


class SeamError(JobError):
    """The kept messages do not fit after the compacted ones (the job was sent between a
    tool call and its result): applying would break a provider rule."""

    status = 409
    code = "invalid_seam"

    def __init__(self, broken: list[Violation]) -> None:
        super().__init__("; ".join(f"messages[{v.index}] {v}" for v in broken))
        self.violations = broken

    def details(self) -> list[tuple[str, str]]:
        return [(f"messages[{v.index}]", str(v)) for v in self.violations]


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
        lease: timedelta = timedelta(seconds=30),
        sweep_interval: float | None = None,
        heartbeat_interval: float | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = time_sortable_id,
        instance_id: str | None = None,
        queue: JobQueue | None = None,
        deadline: float | None = None,
    ) -> None:
        self._service = service
        self._store = store
        # With a queue (the database store), jobs carry their request and a job whose
        # replica died is taken over and run to the end; without one (files), it ends
        # `failed: interrupted`.
        self._queue = queue
        self._workers = workers
        self._queue_limit = queue_limit
        self._ttl = ttl
        self._lease = lease
        self._sweep_interval = sweep_interval or min(60.0, ttl.total_seconds())
        self._heartbeat_interval = heartbeat_interval or lease.total_seconds() / 3
        self._clock = clock
        self._new_id = new_id
        self.instance_id = instance_id or new_instance_id()
        self._deadline = deadline
        self._slots = asyncio.Semaphore(workers)
        self._write_lock = asyncio.Lock()
        # The jobs this replica runs (and finished ones whose last write failed).
        self._jobs: dict[str, Job] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._timers: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Sweeps the store (abandoned jobs become `failed: interrupted`, expired ones are
        deleted; jobs of live replicas are left alone), then starts the sweep and heartbeat
        timers. An unreadable store is logged, not fatal."""
        await self.sweep()
        self._timers = [
            asyncio.create_task(self._every(self._sweep_interval, self.sweep)),
            asyncio.create_task(self._every(self._heartbeat_interval, self.heartbeat)),
        ]

    async def close(self) -> None:
        """Stops the timers and every job; their records become `failed: interrupted` at
        once (if that write fails, the lease runs out and another replica says so)."""
        tasks = [*self._tasks.values(), *self._timers]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._timers = []
        now = self._clock()
        in_flight = [j for j in self._jobs.values() if j.state in IN_FLIGHT]
        if self._queue is not None and in_flight:
            await self._release(self._queue, [j.id for j in in_flight])
            in_flight = []
        for job in in_flight:
            self._jobs[job.id] = _interrupted(job, now)
            await self._persist_quietly(job.id)
        self._jobs.clear()

    async def submit(self, request: CompactRequest, sent: list[JsonDict]) -> Job:
        """Queues a compaction of `request`; `sent` are its messages as JSON in the
        request's format (what `apply` will compare the agent's list with)."""
        try:
            hashes, sha = await to_thread.run_sync(
                lambda: (message_hashes(sent), archive_sha256(sent))
            )
        except ValueError as exc:
            raise InvalidRequestError("messages", str(exc)) from None
        await self._sweep_memory()
        session = request.session_id
        if session is not None:
            self._check_session_here(session)
        if session is not None and self._queue is None:
            elsewhere = await self._session_job_elsewhere(session)
            if elsewhere is not None:
                raise SessionBusyError(elsewhere)
            self._check_session_here(session)  # again: a submit here may have won meanwhile
        in_flight = sum(1 for j in self._jobs.values() if j.state in IN_FLIGHT)
        if in_flight >= self._workers + self._queue_limit:  # this one would have to wait
            raise QueueFullError(self._queue_limit)
        now = self._clock()
        job = Job(
            id=self._new_id(),
            session_id=session,
            state="queued",
            format=request.format,
            created_at=now,
            sent_count=len(sent),
            sent_sha256=sha,
            sent_hashes=hashes,
            owner=self.instance_id,
            heartbeat_at=now,
        )
        if self._queue is not None:  # in memory once the database accepted it
            await self._create(self._queue, job, request)
            self._jobs[job.id] = job
            self._tasks[job.id] = asyncio.create_task(self._run(job.id, request))
            log.info("compaction job queued", extra={"job": job.id, "session_id": session})
            return job
        self._jobs[job.id] = job
        try:
            await self._persist(job.id)
            if session is not None:  # after the record: see `sweep`
                await to_thread.run_sync(self._store.set_session_job, session, job.id)
        except JobStoreError:
            self._jobs.pop(job.id, None)
            await self._delete_quietly(job.id)
            raise
        self._tasks[job.id] = asyncio.create_task(self._run(job.id, request))
        log.info("compaction job queued", extra={"job": job.id, "session_id": session})
        return job

    async def get(self, job_id: str) -> Job | None:
        """The job, from memory when this replica runs it, else from the store. Raises
        `JobStoreError` when the store cannot be read."""
        await self._sweep_memory()
        job = self._jobs.get(job_id)
        if job is not None:
            return job
        return await self._load(job_id)

    async def cancel(self, job_id: str) -> Job | None:
        """Cancels a job in flight (→ `cancelled`); a finished job is forgotten (its record
        deleted) and returned as it was. A job that another live replica runs is asked to
        stop: answered as it is, with `cancel_requested`; its owner cancels it at its next
        heartbeat (unless it finished first). None when there is no such job."""
        job = await self.get(job_id)
        if job is None:
            return None
        if job_id in self._jobs:
            if job.state in IN_FLIGHT:
                return await self._cancel_here(job_id, quietly=False)
            del self._jobs[job_id]
        elif job.state in IN_FLIGHT:
            await to_thread.run_sync(self._store.request_cancel, job_id)
            log.info("compaction job cancel requested", extra={"job": job_id, "owner": job.owner})
            return replace(job, cancel_requested=True)
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
        """Reads every record: deletes finished jobs older than the time to live, declares
        abandoned ones interrupted, and drops session index entries whose job is gone.
        Several replicas may sweep at once; deleting twice is fine."""
        await self._sweep_memory()
        try:
            # The index is listed before the records are read, and a submit writes the
            # record before the index: an entry listed here has its record read below.
            index = await to_thread.run_sync(self._store.session_jobs)
            records = await to_thread.run_sync(self._store.load_all)
        except JobStoreError as exc:  # the service goes on; /readyz reports the data dir
            log.error("stored jobs not swept", extra={"error": str(exc)})
            return
        now = self._clock()
        kept = set(self._jobs)
        for record in records:
            try:
                job = job_from_json(record)
            except ValueError as exc:
                log.warning("skipping corrupt job record", extra={"error": str(exc)})
                continue
            if job.id in self._jobs:
                continue
            if is_expired(job, now, self._ttl):
                await self._delete_quietly(job.id)
                continue
            if is_abandoned(job, now, self._lease) and self._queue is None:
                await self._interrupt(job, now)
            kept.add(job.id)
        if self._queue is not None:
            await self._take_over_abandoned(self._queue)
        for session, job_id in index.items():
            if job_id not in kept:
                try:
                    await to_thread.run_sync(self._store.delete_session, session, job_id)
                except JobStoreError as exc:
                    log.warning("session index not cleaned", extra={"error": str(exc)})

    async def heartbeat(self) -> None:
        """Renews the lease of every job in flight here (one write each), and cancels
        those another replica asked to cancel."""
        for job_id in [j.id for j in self._jobs.values() if j.state in IN_FLIGHT]:
            requested = await to_thread.run_sync(self._store.cancel_requested, job_id)
            job = self._jobs.get(job_id)
            if job is None or job.state not in IN_FLIGHT:
                continue  # finished or cancelled meanwhile
            if requested:
                await self._cancel_here(job_id, quietly=True)
            else:
                self._jobs[job_id] = replace(job, heartbeat_at=self._clock())
                await self._persist_quietly(job_id)
        if self._queue is not None:
            await self._take_over_abandoned(self._queue)

    async def _every(self, seconds: float, action: Callable[[], Awaitable[None]]) -> None:
        """Runs `action` on a timer; a failure is logged and the timer goes on (a dead
        heartbeat would let other replicas declare this one's jobs interrupted)."""
        while True:
            await asyncio.sleep(seconds)
            try:
                await action()
            except Exception:
                log.exception("job timer failed", extra={"action": action.__name__})

    async def _sweep_memory(self) -> None:
        """Forgets the finished jobs still in memory (their last write is in progress or
        failed) once older than the time to live, and deletes their records."""
        now = self._clock()
        expired = [j.id for j in self._jobs.values() if is_expired(j, now, self._ttl)]
        for job_id in expired:
            del self._jobs[job_id]
        for job_id in expired:
            await self._delete_quietly(job_id)

    def _check_session_here(self, session: str) -> None:
        for other in self._jobs.values():
            if other.session_id == session and other.state in IN_FLIGHT:
                raise SessionBusyError(other.id)

    async def _session_job_elsewhere(self, session: str) -> str | None:
        """The id of the session's job in flight on another live replica, if any: one read
        of the session index and one of the record it names."""
        job_id = await to_thread.run_sync(self._store.session_job, session)
        if job_id is None or job_id in self._jobs:
            return None
        job = await self._load(job_id)
        return job.id if job is not None and job.state in IN_FLIGHT else None

    async def _load(self, job_id: str) -> Job | None:
        """A job from the store, as of now: None when expired (and deleted), interrupted
        when its owner's lease ran out."""
        record, cancel = await to_thread.run_sync(
            lambda: (self._store.load(job_id), self._store.cancel_requested(job_id))
        )
        if record is None:
            return None
        try:
            job = job_from_json(record)
        except ValueError as exc:
            log.warning("skipping corrupt job record", extra={"job": job_id, "error": str(exc)})
            return None
        now = self._clock()
        if is_expired(job, now, self._ttl):
            await self._delete_quietly(job_id)
            return None
        if is_abandoned(job, now, self._lease):
            if self._queue is None:
                return await self._interrupt(job, now)
            taken = await self._take_over_abandoned(self._queue, job_id)
            if taken:
                return taken[0]
        return replace(job, cancel_requested=cancel and job.state in IN_FLIGHT)

    async def _interrupt(self, job: Job, now: datetime) -> Job:
        """Declares a job of a replica that stopped renewing its lease interrupted."""
        interrupted = _interrupted(job, now)
        try:
            async with self._write_lock:
                await _to_the_end(self._store.save, job_to_json(interrupted))
        except JobStoreError as exc:
            log.error("job record not written", extra={"job": job.id, "error": str(exc)})
        log.warning("compaction job interrupted", extra={"job": job.id, "owner": job.owner})
        return interrupted

    async def _cancel_here(self, job_id: str, *, quietly: bool) -> Job:
        job = self._jobs[job_id].finish("cancelled", self._clock(), reason="cancelled")
        self._jobs[job_id] = job
        task = self._tasks.pop(job_id, None)
        if task is not None:
            task.cancel()
        await self._write_final(job_id, quietly=quietly)
        log.info("compaction job cancelled", extra={"job": job_id})
        return job

    async def _run(self, job_id: str, request: CompactRequest) -> None:
        DEADLINE.set(None)  # a job outlives the request that submitted it (this task's copy)
        try:
            async with self._slots:
                job = self._jobs.get(job_id)
                if job is None or job.state != "queued":
                    return
                self._jobs[job_id] = replace(job, state="running")
                await self._persist_quietly(job_id)
                # The job's archive has the job's id: a run of it again (its replica died)
                # first removes what the dead run wrote, then writes its own.
                await self._discard_archive(job_id)
                try:
                    # A job waits for a summary slot; only /compact gets `busy`.
                    async with asyncio.timeout(self._deadline):
                        with _calls_bounded_by(self._deadline):
                            result = await self._service.compact(
                                replace(request, background=True, archive_id=job_id)
                            )
                except asyncio.CancelledError:
                    if job_id in self._jobs:  # cancelled here, not given up to another replica
                        await asyncio.shield(self._discard_archive(job_id))
                    raise
                except TimeoutError:
                    await self._discard_archive(job_id)
                    message = f"the compaction took longer than {self._deadline:g}s"
                    await self._finish(
                        job_id, "failed", reason="deadline_exceeded", message=message
                    )
                except InvalidConversationError as exc:
                    await self._finish(
                        job_id, "failed", reason="invalid_conversation", message=str(exc)
                    )
                except Exception as exc:
                    log.exception("compaction job failed", extra={"job": job_id})
                    message = f"{type(exc).__name__}: {exc}"
                    await self._finish(job_id, "failed", reason="error", message=message)
                else:
                    await self._finish(job_id, "done", result=result_json(result, request.forms))
        finally:
            if self._tasks.get(job_id) is asyncio.current_task():
                del self._tasks[job_id]

    async def _discard_archive(self, job_id: str) -> None:
        """Removes the archive of a run of this job that did not finish (a missing one is
        already gone). A failure is logged: the next write of that id is then refused,
        and the run answers `archive_failed`."""
        try:
            await self._service.steps.discard(job_id)
        except ArchiveError as exc:
            log.error("job archive not removed", extra={"job": job_id, "error": str(exc)})

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
        await self._write_final(job_id, quietly=True)
        log.info("compaction job finished", extra={"job": job_id, "state": state})

    async def _write_final(self, job_id: str, *, quietly: bool) -> None:
        """Writes a finished job and hands it over to the store, the source of truth for
        finished jobs (so a DELETE on another replica is seen here too). A job whose write
        failed stays in memory, answered from here until it expires."""
        try:
            await self._persist(job_id)
        except JobTakenOverError:
            self._give_up(job_id)  # the other replica's record is the job now
            if not quietly:
                raise
            return
        except JobStoreError as exc:
            if not quietly:
                raise
            log.error("job record not written", extra={"job": job_id, "error": str(exc)})
            return
        job = self._jobs.get(job_id)
        if job is not None and job.state not in IN_FLIGHT:
            del self._jobs[job_id]

    async def _persist(self, job_id: str) -> None:
        """Writes the job's latest version (every change is followed by a write, so the
        last write is always the latest state)."""
        async with self._write_lock:
            job = self._jobs.get(job_id)
            if job is not None:
                await _to_the_end(self._store.save, job_to_json(job))

    async def _delete(self, job_id: str) -> None:
        """Deletes the record of a job already forgotten in memory. Under the write lock, so
        a write of the job still in flight finishes first and cannot bring the file back."""
        async with self._write_lock:
            await _to_the_end(self._store.delete, job_id)

    async def _delete_quietly(self, job_id: str) -> None:
        try:
            await self._delete(job_id)
        except JobStoreError as exc:
            log.warning("job record not deleted", extra={"job": job_id, "error": str(exc)})

    async def _persist_quietly(self, job_id: str) -> None:
        try:
            await self._persist(job_id)
        except JobTakenOverError:
            self._give_up(job_id)
        except JobStoreError as exc:
            log.error("job record not written", extra={"job": job_id, "error": str(exc)})

    def _give_up(self, job_id: str) -> None:
        """Stops running a job another replica took over (this one stalled past its lease):
        the other replica's record is the job now."""
        self._jobs.pop(job_id, None)
        task = self._tasks.pop(job_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        log.warning("compaction job taken over by another replica", extra={"job": job_id})

    async def _create(self, queue: JobQueue, job: Job, request: CompactRequest) -> None:
        """Writes a new job with its request; the store refuses a second job in flight
        for the session (`SessionBusyError`, after taking over that job if its replica
        died)."""
        async with self._write_lock:
            busy = await _to_the_end(
                lambda args: queue.create(*args), (job_to_json(job), request_to_json(request))
            )
        if busy is not None:
            with contextlib.suppress(JobStoreError):
                await self._load(busy)  # an abandoned job is taken over here
            raise SessionBusyError(busy)

    async def _take_over_abandoned(self, queue: JobQueue, job_id: str | None = None) -> list[Job]:
        """Claims jobs whose replica stopped renewing its lease (as many as this replica
        has room for, or just `job_id`) and runs them here from their stored request."""
        in_flight = sum(1 for j in self._jobs.values() if j.state in IN_FLIGHT)
        room = self._workers + self._queue_limit - in_flight
        now = self._clock()
        try:
            claimed = await to_thread.run_sync(
                lambda: queue.take_over(self.instance_id, now, now - self._lease, room, job_id)
            )
        except JobStoreError as exc:
            log.error("abandoned jobs not taken over", extra={"error": str(exc)})
            return []
        jobs = []
        for record, request_data in claimed:
            try:
                job = job_from_json(record)
            except ValueError as exc:
                log.error("job not taken over", extra={"job": record.get("id"), "error": str(exc)})
                continue
            self._jobs[job.id] = job
            try:
                request = request_from_json(request_data)
            except ValueError as exc:  # fail it, or every replica would claim it again
                self._jobs[job.id] = job.finish("failed", now, reason="error", message=str(exc))
                await self._write_final(job.id, quietly=True)
                continue
            self._tasks[job.id] = asyncio.create_task(self._run(job.id, request))
            log.warning(
                "compaction job taken over", extra={"job": job.id, "session_id": job.session_id}
            )
            jobs.append(job)
        return jobs

    async def _release(self, queue: JobQueue, job_ids: list[str]) -> None:
        try:
            await to_thread.run_sync(queue.release, self.instance_id, job_ids)
        except JobStoreError as exc:  # the lease runs out instead
            log.error("jobs not released", extra={"error": str(exc)})


async def _to_the_end(write: Callable[[Any], Any], arg: Any) -> Any:
    """Runs a store write in a thread and, if the caller is cancelled meanwhile (a job
    cancelled, the app closing), still waits for it before giving up the write lock: a
    write left running would land after the next one (a `running` after `interrupted`)."""
    task = asyncio.ensure_future(to_thread.run_sync(write, arg))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise


def _interrupted(job: Job, now: datetime) -> Job:
    return job.finish("failed", now, reason="interrupted", message=INTERRUPTED_MESSAGE)


_MESSAGES = TypeAdapter(list[Message])


def request_to_json(request: CompactRequest) -> JsonDict:
    """What a job stores of its request, so another replica can run it again."""
    return {
        "messages": dump_messages(request.messages),
        "options": request.options.model_dump(mode="json", exclude_unset=True),
        "session_id": request.session_id,
        "force": request.force,
        "instructions": request.instructions,
        "format": request.format,
        "reason": request.reason,
    }


def request_from_json(data: JsonDict) -> CompactRequest:
    """Raises `ValueError` for a stored request that is not one."""
    try:
        return CompactRequest(
            messages=_MESSAGES.validate_python(data["messages"]),
            options=CompactOptions.model_validate(data.get("options") or {}),
            session_id=data.get("session_id"),
            force=bool(data.get("force")),
            instructions=data.get("instructions"),
            format=data.get("format") or "anthropic",
            reason=data.get("reason"),
        )
    except (KeyError, TypeError, ValidationError) as exc:
        raise ValueError(f"stored request is unreadable: {exc}") from exc


def _calls_bounded_by(seconds: float | None) -> contextlib.AbstractContextManager[None]:
    """A job's blocking calls (the database) end before its deadline, as a request's do."""
    if seconds is None:
        return contextlib.nullcontext()
    return deadline_at(time.monotonic() + seconds - answer_reserve(seconds))
