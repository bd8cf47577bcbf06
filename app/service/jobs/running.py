"""Running a job: one of the `workers` slots, the compaction within the job's deadline,
and its end (`done`, `failed` with a reason), written through."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace

from app.core.errors import ArchiveError, InvalidConversationError
from app.core.request_context import DEADLINE, answer_reserve, deadline_at
from app.core.result import result_json
from app.core.sessions import JobState
from app.service.compaction import CompactionService
from app.service.jobs.errors import JsonDict
from app.service.jobs.table import JobTable
from app.service.prepared import CompactRequest

log = logging.getLogger("context_compact.jobs")


class Runner:
    """Runs the jobs of one replica, at most `table.policy.workers` at once."""

    def __init__(self, table: JobTable, service: CompactionService):
        self.table = table
        self.service = service
        self.deadline = table.policy.deadline
        self.slots = asyncio.Semaphore(table.policy.workers)

    def start(self, job_id: str, request: CompactRequest) -> None:
        """Runs the job in a task of its own (it waits there for a worker slot)."""
        self.table.tasks[job_id] = asyncio.create_task(self.run(job_id, request))

    async def run(self, job_id: str, request: CompactRequest) -> None:
        DEADLINE.set(None)  # a job outlives the request that submitted it (this task's copy)
        table = self.table
        try:
            async with self.slots:
                job = table.jobs.get(job_id)
                if job is None or job.state != "queued":
                    return
                table.jobs[job_id] = replace(job, state="running")
                await table.persist_quietly(job_id)
                # The job's archive has the job's id: a run of it again (its replica died)
                # first removes what the dead run wrote, then writes its own.
                await self.discard_archive(job_id)
                await self._compact(job_id, request)
        finally:
            if table.tasks.get(job_id) is asyncio.current_task():
                del table.tasks[job_id]

    async def _compact(self, job_id: str, request: CompactRequest) -> None:
        try:
            # A job waits for a summary slot; only /compact gets `busy`.
            async with asyncio.timeout(self.deadline):
                with _calls_bounded_by(self.deadline):
                    result = await self.service.compact(
                        replace(request, background=True, archive_id=job_id)
                    )
        except asyncio.CancelledError:
            if job_id in self.table.jobs:  # cancelled here, not given up to another replica
                await asyncio.shield(self.discard_archive(job_id))
            raise
        except TimeoutError:
            await self.discard_archive(job_id)
            message = f"the compaction took longer than {self.deadline:g}s"
            await self.finish(job_id, "failed", reason="deadline_exceeded", message=message)
        except InvalidConversationError as exc:
            await self.finish(job_id, "failed", reason="invalid_conversation", message=str(exc))
        except Exception as exc:
            log.exception("compaction job failed", extra={"job": job_id})
            message = f"{type(exc).__name__}: {exc}"
            await self.finish(job_id, "failed", reason="error", message=message)
        else:
            done = result_json(result, request.forms, request.provider)
            await self.finish(job_id, "done", result=done)

    async def discard_archive(self, job_id: str) -> None:
        """Removes the archive of a run of this job that did not finish (a missing one is
        already gone). A failure is logged: the next write of that id is then refused,
        and the run answers `archive_failed`."""
        try:
            await self.service.steps.discard(job_id)
        except ArchiveError as exc:
            log.error("job archive not removed", extra={"job": job_id, "error": str(exc)})

    async def finish(
        self,
        job_id: str,
        state: JobState,
        *,
        reason: str | None = None,
        message: str | None = None,
        result: JsonDict | None = None,
    ) -> None:
        table = self.table
        job = table.jobs.get(job_id)
        if job is None or job.state != "running":
            return  # cancelled meanwhile
        now = table.clock()
        table.jobs[job_id] = job.finish(state, now, reason=reason, message=message, result=result)
        await table.write_final(job_id, quietly=True)
        log.info("compaction job finished", extra={"job": job_id, "state": state})


def _calls_bounded_by(seconds: float | None) -> contextlib.AbstractContextManager[None]:
    """A job's blocking calls (the database) end before its deadline, as a request's do."""
    if seconds is None:
        return contextlib.nullcontext()
    return deadline_at(time.monotonic() + seconds - answer_reserve(seconds))
