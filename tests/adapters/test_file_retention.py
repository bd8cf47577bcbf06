"""Retention on the file stores: archives, their recall entries and records older than the
retention go; an archive no record names goes once older than the grace; the rest stays,
and recall still finds it."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.adapters import record_store
from app.adapters.archive_store import FileArchiveStore
from app.adapters.file_retention import FileRetention
from app.adapters.record_store import FileRecordStore
from app.adapters.recorded_archives import RecordedArchives
from app.core.recall.terms import parse_query
from app.core.sessions.records import CompactionRecord
from app.core.sessions.retention import RetentionPolicy, SweepCounts
from app.service.retention import Retention
from tests.adapters.test_archive_store import archive

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
POLICY = RetentionPolicy(keep=timedelta(days=30), grace=timedelta(seconds=420))
OLD = NOW - timedelta(days=31)
YOUNG = NOW - timedelta(days=29)


def said(text: str) -> list[dict[str, object]]:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]


def record(record_id: str, session_id: str, archive_id: str | None) -> CompactionRecord:
    return CompactionRecord(
        id=record_id,
        session_id=session_id,
        timestamp="2026-11-01T12:00:00+00:00",
        reason="llm_call",
        strategy="full",
        outcome="compacted",
        message_count_before=4,
        message_count_after=2,
        tokens_before=900,
        tokens_after=300,
        compacted_message_ids=[],
        archive_id=archive_id,
    )


def age(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


class Data:
    """A data directory with archives and records written at chosen times."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.recorded = RecordedArchives(str(root), 420, clock=NOW.timestamp)
        self.archives = FileArchiveStore(str(root), recorded=self.recorded)
        self.records = FileRecordStore(str(root))

    def archive(self, archive_id: str, session: str | None, text: str, when: datetime) -> None:
        self.archives.save(archive(archive_id, session, said(text)))
        age(self.root / "archives" / f"{archive_id}.json", when)
        if session is not None:
            age(self.root / "archive_index" / f"{archive_id}.recall", when)
            age(self.root / "archive_index" / f"{session}.ids", when)

    def record(self, record_id: str, session: str, archive_id: str | None, when: datetime) -> None:
        self.records.append(record(record_id, session, archive_id))
        age(self.root / "sessions" / session / "compactions" / f"{record_id}.json", when)

    def found(self, session: str, query: str) -> list[str]:
        result = self.archives.search(session, parse_query(query), 10, lambda: 60.0)
        return [hit.archive_id for hit in result.hits]

    def files(self, directory: str) -> list[str]:
        path = self.root / directory
        return sorted(os.listdir(path)) if path.is_dir() else []


def sweep(root: Path, policy: RetentionPolicy = POLICY) -> SweepCounts:
    return Retention(retention(root), policy, clock=lambda: NOW).sweep()


def retention(root: Path) -> FileRetention:
    return FileRetention(str(root), RecordedArchives(str(root), 420, clock=NOW.timestamp))


def test_archives_their_indexes_and_records_older_than_the_retention_go(tmp_path: Path) -> None:
    data = Data(tmp_path)
    data.archive("00000000000000000001-aaaa", "s-1", "the old deploy key", OLD)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", OLD)
    data.archive("00000000000000000002-aaaa", "s-1", "the new deploy key", YOUNG)
    data.record("00000000000000000002-rrrr", "s-1", "00000000000000000002-aaaa", YOUNG)
    data.archive("00000000000000000003-aaaa", None, "no session", OLD)
    data.record("00000000000000000003-rrrr", "s-2", None, OLD)
    assert data.found("s-1", "deploy key") == [
        "00000000000000000002-aaaa",
        "00000000000000000001-aaaa",
    ]

    assert sweep(tmp_path) == SweepCounts(archives=2, records=2, orphans=0)

    assert data.files("archives") == ["00000000000000000002-aaaa.json"]
    # The session's list was appended to after the cutoff: kept, its stale line skipped.
    assert data.files("archive_index") == ["00000000000000000002-aaaa.recall", "s-1.ids"]
    assert data.files("sessions/s-1/compactions") == ["00000000000000000002-rrrr.json"]
    assert data.files("sessions") == ["s-1"]  # s-2's emptied directories are gone
    assert data.found("s-1", "deploy key") == ["00000000000000000002-aaaa"]
    assert [r.id for r in data.records.list("s-1")] == ["00000000000000000002-rrrr"]
    assert sweep(tmp_path) == SweepCounts()


def test_a_sessions_list_goes_once_all_its_archives_are_older(tmp_path: Path) -> None:
    data = Data(tmp_path)
    data.archive("00000000000000000001-aaaa", "s-1", "alpha", OLD)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", OLD)
    swept = retention(tmp_path)
    assert swept.recorded.named("s-1") == {"00000000000000000001-aaaa"}
    assert Retention(swept, POLICY, clock=lambda: NOW).sweep() == SweepCounts(
        archives=1, records=1, orphans=0
    )
    assert swept.recorded._named == {}  # nothing kept of a session swept whole
    assert data.files("archive_index") == []
    assert data.files("archives") == []
    assert data.found("s-1", "alpha") == []


