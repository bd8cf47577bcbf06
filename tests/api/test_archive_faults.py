"""The data directory failing under /compact: a full disk or a read-only file system gives
`archive_failed` and compacts nothing; concurrent compactions of one session each keep
their own complete archive."""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.ports import SummaryRequest
from app.core.sessions.ids import archive_sha256
from tests.builders import FakeSummarizer, assistant, bulk_round, read_round, system, user

pytestmark = pytest.mark.anyio

CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug."),
    *bulk_round(),
    *read_round("a.py", "x = 1"),
    assistant("Done."),
]

_real_open = os.open
_real_write = os.write
_real_replace = os.replace


def _is_temp_file(fd: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.readlink(f"/proc/self/fd/{fd}").endswith(
            ".tmp"
        )
    except OSError:
        return False


def disk_full_on_write(monkeypatch: pytest.MonkeyPatch) -> None:
    def write(fd: int, data: Any) -> int:
        if _is_temp_file(fd):
            raise OSError(errno.ENOSPC, "No space left on device")
        return _real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


def disk_full_on_create(monkeypatch: pytest.MonkeyPatch) -> None:
    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and str(path).endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return _real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def read_only_on_create(monkeypatch: pytest.MonkeyPatch) -> None:
    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system")
        return _real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def read_only_on_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(src: Any, dst: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "replace", replace)


def permission_denied_on_create(monkeypatch: pytest.MonkeyPatch) -> None:
    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied")
        return _real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


@pytest.mark.parametrize(
    ("fault", "name"),
    [
        (disk_full_on_write, "ENOSPC"),
        (disk_full_on_create, "ENOSPC"),
        (read_only_on_create, "EROFS"),
        (read_only_on_rename, "EROFS"),
        (permission_denied_on_create, "EACCES"),
    ],
)
async def test_a_failing_data_dir_gives_archive_failed_and_compacts_nothing(
    client_with: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: Callable[[pytest.MonkeyPatch], None],
    name: str,
) -> None:
    summarizer = FakeSummarizer()
    client = await client_with(summarizer)
    (tmp_path / "data" / "archives").mkdir(parents=True)
    with monkeypatch.context() as patch:
        fault(patch)
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    assert response.status_code == 200
    data = response.json()
    assert (data["compacted"], data["reason"]) == (False, "archive_failed")
    assert data["messages"] == CONVERSATION
    assert data["warnings"] == [f"archive failed: archive write failed: {name}"]
    assert summarizer.requests == []  # nothing summarized: nothing may be lost
    assert os.listdir(tmp_path / "data" / "archives") == []  # and no debris


async def test_concurrent_compactions_of_one_session_keep_every_archive(
    client_with: Any,
) -> None:
    sessions = 8
    entered = asyncio.Event()
    count = 0

    async def all_at_once(request: SummaryRequest) -> str:
        nonlocal count
        count += 1
        if count == sessions:
            entered.set()
        await entered.wait()  # every archive is written before any summary returns
        return "SUMMARY"

    client = await client_with(
        FakeSummarizer(all_at_once), max_concurrent_summaries=sessions, summary_slot_wait=0
    )
    bodies = [
        {
            "messages": [system("s"), user(f"task {i}"), *bulk_round(), user("go on")],
            "force": True,
            "session_id": "s-1",
        }
        for i in range(sessions)
    ]
    answers = await asyncio.gather(*(client.post("/compact", json=b) for b in bodies))
    archives = [answer.json()["archive"] for answer in answers]
    assert len({a["id"] for a in archives}) == sessions
    for body, archive in zip(bodies, archives, strict=True):
        stored = (await client.get(f"/archives/{archive['id']}")).json()
        assert stored["session_id"] == "s-1"
        assert stored["messages"] == body["messages"][1:]
        assert stored["sha256"] == archive_sha256(body["messages"][1:]) == archive["sha256"]


async def test_start_up_removes_stale_temp_files_and_keeps_archives(
    client_for: Any, tmp_path: Path
) -> None:
    directory = tmp_path / "data" / "archives"
    directory.mkdir(parents=True)
    stale = directory / ".00000000000000000002-abcd.0123456789abcdef.tmp"
    stale.write_bytes(b'{"half": ')
    os.utime(stale, (0, 0))
    fresh = directory / ".00000000000000000003-abcd.0123456789abcdef.tmp"
    fresh.write_bytes(b'{"half": ')
    client = await client_for()
    answer = (await client.post("/compact", json={"messages": CONVERSATION, "force": True})).json()
    assert sorted(os.listdir(directory)) == sorted([fresh.name, f"{answer['archive']['id']}.json"])
