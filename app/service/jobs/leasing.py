"""Leases and take-over: what one replica does for jobs in a store it shares.

The owner of a job renews its lease (`heartbeat_at`) every `lease / 3` and cancels the
jobs another replica asked to cancel. Whoever reads a job whose owner stopped renewing
declares it `failed: interrupted` (files) or, with a `JobQueue`, claims it and runs it
again from its stored request. A sweep deletes expired jobs and stale index entries.

A database that stops answering stops every replica's renewals with it: a lease that ran
out then says nothing about its owner. So a replica whose last look for jobs to claim
failed claims nothing until a whole lease has passed since (its looks fail all along a
freeze, every `lease / 3`: the owners get at least that long after the thaw to renew), and
an owner first writes again the finished jobs whose last write failed (a job that ended
during the freeze) before it looks: a finished job is never run a second time.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from anyio import to_thread

from app.core.sessions import (
    IN_FLIGHT,
    Job,
    JobQueue,
    JobStoreError,
    is_abandoned,
    is_expired,
    job_from_json,
)
from app.service.jobs.cancelling import cancel_here
from app.service.jobs.errors import JsonDict
from app.service.jobs.running import Runner
from app.service.jobs.stored import request_from_json
from app.service.jobs.table import JobTable, interrupted_at

log = logging.getLogger("context_compact.jobs")


class Leases:
    def __init__(self, table: JobTable, runner: Runner) -> None:
        self.table = table
        self.runner = runner
        self.store_failed_at: datetime | None = None  # the last failed look for jobs to claim

    async def load(self, job_id: str) -> Job | None:
        """A job from the store, as of now: None when expired (and deleted), interrupted
        (or taken over, with a queue) when its owner's lease ran out."""
        table = self.table
        record, cancel = await to_thread.run_sync(
            lambda: (table.store.load(job_id), table.store.cancel_requested(job_id))
        )
        if record is None:
            return None
        try:
            job = job_from_json(record)
        except ValueError as exc:
            log.warning("skipping corrupt job record", extra={"job": job_id, "error": str(exc)})
            return None
        now = table.clock()
        if is_expired(job, now, table.policy.ttl):
            await table.delete_quietly(job_id)
            return None
        if is_abandoned(job, now, table.policy.lease):
            if table.queue is None:
                return await table.interrupt(job, now)
            taken = await self.take_over_abandoned(table.queue, job_id)
            if taken:
                return taken[0]
        return replace(job, cancel_requested=cancel and job.state in IN_FLIGHT)

    async def sweep(self) -> None:
        """Reads every record: deletes finished jobs older than the time to live, declares
        abandoned ones interrupted, and drops session index entries whose job is gone.
        Several replicas may sweep at once; deleting twice is fine."""
        table = self.table
        await table.sweep_memory()
        try:
            # The index is listed before the records are read, and a submit writes the
            # record before the index: an entry listed here has its record read below.
            index = await to_thread.run_sync(table.store.session_jobs)
            records = await to_thread.run_sync(table.store.load_all)
        except JobStoreError as exc:  # the service goes on; /readyz reports the data dir
            log.error("stored jobs not swept", extra={"error": str(exc)})
            return
        now = table.clock()
        kept = set(table.jobs)
        for record in records:
            job = _readable(record)
            if job is None or job.id in table.jobs:
                continue
            if is_expired(job, now, table.policy.ttl):
                await table.delete_quietly(job.id)
                continue
            if is_abandoned(job, now, table.policy.lease) and table.queue is None:
                await table.interrupt(job, now)
            kept.add(job.id)
        if table.queue is not None:
            await self.write_finished()
            await self.take_over_abandoned(table.queue)
        for session, job_id in index.items():
            if job_id not in kept:
                try:
                    await to_thread.run_sync(table.store.delete_session, session, job_id)
                except JobStoreError as exc:
                    log.warning("session index not cleaned", extra={"error": str(exc)})

    async def heartbeat(self) -> None:
        """Renews the lease of every job in flight here (one write each), and cancels
        those another replica asked to cancel."""
        table = self.table
        for job_id in [j.id for j in table.in_flight()]:
            requested = await to_thread.run_sync(table.store.cancel_requested, job_id)
            job = table.jobs.get(job_id)
            if job is None or job.state not in IN_FLIGHT:
                continue  # finished or cancelled meanwhile
            if requested:
                await cancel_here(table, job_id, quietly=True)
            else:
                table.jobs[job_id] = replace(job, heartbeat_at=table.clock())
                await table.persist_quietly(job_id)
        if table.queue is not None:
            await self.write_finished()
            await self.take_over_abandoned(table.queue)

    async def write_finished(self) -> None:
        """Writes again the finished jobs held here because their last write failed."""
        table = self.table
        for job_id in [j.id for j in table.jobs.values() if j.state not in IN_FLIGHT]:
            await table.write_final(job_id, quietly=True)

    async def take_over_abandoned(self, queue: JobQueue, job_id: str | None = None) -> list[Job]:
        """Claims jobs whose replica stopped renewing its lease (as many as this replica
        has room for, or just `job_id`) and runs them here from their stored request;
        none within a lease of a failed look (the module's docstring says why)."""
        table = self.table
        room = table.room()
        now = table.clock()
        failed = self.store_failed_at
        if failed is not None and now - failed < table.policy.lease:
            return []
        try:
            claimed = await to_thread.run_sync(
                lambda: queue.take_over(
                    table.instance_id, now, now - table.policy.lease, room, job_id
                )
            )
        except JobStoreError as exc:
            self.store_failed_at = table.clock()  # when it failed: a stalled look took long
            log.error("abandoned jobs not taken over", extra={"error": str(exc)})
            return []
        jobs = []
        for record, request_data in claimed:
            try:
                job = job_from_json(record)
            except ValueError as exc:
                log.error("job not taken over", extra={"job": record.get("id"), "error": str(exc)})
                continue
            held = table.jobs.get(job.id)
            if held is not None and held.state not in IN_FLIGHT:  # it ended here: say so
                table.jobs[job.id] = replace(held, owner=table.instance_id)
                await table.write_final(job.id, quietly=True)
                continue
            table.jobs[job.id] = job
            try:
                request = request_from_json(request_data)
            except ValueError as exc:  # fail it, or every replica would claim it again
                table.jobs[job.id] = job.finish("failed", now, reason="error", message=str(exc))
                await table.write_final(job.id, quietly=True)
                continue
            self.runner.start(job.id, request)
            log.warning(
                "compaction job taken over", extra={"job": job.id, "session_id": job.session_id}
            )
            jobs.append(job)
        return jobs

    async def release(self, queue: JobQueue, job_ids: list[str]) -> None:
        """Hands this replica's jobs in flight over at once (a clean stop)."""
        try:
            await to_thread.run_sync(queue.release, self.table.instance_id, job_ids)
        except JobStoreError as exc:  # the lease runs out instead
            log.error("jobs not released", extra={"error": str(exc)})

    async def interrupt_all(self, now: datetime) -> None:
        """At a stop: the jobs in flight here are handed over (queue) or interrupted."""
        table = self.table
        in_flight = table.in_flight()
        if table.queue is not None and in_flight:
            await self.release(table.queue, [j.id for j in in_flight])
            return
        for job in in_flight:
            table.jobs[job.id] = interrupted_at(job, now)
            await table.persist_quietly(job.id)


def _readable(record: JsonDict) -> Job | None:
    try:
        return job_from_json(record)
    except ValueError as exc:
        log.warning("skipping corrupt job record", extra={"error": str(exc)})
        return None