def test_an_archive_no_record_names_goes_after_the_grace(tmp_path: Path) -> None:
    data = Data(tmp_path)
    late = NOW - timedelta(seconds=421)
    data.archive("00000000000000000001-aaaa", "s-1", "crashed compaction", late)
    data.archive("00000000000000000002-aaaa", "s-1", "running compaction", NOW)
    data.archive("00000000000000000003-aaaa", "s-1", "recorded compaction", late)
    data.record("00000000000000000003-rrrr", "s-1", "00000000000000000003-aaaa", late)
    data.archive("00000000000000000004-aaaa", None, "compaction without session", late)
    # Recall leaves the leftover out before any sweep; the running one is found (first:
    # its message is the shorter).
    assert data.found("s-1", "compaction") == [
        "00000000000000000002-aaaa",
        "00000000000000000003-aaaa",
    ]

    assert sweep(tmp_path) == SweepCounts(archives=0, records=0, orphans=1)

    assert data.files("archives") == [
        "00000000000000000002-aaaa.json",
        "00000000000000000003-aaaa.json",
        "00000000000000000004-aaaa.json",
    ]
    assert "00000000000000000001-aaaa.recall" not in data.files("archive_index")
    assert data.found("s-1", "compaction") == [
        "00000000000000000002-aaaa",
        "00000000000000000003-aaaa",
    ]


def test_a_record_written_after_a_sweep_read_the_sessions_records_still_counts(
    tmp_path: Path,
) -> None:
    data = Data(tmp_path)
    late = NOW - timedelta(seconds=421)
    swept = Retention(retention(tmp_path), POLICY, clock=lambda: NOW)
    data.archive("00000000000000000001-aaaa", "s-1", "first", late)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", late)
    data.archive("00000000000000000002-aaaa", "s-1", "second", NOW)
    assert swept.sweep() == SweepCounts()
    data.record("00000000000000000002-rrrr", "s-1", "00000000000000000002-aaaa", NOW)
    age(tmp_path / "archives" / "00000000000000000002-aaaa.json", late)
    assert swept.sweep() == SweepCounts()
    assert len(data.files("archives")) == 2


def test_a_retention_of_zero_keeps_everything_but_the_leftovers(tmp_path: Path) -> None:
    data = Data(tmp_path)
    data.archive("00000000000000000001-aaaa", "s-1", "ancient", NOW - timedelta(days=900))
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", OLD)
    data.archive("00000000000000000002-aaaa", "s-1", "crashed", OLD)
    forever = RetentionPolicy(keep=timedelta(0), grace=timedelta(seconds=420))
    assert sweep(tmp_path, forever) == SweepCounts(archives=0, records=0, orphans=1)
    assert data.files("archives") == ["00000000000000000001-aaaa.json"]
    assert data.files("sessions/s-1/compactions") == ["00000000000000000001-rrrr.json"]


def test_withdraw_deletes_only_the_record_naming_the_archive(tmp_path: Path) -> None:
    data = Data(tmp_path)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", NOW)
    data.record("00000000000000000002-rrrr", "s-1", "00000000000000000002-aaaa", NOW)
    data.records.withdraw("s-1", "00000000000000000001-aaaa")
    data.records.withdraw("s-1", "00000000000000000009-aaaa")  # none: nothing happens
    data.records.withdraw("s-9", "00000000000000000002-aaaa")
    assert [r.id for r in data.records.list("s-1")] == ["00000000000000000002-rrrr"]


def test_a_record_gone_since_the_listing_is_skipped_by_withdraw_and_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Two discards of one session run at once, and retention deletes records: a file
    listed then gone is no error, and the record wanted is still found."""
    data = Data(tmp_path)
    data.record("00000000000000000001-rrrr", "s-1", "00000000000000000001-aaaa", NOW)
    data.record("00000000000000000002-rrrr", "s-1", "00000000000000000002-aaaa", NOW)
    data.record("00000000000000000003-rrrr", "s-1", "00000000000000000003-aaaa", NOW)
    read = record_store.read_regular

    def vanishing(path: str) -> bytes | None:
        if path.endswith("00000000000000000003-rrrr.json"):
            raise FileNotFoundError(path)
        return read(path)

    monkeypatch.setattr(record_store, "read_regular", vanishing)
    data.records.withdraw("s-1", "00000000000000000001-aaaa")
    assert [r.id for r in data.records.list("s-1")] == ["00000000000000000002-rrrr"]
    assert caplog.records == []
