import os
from pathlib import Path

import pytest

from app.adapters.files import ensure_dirs, final_names


def test_ensure_dirs_creates_each_level_private_and_returns_the_deepest(tmp_path: Path) -> None:
    deepest = ensure_dirs(str(tmp_path), "sessions", "s-1", "compactions")
    assert deepest == str(tmp_path / "sessions" / "s-1" / "compactions")
    modes = [
        (tmp_path / p).stat().st_mode & 0o777
        for p in ("sessions", "sessions/s-1", "sessions/s-1/compactions")
    ]
    assert modes == [0o700, 0o700, 0o700]


def test_ensure_dirs_leaves_existing_directories_as_they_are(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir(mode=0o755)
    assert ensure_dirs(str(tmp_path), "jobs") == str(tmp_path / "jobs")
    assert (tmp_path / "jobs").stat().st_mode & 0o777 == 0o755


def test_final_names_are_sorted_and_leave_out_temp_files_and_other_suffixes(
    tmp_path: Path,
) -> None:
    for name in ("b.json", "a.json", ".a.json.1f2e.tmp", ".hidden.json", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert final_names(str(tmp_path), ".json") == ["a.json", "b.json"]


def test_final_names_of_a_missing_directory_are_none(tmp_path: Path) -> None:
    assert final_names(str(tmp_path / "never-written"), ".json") == []


def test_final_names_of_a_file_in_place_of_the_directory_raise(tmp_path: Path) -> None:
    (tmp_path / "jobs").write_text("")
    with pytest.raises(NotADirectoryError):
        final_names(os.path.join(tmp_path, "jobs"), ".json")
