"""The data directory: free space as `statvfs` reports it, and the sweep of killed
writers' temp files in every directory beneath it."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from app.adapters.data_dir import DataDirectory
from app.adapters.files import replace_durably

OLD = (0, 0)  # 1970: older than any safe age


def statvfs(free_blocks: int, block: int = 4096) -> Any:
    def fake(path: str) -> Any:
        return SimpleNamespace(f_bavail=free_blocks, f_frsize=block)

    return fake


def test_room_is_the_bytes_an_unprivileged_writer_may_use(tmp_path: Path) -> None:
    data = DataDirectory(str(tmp_path), min_free_bytes=8192, statvfs=statvfs(2))
    assert (data.free_bytes(), data.has_room()) == (8192, True)
    full = DataDirectory(str(tmp_path), min_free_bytes=8192, statvfs=statvfs(1))
    assert (full.free_bytes(), full.has_room()) == (4096, False)


def test_a_minimum_of_zero_is_never_checked(tmp_path: Path) -> None:
    assert DataDirectory(str(tmp_path), statvfs=statvfs(0)).has_room() is True


def test_a_file_system_that_cannot_be_asked_has_no_room(tmp_path: Path) -> None:
    def failing(path: str) -> Any:
        raise OSError(5, "EIO")

    data = DataDirectory(str(tmp_path), min_free_bytes=1, statvfs=failing)
    assert (data.free_bytes(), data.has_room()) == (None, False)


def test_a_data_dir_not_created_yet_is_asked_about_its_parent(tmp_path: Path) -> None:
    asked: list[str] = []

    def recording(path: str) -> Any:
        asked.append(path)
        return SimpleNamespace(f_bavail=10, f_frsize=1)

    DataDirectory(str(tmp_path / "data" / "not" / "yet"), statvfs=recording).free_bytes()
    assert asked == [str(tmp_path)]


def test_the_real_file_system_has_room_for_a_byte(tmp_path: Path) -> None:
    data = DataDirectory(str(tmp_path), min_free_bytes=1)
    assert data.has_room() is True
    assert DataDirectory(str(tmp_path), min_free_bytes=2**62).has_room() is False


def test_old_temps_go_in_every_directory_and_nothing_else_does(tmp_path: Path) -> None:
    root = tmp_path / "data"
    places = ["archives", "jobs", "jobs/sessions", "sessions/s1/compactions", "sessions/s1/seen"]
    kept: list[str] = []
    for place in places:
        directory = root / place
        directory.mkdir(parents=True)
        replace_durably(str(directory), "final.json", b"{}")  # a complete write
        old = directory / ".x.0123456789abcdef.tmp"
        old.write_bytes(b'{"half": ')
        os.utime(old, OLD)
        young = directory / ".y.0123456789abcdef.tmp"
        young.write_bytes(b'{"half": ')  # another replica's write in flight
        kept += [f"{place}/final.json", f"{place}/{young.name}"]
    hidden_final = root / "archives" / ".notes"  # a dot file that is not a temp
    hidden_final.write_text("x")
    os.utime(hidden_final, OLD)
    kept.append("archives/.notes")

    removed = DataDirectory(str(root)).sweep_temps()

    assert removed == sorted(f"{place}/.x.0123456789abcdef.tmp" for place in places)
    left = sorted(str(Path(d, f).relative_to(root)) for d, _, files in os.walk(root) for f in files)
    assert left == sorted(kept)


def test_the_sweep_does_not_follow_a_symlinked_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / ".victim.0123456789abcdef.tmp"
    victim.write_bytes(b"x")
    os.utime(victim, OLD)
    root = tmp_path / "data"
    root.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    assert DataDirectory(str(root)).sweep_temps() == []
    assert victim.exists()


def test_a_missing_data_dir_sweeps_nothing(tmp_path: Path) -> None:
    assert DataDirectory(str(tmp_path / "missing")).sweep_temps() == []
