from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.adapters.job_store import FileJobStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.decide import Basis
from app.core.ports import SummaryRequest
from app.core.provider.dialects import dump_as
from app.core.request_context import DEADLINE, deadline_at
from app.core.sessions.ids import archive_sha256
from app.core.sessions.jobs import SEAM_USER_MESSAGE, Job, JobState
from app.service.compaction import CompactRequest
from app.service.jobs import (
    JobManager,
    JobNotDoneError,
    JobPolicy,
    PrefixMismatchError,
    QueueFullError,
    SessionBusyError,
    request_from_json,
    request_to_json,
)
from tests.builders import (
    FakeSummarizer,
    assistant,
    bulk_round,
    parse,
    read_round,
    system,
    tool_result,
    tool_use,
    user,
)
from tests.service.test_compaction import make_service

pytestmark = pytest.mark.anyio

CONVERSATION: list[dict[str, Any]] = [
    system("You are a coding agent."),
    user("Fix the bug in a.py."),
    *bulk_round(),
    *read_round("a.py", "old a"),
    assistant("Done."),
]


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class Gate:
    """A summarizer that waits until the test opens it."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.started = 0

    async def __call__(self, request: SummaryRequest) -> str:
        self.started += 1
        await self.opened.wait()
        return "SUMMARY"


ManagerFactory = Callable[..., Any]


@pytest.fixture
async def manager_for(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> AsyncIterator[ManagerFactory]:
    managers: list[JobManager] = []
    ids = iter(f"job-{i}" for i in range(1000))

    async def make(summarizer: Any = None, **options: Any) -> JobManager:
        service = make_service(tokenizer, summarizer=FakeSummarizer(summarizer or Gate()))
        clock = options.pop("clock", Clock())
        store = FileJobStore(str(tmp_path))
        manager = JobManager(
            service, store, JobPolicy(**options), clock=clock, new_id=lambda: next(ids)
        )
        await manager.start()
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        await manager.close()


def request(
    messages: list[dict[str, Any]] = CONVERSATION, *, force: bool = True, session: str | None = None
) -> tuple[CompactRequest, list[dict[str, Any]]]:
    parsed = parse(messages)
    return CompactRequest(messages=parsed, force=force, session_id=session), dump_as(
        parsed, "anthropic"
    )


async def submit(manager: JobManager, **kwargs: Any) -> Job:
    return await manager.submit(*request(**kwargs))


async def wait_for(manager: JobManager, job_id: str, state: JobState) -> Job:
    for _ in range(200):
        job = await manager.get(job_id)
        assert job is not None
        if job.state == state:
            return job
        await asyncio.sleep(0.005)
    raise AssertionError(f"job {job_id} never became {state}; it is {job.state}")


async def test_a_job_goes_from_queued_to_running_to_done(manager_for: ManagerFactory) -> None:
    gate = Gate()
    manager = await manager_for(gate)
    job = await submit(manager)
    assert job.state == "queued"
    assert job.sent_count == len(CONVERSATION)
    assert job.sent_sha256 == archive_sha256(CONVERSATION)
    await wait_for(manager, job.id, "running")
    gate.opened.set()
    done = await wait_for(manager, job.id, "done")
    assert done.result is not None
    assert done.result["compacted"] is True
    assert done.result["summary"] == "SUMMARY"
    assert done.replaces_message_count == len(CONVERSATION)
    assert done.finished_at is not None


async def test_a_job_below_the_threshold_is_done_and_replaces_nothing(
    manager_for: ManagerFactory,
) -> None:
    manager = await manager_for()
    job = await submit(manager, force=False)
    done = await wait_for(manager, job.id, "done")
    assert done.result is not None
    assert done.result["compacted"] is False
    assert done.replaces_message_count == 0
    current = [*CONVERSATION, user("more")]
    applied = await manager.apply(job.id, current)
    assert applied is not None
    assert applied.messages == current
    assert applied.replaced_message_count == 0


async def test_a_broken_conversation_fails_the_job_with_invalid_conversation(
    manager_for: ManagerFactory,
) -> None:
    manager = await manager_for()
    job = await submit(manager, messages=[user("a"), user("b"), assistant("c")], force=False)
    failed = await wait_for(manager, job.id, "failed")
    assert failed.reason == "invalid_conversation"
    assert failed.message is not None
    assert "messages[1]" in failed.message
    assert failed.result is None


async def test_an_unexpected_error_fails_the_job_with_its_reason(
    manager_for: ManagerFactory,
) -> None:
    def boom(request: SummaryRequest) -> str:
        raise RuntimeError("disk on fire")

    manager = await manager_for(boom)
    job = await submit(manager)
    failed = await wait_for(manager, job.id, "failed")
    assert failed.reason == "error"
    assert failed.message == "RuntimeError: disk on fire"


@pytest.mark.parametrize(("deadline", "left"), [(10.0, 9.0), (3.0, 2.4), (None, None)])
async def test_a_job_s_blocking_calls_see_its_deadline_less_the_answer_reserve(
    manager_for: ManagerFactory, deadline: float | None, left: float | None
) -> None:
    seen: list[float | None] = []

    def look(request: SummaryRequest) -> str:
        moment = DEADLINE.get()
        seen.append(None if moment is None else moment - time.monotonic())
        return "SUMMARY"

    manager = await manager_for(look, deadline=deadline)
    with deadline_at(time.monotonic() + 0.05):  # the submitting request's, soon over
        job = await submit(manager)
    await wait_for(manager, job.id, "done")
    if left is None:
        assert seen == [None]
    else:
        assert len(seen) == 1
        assert seen[0] is not None
        assert left - 0.5 < seen[0] <= left


async def test_cancel_stops_a_running_job(manager_for: ManagerFactory) -> None:
    gate = Gate()
    manager = await manager_for(gate)
    job = await submit(manager)
    await wait_for(manager, job.id, "running")
    cancelled = await manager.cancel(job.id)
    assert cancelled is not None
    assert cancelled.state == "cancelled"
    assert cancelled.reason == "cancelled"
    gate.opened.set()
    await asyncio.sleep(0.02)
    after = await manager.get(job.id)
    assert after is not None
    assert after.state == "cancelled"
    with pytest.raises(JobNotDoneError):
        await manager.apply(job.id, CONVERSATION)


async def test_cancel_of_a_queued_job_means_it_never_runs(manager_for: ManagerFactory) -> None:
    gate = Gate()
    manager = await manager_for(gate, workers=1)
    first = await submit(manager)
    second = await submit(manager)
    await wait_for(manager, first.id, "running")
    assert (await manager.cancel(second.id)) is not None
    gate.opened.set()
    await wait_for(manager, first.id, "done")
    assert gate.started == 1
    job = await manager.get(second.id)
    assert job is not None
    assert job.state == "cancelled"


async def test_cancel_of_a_finished_job_forgets_it(
    manager_for: ManagerFactory, tmp_path: Path
) -> None:
    manager = await manager_for(lambda r: "SUMMARY")
    job = await submit(manager)
    await wait_for(manager, job.id, "done")
    forgotten = await manager.cancel(job.id)
    assert forgotten is not None
    assert forgotten.state == "done"
    assert await manager.get(job.id) is None
    assert not (tmp_path / "jobs" / f"{job.id}.json").exists()
    assert await manager.cancel("job-unknown") is None


async def test_finished_jobs_expire_after_the_ttl(
    manager_for: ManagerFactory, tmp_path: Path
) -> None:
    clock = Clock()
    manager = await manager_for(lambda r: "SUMMARY", clock=clock, ttl=timedelta(minutes=5))
    job = await submit(manager)
    await wait_for(manager, job.id, "done")
    path = tmp_path / "jobs" / f"{job.id}.json"
    assert path.exists()
    clock.now += timedelta(minutes=4, seconds=59)
    assert await manager.get(job.id) is not None
    clock.now += timedelta(seconds=1)
    assert await manager.get(job.id) is None
    assert not path.exists()


class HeldDoneStore(FileJobStore):
    """Holds the write of a `done` record until the test releases it."""

    def __init__(self, data_dir: str) -> None:
        super().__init__(data_dir)
        self.holding = threading.Event()
        self.release = threading.Event()
        self.written = threading.Event()

    def save(self, job: dict[str, Any]) -> None:
        if job.get("state") == "done":
            self.holding.set()
            self.release.wait(timeout=5)
        super().save(job)
        if job.get("state") == "done":
            self.written.set()


async def test_an_expired_job_whose_last_write_is_still_running_stays_deleted(
    tokenizer: TiktokenTokenizer, tmp_path: Path
) -> None:
    clock = Clock()
    store = HeldDoneStore(str(tmp_path))
    service = make_service(tokenizer, summarizer=FakeSummarizer(lambda r: "SUMMARY"))
    manager = JobManager(service, store, JobPolicy(ttl=timedelta(minutes=5)), clock=clock)
    await manager.start()
    try:
        job = await submit(manager)
        await wait_for(manager, job.id, "done")
        for _ in range(500):
            if store.holding.is_set():
                break
            await asyncio.sleep(0.002)
        assert store.holding.is_set()
        clock.now += timedelta(minutes=6)
        sweep = asyncio.create_task(manager.get(job.id))
        await asyncio.sleep(0.05)  # let the sweep forget the job and try to delete it
        store.release.set()
        assert await sweep is None
        for _ in range(500):
            if store.written.is_set():
                break
            await asyncio.sleep(0.002)
        assert store.written.is_set()
        assert not (tmp_path / "jobs" / f"{job.id}.json").exists()
    finally:
        store.release.set()
        await manager.close()


async def test_the_timer_sweeps_expired_jobs(manager_for: ManagerFactory, tmp_path: Path) -> None:
    clock = Clock()
    manager = await manager_for(
        lambda r: "SUMMARY", clock=clock, ttl=timedelta(minutes=5), sweep_interval=0.01
    )
    job = await submit(manager)
    await wait_for(manager, job.id, "done")
    clock.now += timedelta(minutes=10)
    path = tmp_path / "jobs" / f"{job.id}.json"
    for _ in range(100):
        if not path.exists():
            break
        await asyncio.sleep(0.005)
    assert not path.exists()


async def test_a_restart_marks_running_jobs_interrupted_and_keeps_done_results(
    manager_for: ManagerFactory,
) -> None:
    gate = Gate()
    first = await manager_for(gate, workers=1)
    finished = await submit(first, session="s-done")
    gate.opened.set()
    await wait_for(first, finished.id, "done")
    gate.opened.clear()
    running = await submit(first, session="s-running")
    queued = await submit(first, session="s-queued")
    await wait_for(first, running.id, "running")
    await first.close()  # the process stops mid-job

    second = await manager_for(Gate())
    kept = await second.get(finished.id)
    assert kept is not None
    assert kept.state == "done"
    assert kept.result is not None
    assert kept.result["compacted"] is True
    for job_id in (running.id, queued.id):
        interrupted = await second.get(job_id)
        assert interrupted is not None
        assert interrupted.state == "failed"
        assert interrupted.reason == "interrupted"
    applied = await second.apply(finished.id, [*CONVERSATION, user("next")])
    assert applied is not None
    assert applied.messages[-1] == user("next")


async def test_a_session_has_at_most_one_job_in_flight(manager_for: ManagerFactory) -> None:
    gate = Gate()
    manager = await manager_for(gate)
    job = await submit(manager, session="s1")
    with pytest.raises(SessionBusyError) as busy:
        await submit(manager, session="s1")
    assert busy.value.job_id == job.id
    other = await submit(manager, session="s2")
    gate.opened.set()
    await wait_for(manager, job.id, "done")
    await wait_for(manager, other.id, "done")
    again = await submit(manager, session="s1")
    await wait_for(manager, again.id, "done")


async def test_workers_bound_the_jobs_running_at_once_and_the_queue_is_bounded(
    manager_for: ManagerFactory,
) -> None:
    gate = Gate()
    manager = await manager_for(gate, workers=2, queue_limit=1)
    jobs = [await submit(manager) for _ in range(2)]
    for job in jobs:
        await wait_for(manager, job.id, "running")
    waiting = await submit(manager)
    await asyncio.sleep(0.02)
    still = await manager.get(waiting.id)
    assert still is not None
    assert still.state == "queued"
    assert gate.started == 2
    with pytest.raises(QueueFullError):
        await submit(manager)
    gate.opened.set()
    await wait_for(manager, waiting.id, "done")
    assert gate.started == 3


async def test_apply_swaps_the_prefix_and_keeps_messages_appended_meanwhile(
    manager_for: ManagerFactory,
) -> None:
    manager = await manager_for(lambda r: "SUMMARY")
    job = await submit(manager)
    done = await wait_for(manager, job.id, "done")
    appended = [user("And b.py?"), assistant("Looking.")]
    applied = await manager.apply(job.id, [*CONVERSATION, *appended])
    assert applied is not None
    assert done.result is not None
    assert applied.messages == [*done.result["messages"], *appended]
    assert applied.replaced_message_count == len(CONVERSATION)
    assert applied.kept_message_count == 2


async def test_apply_refuses_an_edited_prefix_naming_the_first_index(
    manager_for: ManagerFactory,
) -> None:
    manager = await manager_for(lambda r: "SUMMARY")
    job = await submit(manager)
    await wait_for(manager, job.id, "done")
    edited = [*CONVERSATION, user("next")]
    edited[2] = assistant("I changed my mind.")
    with pytest.raises(PrefixMismatchError) as mismatch:
        await manager.apply(job.id, edited)
    assert mismatch.value.index == 2
    with pytest.raises(PrefixMismatchError) as shorter:
        await manager.apply(job.id, CONVERSATION[:3])
    assert shorter.value.index == 3


async def test_apply_refuses_a_job_that_is_not_done(manager_for: ManagerFactory) -> None:
    manager = await manager_for(Gate())
    job = await submit(manager)
    with pytest.raises(JobNotDoneError) as not_done:
        await manager.apply(job.id, CONVERSATION)
    assert not_done.value.state in ("queued", "running")
    assert await manager.apply("job-unknown", CONVERSATION) is None


async def test_apply_puts_a_user_turn_before_a_kept_assistant_message(
    manager_for: ManagerFactory,
) -> None:
    manager = await manager_for(lambda r: "SUMMARY")
    call = tool_use("read_file", path="b.py")
    # sent in a tool loop, right before the next model call: the result ends with the
    # summary's acknowledgement, and the model's reply comes after it
    sent = [*CONVERSATION, user("And b.py?"), assistant(call), tool_result(call["id"], "b")]
    job = await manager.submit(*request(sent))
    done = await wait_for(manager, job.id, "done")
    reply = assistant("Read b.py.")
    applied = await manager.apply(job.id, [*sent, reply])
    assert applied is not None
    assert done.result is not None
    assert applied.messages == [*done.result["messages"], SEAM_USER_MESSAGE, reply]
    assert applied.kept_message_count == 1


async def test_apply_after_a_kept_request_needs_no_seam(manager_for: ManagerFactory) -> None:
    """Sent with the user's new request last, the result keeps it last: the model's
    reply follows it as it is."""
    manager = await manager_for(lambda r: "SUMMARY")
    sent = [*CONVERSATION, user("And b.py?")]  # sent right before the next model call
    job = await manager.submit(*request(sent))
    done = await wait_for(manager, job.id, "done")
    reply = assistant("Reading b.py.", tool_use("read_file", path="b.py"))
    applied = await manager.apply(job.id, [*sent, reply])
    assert done.result is not None
    assert done.result["messages"][-1] == user("And b.py?")
    assert applied.messages == [*done.result["messages"], reply]
    assert applied.kept_message_count == 1


async def test_a_job_sent_before_its_tool_ran_compacts_nothing_and_applies_cleanly(
    manager_for: ManagerFactory,
) -> None:
    """The compaction declines (`pending_tool_calls`), so no tool result is orphaned."""
    manager = await manager_for(lambda r: "SUMMARY")
    call = tool_use("read_file", path="b.py")
    sent = [*CONVERSATION, user("And b.py?"), assistant(call)]  # sent before the tool ran
    job = await manager.submit(*request(sent))
    done = await wait_for(manager, job.id, "done")
    assert done.result is not None
    assert (done.result["compacted"], done.result["reason"]) == (False, "pending_tool_calls")
    current = [*sent, tool_result(call["id"], "b")]
    applied = await manager.apply(job.id, current)
    assert applied.messages == current


async def test_a_queue_limit_of_zero_still_runs_jobs_on_free_workers(
    manager_for: ManagerFactory,
) -> None:
    gate = Gate()
    manager = await manager_for(gate, workers=1, queue_limit=0)
    job = await submit(manager)
    with pytest.raises(QueueFullError):
        await submit(manager)
    gate.opened.set()
    await wait_for(manager, job.id, "done")
    await submit(manager)


def test_a_stored_request_keeps_what_its_threshold_decision_counts_from() -> None:
    basis = Basis({"input_tokens": 160_900}, "and then?", "anthropic")
    sent = CompactRequest(messages=parse([user("hi")]), basis=basis)
    again = request_from_json(request_to_json(sent))
    assert again.basis == basis
    stored_before = request_to_json(sent)
    del stored_before["basis"]
    assert request_from_json(stored_before).basis == Basis()
