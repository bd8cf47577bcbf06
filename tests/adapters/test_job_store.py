from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.job_store import FileJobStore
from app.core.jobs import JobStoreError


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
