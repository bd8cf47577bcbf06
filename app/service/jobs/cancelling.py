"""Cancelling a job: here when this replica runs it, through the store when another one
does (its owner cancels it at its next heartbeat), forgotten when it has finished."""

from __future__ import annotations

import logging
from dataclasses import replace

from anyio import to_thread

from app.core.sessions import IN_FLIGHT, Job
from app.service.jobs.table import JobTable

log = logging.getLogger("context_compact.jobs")


async def cancel(table: JobTable, job: Job) -> Job:
    """Cancels `job` (as read just now) if in flight (→ `cancelled`); a finished job is
    forgotten (its record deleted) and returned as it was. A job that another live
    replica runs is asked to stop: answered as it is, with `cancel_requested`."""
    if job.id in table.jobs:
        if job.state in IN_FLIGHT:
            return await cancel_here(table, job.id, quietly=False)
        del table.jobs[job.id]
    elif job.state in IN_FLIGHT:
        await to_thread.run_sync(table.store.request_cancel, job.id)
        log.info("compaction job cancel requested", extra={"job": job.id, "owner": job.owner})
        return replace(job, cancel_requested=True)
    await table.delete(job.id)
    return job


async def cancel_here(table: JobTable, job_id: str, *, quietly: bool) -> Job:
    """Cancels a job this replica runs: its task stops, its record says `cancelled`."""
    job = table.jobs[job_id].finish("cancelled", table.clock(), reason="cancelled")
    table.jobs[job_id] = job
    task = table.tasks.pop(job_id, None)
    if task is not None:
        task.cancel()
    await table.write_final(job_id, quietly=quietly)
    log.info("compaction job cancelled", extra={"job": job_id})
    return job
