"""The retention at work: the sweep's cutoffs from the clock, a sweep at start and then
every `every` seconds, a failing sweep tried again; and the discard of an unused
compaction, its record first."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.adapters.archive_store import FileArchiveStore
from app.core.errors import RecordStoreError
from app.core.sessions.retention import RetentionPolicy, Stopped, SweepCounts, never
from app.service.retention import Discarder, Retention
from app.settings import Settings
from app.wiring.service import Stores
from tests.adapters.test_archive_store import archive
from tests.adapters.test_file_retention import Data, age
from tests.adapters.test_file_retention import retention as retention_of

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


class Sweeps:
    """A sweeper that remembers its cutoffs, fails when told, and says when it has
    swept `wanted` times."""

    def __init__(self, wanted: int = 1, fail: int = 0) -> None:
        self.calls: list[tuple[datetime | None, datetime]] = []
        self.wanted, self.fail = wanted, fail
        self.done = asyncio.Event()
        self.loop = asyncio.get_running_loop()

    def sweep(
        self, before: datetime | None, orphans_before: datetime, stopped: Stopped = never
    ) -> SweepCounts:
        self.calls.append((before, orphans_before))
        if len(self.calls) >= self.wanted:
            self.loop.call_soon_threadsafe(self.done.set)
        if len(self.calls) <= self.fail:
            raise OSError("disk gone")
        return SweepCounts(archives=1)


def test_the_cutoffs_are_the_retention_and_the_grace_before_now() -> None:
    policy = RetentionPolicy(keep=timedelta(days=30), grace=timedelta(seconds=420))
    assert policy.cutoffs(NOW) == (NOW - timedelta(days=30), NOW - timedelta(seconds=420))
    forever = RetentionPolicy(keep=timedelta(0), grace=timedelta(seconds=420))
    assert forever.cutoffs(NOW) == (None, NOW - timedelta(seconds=420))


@pytest.mark.anyio
async def test_a_sweep_at_start_and_again_every_period_a_failure_tried_again() -> None:
    sweeps = Sweeps(wanted=3, fail=1)
    policy = RetentionPolicy(timedelta(hours=12), timedelta(seconds=60), every=0.001)
    task = asyncio.create_task(Retention(sweeps, policy, clock=lambda: NOW).run())
    await asyncio.wait_for(sweeps.done.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sweeps.calls[:3] == [(NOW - timedelta(hours=12), NOW - timedelta(seconds=60))] * 3


@pytest.mark.anyio
async def test_a_period_of_zero_sweeps_at_start_only() -> None:
    sweeps = Sweeps()
    policy = RetentionPolicy(timedelta(days=1), timedelta(seconds=60), every=0)
    await asyncio.wait_for(Retention(sweeps, policy, clock=lambda: NOW).run(), 10)
    assert len(sweeps.calls) == 1


@pytest.mark.anyio
async def test_the_stores_sweep_the_data_directory_when_they_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COMPACT_RETENTION", "1h")
    monkeypatch.setenv("COMPACT_RETENTION_SWEEP_SECONDS", "0")
    data = Data(tmp_path)
    now = datetime.now(UTC)
    data.archive("00000000000000000001-aaaa", "s-1", "old", now - timedelta(hours=2))
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", now)
    data.archive("00000000000000000002-aaaa", "s-1", "new", now)
    data.record("00000000000000000002-rrrr", "s-1", "00000000000000000002-aaaa", now)
    stores = Stores(Settings(_env_file=None))  # type: ignore[call-arg]
    await stores.open()
    assert stores.sweeping is not None
    await asyncio.wait_for(stores.sweeping, 10)
    await stores.close()
    assert data.files("archives") == ["00000000000000000002-aaaa.json"]


class BrokenRecords:
    def withdraw(self, session_id: str, archive_id: str) -> None:
        raise RecordStoreError("record delete failed: EIO")


def test_a_discard_deletes_the_record_then_the_archive(tmp_path: Path) -> None:
    data = Data(tmp_path)
    data.archive("00000000000000000001-aaaa", "s-1", "standby", NOW)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", NOW)
    Discarder(data.archives, data.records).discard("s-1", "00000000000000000001-aaaa")
    assert data.files("archives") == []
    assert data.records.list("s-1") == []
    assert data.found("s-1", "standby") == []


def test_a_record_not_withdrawn_keeps_its_archive(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1"))
    age(tmp_path / "archives" / "00000000000000000001-aaaa.json", NOW)
    Discarder(store, BrokenRecords()).discard("s-1", "00000000000000000001-aaaa")
    assert store.load("00000000000000000001-aaaa") is not None


def test_a_stopped_sweep_ends_before_deleting_more(tmp_path: Path) -> None:
    data = Data(tmp_path)
    old = NOW - timedelta(days=40)
    data.archive("00000000000000000001-aaaa", "s-1", "old", old)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", old)
    policy = RetentionPolicy(timedelta(days=30), timedelta(seconds=420))
    retention = Retention(retention_of(tmp_path), policy, clock=lambda: NOW)
    retention.stop()
    assert retention.sweep() == SweepCounts()
    assert data.files("archives") == ["00000000000000000001-aaaa.json"]
