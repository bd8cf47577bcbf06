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

`JobManager` is the face of the parts, one module each: `submitting` (`Submissions`),
`running` (`Runner`), `leasing` (`Leases`: lease, sweep, take-over), `cancelling`, over the
jobs held here and their writes (`table.JobTable`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime

from anyio import to_thread

from app.core.sessions import (
    Job,
    JobQueue,
    JobStore,
    first_difference,
    seam_violations,
    swap_prefix,
)
from app.service.clock import time_sortable_id, utc_now
from app.service.compaction import CompactionService
from app.service.jobs.cancelling import cancel
from app.service.jobs.errors import (
    Applied,
    JobNotDoneError,
    JsonDict,
    PrefixMismatchError,
    SeamError,
)
from app.service.jobs.leasing import Leases
from app.service.jobs.running import Runner
from app.service.jobs.submitting import Submissions
from app.service.jobs.table import JobPolicy, JobTable
from app.service.prepared import CompactRequest

log = logging.getLogger("context_compact.jobs")
DEFAULT_POLICY = JobPolicy()


def new_instance_id() -> str:
    """Names this replica in the records of the jobs it runs: host, process, and a random
    part, so two processes on one host, or a restarted one, never share an id."""
    return f"{platform.node() or 'replica'}-{os.getpid()}-{secrets.token_hex(3)}"


class JobManager:
    """Runs compactions in the background. `start` and `close` belong to the app lifespan."""

    def __init__(
        self,
        service: CompactionService,
        store: JobStore,
        policy: JobPolicy = DEFAULT_POLICY,
        *,
        queue: JobQueue | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = time_sortable_id,
        instance_id: str | None = None,
    ) -> None:
        """`queue`: the store again when it can hand jobs over (the database's)."""
        self.instance_id = instance_id or new_instance_id()
        self._table = JobTable(store, queue, clock, self.instance_id, policy)
        self._runner = Runner(self._table, service)
        self._leases = Leases(self._table, self._runner)
        self._submissions = Submissions(self._table, self._runner, self._leases, new_id)
        self._timers: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Sweeps the store (abandoned jobs become `failed: interrupted`, expired ones are
        deleted; jobs of live replicas are left alone), then starts the sweep and heartbeat
        timers. An unreadable store is logged, not fatal."""
        await self.sweep()
        self._timers = [
            asyncio.create_task(self._every(self._table.policy.sweep_every, self.sweep)),
            asyncio.create_task(self._every(self._table.policy.heartbeat_every, self.heartbeat)),
        ]

    async def close(self) -> None:
        """Stops the timers and every job; their records become `failed: interrupted` at
        once (if that write fails, the lease runs out and another replica says so)."""
        table = self._table
        tasks = [*table.tasks.values(), *self._timers]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        table.tasks.clear()
        self._timers = []
        await self._leases.interrupt_all(table.clock())
        table.jobs.clear()

    async def submit(self, request: CompactRequest, sent: list[JsonDict]) -> Job:
        """Queues a compaction of `request`; `sent` are its messages as JSON in the
        request's format (what `apply` will compare the agent's list with)."""
        return await self._submissions.submit(request, sent)

    async def get(self, job_id: str) -> Job | None:
        """The job, from memory when this replica runs it, else from the store. Raises
        `JobStoreError` when the store cannot be read."""
        await self._table.sweep_memory()
        job = self._table.jobs.get(job_id)
        if job is not None:
            return job
        return await self._leases.load(job_id)

    async def cancel(self, job_id: str) -> Job | None:
        """Cancels a job in flight (→ `cancelled`); a finished job is forgotten (its record
        deleted) and returned as it was. A job that another live replica runs is asked to
        stop: answered as it is, with `cancel_requested`; its owner cancels it at its next
        heartbeat (unless it finished first). None when there is no such job."""
        job = await self.get(job_id)
        return None if job is None else await cancel(self._table, job)

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
        """Deletes expired jobs, declares abandoned ones interrupted (or takes them over),
        drops stale session index entries (`Leases.sweep`)."""
        await self._leases.sweep()

    async def heartbeat(self) -> None:
        """Renews the leases of the jobs in flight here (`Leases.heartbeat`)."""
        await self._leases.heartbeat()

    async def _every(self, seconds: float, action: Callable[[], Awaitable[None]]) -> None:
        """Runs `action` on a timer; a failure is logged and the timer goes on (a dead
        heartbeat would let other replicas declare this one's jobs interrupted)."""
        while True:
            await asyncio.sleep(seconds)
            try:
                await action()
            except Exception:
                log.exception("job timer failed", extra={"action": action.__name__})
