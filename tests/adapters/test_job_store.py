from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.job_store import FileJobStore
from app.core.json_numbers import LiteralFloat, LiteralInt, dumps
from app.core.sessions.jobs import JobStoreError


def test_saved_jobs_load_back_and_replace_older_versions(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    store.save({"id": "job-1", "state": "queued"})
    store.save({"id": "job-1", "state": "done"})
    store.save({"id": "job-2", "state": "running"})
    assert store.load_all() == [
        {"id": "job-1", "state": "done"},
        {"id": "job-2", "state": "running"},
    ]
    assert sorted(p.name for p in (tmp_path / "jobs").iterdir()) == ["job-1.json", "job-2.json"]


def test_an_empty_data_dir_has_no_jobs(tmp_path: Path) -> None:
    assert FileJobStore(str(tmp_path / "missing")).load_all() == []


def test_corrupt_and_foreign_files_are_skipped(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    store.save({"id": "job-1", "state": "done"})
    jobs = tmp_path / "jobs"
    (jobs / "broken.json").write_text("{not json")
    (jobs / "other.json").write_text('{"id": "someone-else"}')
    (jobs / ".job-3.abc.tmp").write_text("{}")
    (jobs / "notes.txt").write_text("x")
    assert store.load_all() == [{"id": "job-1", "state": "done"}]


def test_delete_removes_the_record_and_tolerates_missing_ones(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    store.save({"id": "job-1"})
    store.delete("job-1")
    store.delete("job-1")
    store.delete("../escape")
    assert store.load_all() == []


def test_an_invalid_id_is_never_written(tmp_path: Path) -> None:
    with pytest.raises(JobStoreError, match="invalid job id"):
        FileJobStore(str(tmp_path)).save({"id": "../x"})


def test_a_data_dir_that_is_a_file_fails_with_a_job_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    store = FileJobStore(str(blocker))
    with pytest.raises(JobStoreError, match="job write failed"):
        store.save({"id": "job-1"})
    with pytest.raises(JobStoreError, match="unreadable"):
        store.load_all()


def test_load_reads_one_record_and_none_when_missing_or_corrupt(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    store.save({"id": "job-1", "state": "done"})
    (tmp_path / "jobs" / "job-2.json").write_text("{not json")
    assert store.load("job-1") == {"id": "job-1", "state": "done"}
    assert store.load("job-2") is None
    assert store.load("job-3") is None
    assert store.load("../escape") is None


def test_a_cancel_request_is_a_file_beside_the_record_deleted_with_it(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    store.save({"id": "job-1", "state": "running"})
    assert store.cancel_requested("job-1") is False
    store.request_cancel("job-1")
    assert store.cancel_requested("job-1") is True
    assert store.load_all() == [{"id": "job-1", "state": "running"}]
    store.delete("job-1")
    assert store.cancel_requested("job-1") is False
    assert list((tmp_path / "jobs").iterdir()) == []


def test_the_session_index_names_the_latest_job_of_each_session(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    assert store.session_job("s1") is None
    assert store.session_jobs() == {}
    store.set_session_job("s1", "job-1")
    store.set_session_job("s1", "job-2")
    store.set_session_job("s2", "job-3")
    assert store.session_job("s1") == "job-2"
    assert store.session_jobs() == {"s1": "job-2", "s2": "job-3"}
    store.delete_session("s1", "job-1")  # replaced since: kept
    assert store.session_job("s1") == "job-2"
    store.delete_session("s1", "job-2")
    assert store.session_jobs() == {"s2": "job-3"}
    with pytest.raises(JobStoreError, match="invalid session or job id"):
        store.set_session_job("../s", "job-1")


def test_a_jobs_result_keeps_its_numbers_as_sent(tmp_path: Path) -> None:
    store = FileJobStore(str(tmp_path))
    numbers = [LiteralInt(0, "-0"), LiteralInt(10**30), LiteralFloat(float("inf"), "1e309")]
    store.save({"id": "job-1", "result": {"messages": [{"role": "user", "n": numbers}]}})
    (loaded,) = store.load_all()
    assert dumps(loaded) == (
        b'{"id":"job-1","result":{"messages":[{"role":"user","n":[-0,1' + b"0" * 30 + b",1e309]}]}}"
    )
