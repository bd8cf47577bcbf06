from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.adapters.record_store import FileRecordStore
from app.core.errors import RecordStoreError
from app.core.sessions.records import CompactionRecord


def record(record_id: str, session_id: str = "s1", outcome: str = "compacted") -> CompactionRecord:
    return CompactionRecord(
        id=record_id,
        session_id=session_id,
        timestamp="2026-11-23T12:00:00+00:00",
        reason="manual",
        strategy="prune",
        outcome=outcome,
        message_count_before=5,
        message_count_after=5,
        tokens_before=900,
        tokens_after=300,
        compacted_message_ids=["msg_1", "sha256:4e79873118cd9be7"],
        summary_message_id=None,
        archive_id="a1",
    )


def test_records_are_one_file_each_and_list_back_in_name_order(tmp_path: Path) -> None:
    store = FileRecordStore(str(tmp_path))
    store.append(record("002-b"))
    store.append(record("001-a", outcome="summarization_failed"))
    store.append(record("003-c", session_id="s2"))
    assert store.list("s1") == [record("001-a", outcome="summarization_failed"), record("002-b")]
    assert store.list("s2") == [record("003-c", session_id="s2")]
    files = tmp_path / "sessions" / "s1" / "compactions"
    assert sorted(p.name for p in files.iterdir()) == ["001-a.json", "002-b.json"]


def test_a_session_without_records_lists_none(tmp_path: Path) -> None:
    assert FileRecordStore(str(tmp_path)).list("never") == []
    assert FileRecordStore(str(tmp_path)).list("../etc") == []


def test_corrupt_and_temporary_files_are_skipped(tmp_path: Path) -> None:
    store = FileRecordStore(str(tmp_path))
    store.append(record("001-a"))
    files = tmp_path / "sessions" / "s1" / "compactions"
    (files / "002-b.json").write_text("{not json", encoding="utf-8")
    (files / ".003-c.json.1234.tmp").write_text("{}", encoding="utf-8")
    (files / "004-d.json").write_text('{"id": "004-d"}', encoding="utf-8")
    assert store.list("s1") == [record("001-a")]


def test_concurrent_appends_to_one_session_keep_every_record(tmp_path: Path) -> None:
    stores = [FileRecordStore(str(tmp_path)) for _ in range(2)]  # two replicas, one data dir
    threads = [
        threading.Thread(target=stores[i % 2].append, args=(record(f"{i:03d}-x"),))
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.id for r in stores[0].list("s1")] == [f"{i:03d}-x" for i in range(8)]


def test_an_invalid_id_is_refused_before_touching_the_disk(tmp_path: Path) -> None:
    with pytest.raises(RecordStoreError, match="invalid record or session id"):
        FileRecordStore(str(tmp_path)).append(record("001-a", session_id="../x"))
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_data_dir_is_an_archive_error(tmp_path: Path) -> None:
    (tmp_path / "sessions").write_text("a file where the directory should be", encoding="utf-8")
    with pytest.raises(RecordStoreError, match="record write failed"):
        FileRecordStore(str(tmp_path)).append(record("001-a"))
