"""A process SIGKILLed at random moments while archiving leaves, under final names, only
complete archives; its only debris is temp files, which the start-up sweep removes.

The writer is a forked child that saves ~1 MB archives in a loop (write, fsync, rename,
fsync the directory); the parent kills it after a seeded random delay, 30 times over one
data directory, then checks every file.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from app.adapters.archive_store import FileArchiveStore
from app.adapters.files import is_temp_name, remove_stale_temps
from app.core.ports import Archive, ArchiveRef
from app.core.sessions.ids import archive_sha256, new_archive_id
from tests.forking import fork

KILLS = 30
SEED = 20251123


def messages_for(archive_id: str) -> list[dict[str, Any]]:
    """~1 MB of messages that depend on the id, so a mixed-up file cannot pass."""
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{archive_id}:{i}:" + "x" * 8000,
        }
        for i in range(128)
    ]


def build(archive_id: str) -> Archive:
    messages = messages_for(archive_id)
    ref = ArchiveRef(
        id=archive_id,
        session_id="crash-test",
        message_count=len(messages),
        sha256=archive_sha256(messages),
    )
    return Archive(ref=ref, created_at="2025-01-01T00:00:00+00:00", messages=messages)


def _archive_forever(data_dir: str, ready_fd: int) -> None:
    """The child: never returns; the parent kills it."""
    store = FileArchiveStore(data_dir)
    os.write(ready_fd, b"r")
    os.close(ready_fd)
    while True:
        store.save(build(new_archive_id(time.time_ns(), secrets.token_hex(6))))


def run_and_kill(data_dir: str, delay: float) -> None:
    read_end, write_end = os.pipe()
    pid = fork()
    if pid == 0:  # pragma: no cover - the child is killed, never reports coverage
        try:
            os.close(read_end)
            _archive_forever(data_dir, write_end)
        finally:
            os._exit(1)
    os.close(write_end)
    try:
        assert os.read(read_end, 1) == b"r"
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read_end)
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGKILL


@pytest.mark.slow
def test_archives_killed_at_random_moments_are_complete_or_absent(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    for _ in range(KILLS):
        run_and_kill(str(tmp_path), rng.uniform(0.0, 0.03))
    directory = tmp_path / "archives"
    names = sorted(os.listdir(directory))
    finals = [n for n in names if n.endswith(".json") and not is_temp_name(n)]
    debris = [n for n in names if n not in finals]
    assert finals, "no archive completed: the kills came too early to test anything"
    assert all(is_temp_name(n) for n in debris)
    store = FileArchiveStore(str(tmp_path))
    for name in finals:
        archive_id = name.removesuffix(".json")
        loaded = store.load(archive_id)  # complete JSON with every field, or ArchiveError
        assert loaded == build(archive_id)
        assert archive_sha256(loaded.messages) == loaded.ref.sha256
    assert remove_stale_temps(str(directory), older_than=0) == debris
    assert sorted(os.listdir(directory)) == finals


def test_the_sweep_keeps_recent_temps_and_every_final_name(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(build("00000000000000000001-abcd"))
    directory = tmp_path / "archives"
    old = directory / ".00000000000000000002-abcd.0123456789abcdef.tmp"
    young = directory / ".00000000000000000003-abcd.fedcba9876543210.tmp"
    for temp in (old, young):
        temp.write_bytes(b'{"half": ')
    long_ago = time.time() - 7200
    os.utime(old, (long_ago, long_ago))
    (directory / "notes.txt").write_text("not ours")
    assert remove_stale_temps(str(directory)) == [old.name]
    assert sorted(os.listdir(directory)) == sorted(
        [young.name, "00000000000000000001-abcd.json", "notes.txt"]
    )


def test_the_sweep_of_a_missing_directory_removes_nothing(tmp_path: Path) -> None:
    assert remove_stale_temps(str(tmp_path / "none"), older_than=0) == []
