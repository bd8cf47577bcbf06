"""Submitting a job: one in flight per session (across replicas), at most `queue_limit`
waiting for a worker, its record (and request, with a queue) written before it runs."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from anyio import to_thread

from app.core.errors import InvalidRequestError
from app.core.sessions import (
    IN_FLIGHT,
    Job,
    JobQueue,
    JobStoreError,
    archive_sha256,
    job_to_json,
    message_hashes,
)
from app.service.jobs.errors import JsonDict, QueueFullError, SessionBusyError
from app.service.jobs.leasing import Leases
from app.service.jobs.running import Runner
from app.service.jobs.stored import request_to_json
from app.service.jobs.table import JobTable, to_the_end
from app.service.prepared import CompactRequest

log = logging.getLogger("context_compact.jobs")


class Submissions:
    def __init__(
        self, table: JobTable, runner: Runner, leases: Leases, new_id: Callable[[], str]
    ) -> None:
        self.table = table
        self.runner = runner
        self.leases = leases
        self.new_id = new_id

    async def submit(self, request: CompactRequest, sent: list[JsonDict]) -> Job:
        """Queues a compaction of `request`; `sent` are its messages as JSON in the
        request's format (what `apply` will compare the agent's list with)."""
        table = self.table
        try:
            hashes, sha = await to_thread.run_sync(
                lambda: (message_hashes(sent), archive_sha256(sent))
            )
        except ValueError as exc:
            raise InvalidRequestError("messages", str(exc)) from None
        await table.sweep_memory()
        session = request.session_id
        if session is not None:
            self._check_session_here(session)
        if session is not None and table.queue is None:
            elsewhere = await self._session_job_elsewhere(session)
            if elsewhere is not None:
                raise SessionBusyError(elsewhere)
            self._check_session_here(session)  # again: a submit here may have won meanwhile
        if table.room() <= 0:  # this one would have to wait
            raise QueueFullError(table.policy.queue_limit)
        now = table.clock()
        job = Job(
            id=self.new_id(),
            session_id=session,
            state="queued",
            format=request.format,
            created_at=now,
            sent_count=len(sent),
            sent_sha256=sha,
            sent_hashes=hashes,
            owner=table.instance_id,
            heartbeat_at=now,
        )
        if table.queue is not None:  # in memory once the database accepted it
            await self._create(table.queue, job, request)
            table.jobs[job.id] = job
        else:
            await self._write(job, session)
        self.runner.start(job.id, request)
        log.info("compaction job queued", extra={"job": job.id, "session_id": session})
        return job

    async def _write(self, job: Job, session: str | None) -> None:
        """The job's record, then the session's index entry (see `Leases.sweep`); neither
        is left behind when one fails."""
        table = self.table
        table.jobs[job.id] = job
        try:
            await table.persist(job.id)
            if session is not None:  # after the record: see `sweep`
                await to_thread.run_sync(table.store.set_session_job, session, job.id)
        except JobStoreError:
            table.jobs.pop(job.id, None)
            await table.delete_quietly(job.id)
            raise

    def _check_session_here(self, session: str) -> None:
        for other in self.table.jobs.values():
            if other.session_id == session and other.state in IN_FLIGHT:
                raise SessionBusyError(other.id)

    async def _session_job_elsewhere(self, session: str) -> str | None:
        """The id of the session's job in flight on another live replica, if any: one read
        of the session index and one of the record it names."""
        job_id = await to_thread.run_sync(self.table.store.session_job, session)
        if job_id is None or job_id in self.table.jobs:
            return None
        job = await self.leases.load(job_id)
        return job.id if job is not None and job.state in IN_FLIGHT else None

    async def _create(self, queue: JobQueue, job: Job, request: CompactRequest) -> None:
        """Writes a new job with its request; the store refuses a second job in flight
        for the session (`SessionBusyError`, after taking over that job if its replica
        died)."""
        async with self.table.write_lock:
            busy = await to_the_end(
                lambda args: queue.create(*args), (job_to_json(job), request_to_json(request))
            )
        if busy is not None:
            with contextlib.suppress(JobStoreError):
                await self.leases.load(busy)  # an abandoned job is taken over here
            raise SessionBusyError(busy)
