import errno
import gzip
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from app.adapters.archive_store import FileArchiveStore
from app.core.errors import ArchiveError
from app.core.ports import Archive, ArchiveRef
from app.core.recall.search import RecallHit
from app.core.recall.terms import parse_query
from app.core.sessions.ids import archive_sha256

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "héllo wörld — 日本語 🚀"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "reading"},
            {
                "type": "tool_use",
                "id": "tu_1",
                "name": "read_file",
                "input": {"path": "src/ä.py", "opts": {"lines": [1, 2, 3], "deep": {"x": None}}},
            },
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "ok", "n": 1.5}],
    },
]


def archive(
    archive_id: str = "00000000000000000001-abcd",
    session_id: str | None = "session-1",
    messages: list[dict[str, Any]] | None = None,
) -> Archive:
    messages = MESSAGES if messages is None else messages
    ref = ArchiveRef(
        id=archive_id,
        session_id=session_id,
        message_count=len(messages),
        sha256=archive_sha256(messages),
    )
    return Archive(ref=ref, created_at="2025-01-01T00:00:00Z", messages=messages)


def archives_dir(tmp_path: Path) -> Path:
    return tmp_path / "archives"


def names(tmp_path: Path) -> list[str]:
    directory = archives_dir(tmp_path)
    return sorted(os.listdir(directory)) if directory.is_dir() else []


# --- round trip -----------------------------------------------------------------------


def test_save_then_load_returns_an_equal_archive(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    original = archive()
    store.save(original)
    assert store.load(original.ref.id) == original


def test_loaded_messages_still_match_their_sha256(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive())
    loaded = store.load("00000000000000000001-abcd")
    assert loaded is not None
    assert archive_sha256(loaded.messages) == loaded.ref.sha256


def test_save_without_session_id_round_trips(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    original = archive(session_id=None, messages=[])
    store.save(original)
    assert store.load(original.ref.id) == original


def test_file_is_named_by_id_with_no_temp_debris(tmp_path: Path) -> None:
    FileArchiveStore(str(tmp_path)).save(archive("a1"))
    assert names(tmp_path) == ["a1.json"]


def test_file_holds_one_gzipped_json_document_with_the_documented_fields(
    tmp_path: Path,
) -> None:
    FileArchiveStore(str(tmp_path)).save(archive("a1"))
    path = archives_dir(tmp_path) / "a1.json"
    document = orjson.loads(gzip.decompress(path.read_bytes()))
    assert document == {
        "id": "a1",
        "session_id": "session-1",
        "created_at": "2025-01-01T00:00:00Z",
        "message_count": 3,
        "sha256": archive_sha256(MESSAGES),
        "messages": MESSAGES,
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_archives_dir_is_created_when_missing(tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "data"
    FileArchiveStore(str(data_dir)).save(archive("a1"))
    assert (data_dir / "archives" / "a1.json").is_file()


# --- ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["", ".", "..", "../x", "a/b", "a..b", "a\x00b", "x" * 129])
def test_save_refuses_an_invalid_archive_id(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(ArchiveError):
        FileArchiveStore(str(tmp_path)).save(archive(bad_id))
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize("bad_session", ["", "../x", "a/b", "..", "a\\b"])
def test_save_refuses_an_invalid_session_id(tmp_path: Path, bad_session: str) -> None:
    with pytest.raises(ArchiveError):
        FileArchiveStore(str(tmp_path)).save(archive("a1", session_id=bad_session))
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize("bad_id", ["", ".", "..", "../x", "a/b", "a..b", "a\x00b", "x" * 129])
def test_load_of_an_invalid_id_is_none(tmp_path: Path, bad_id: str) -> None:
    assert FileArchiveStore(str(tmp_path)).load(bad_id) is None


def test_load_of_a_missing_archive_is_none(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    assert store.load("nope") is None
    store.save(archive("a1"))
    assert store.load("nope") is None


def test_load_cannot_escape_the_archives_dir(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_bytes(orjson.dumps({"id": "x"}))
    assert FileArchiveStore(str(tmp_path)).load("../secret") is None


# --- immutability ---------------------------------------------------------------------


def test_duplicate_id_is_refused_and_the_original_is_intact(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    original = archive("a1")
    store.save(original)
    before = (archives_dir(tmp_path) / "a1.json").read_bytes()
    with pytest.raises(ArchiveError, match="exists"):
        store.save(archive("a1", messages=[{"role": "user", "content": "other"}]))
    assert (archives_dir(tmp_path) / "a1.json").read_bytes() == before
    assert store.load("a1") == original
    assert names(tmp_path) == ["a1.json"]


def test_concurrent_saves_of_the_same_id_keep_exactly_one(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    candidates = [archive("same", messages=[{"role": "user", "content": str(i)}]) for i in range(8)]
    outcomes: list[str] = []
    barrier = threading.Barrier(len(candidates))

    def save(candidate: Archive) -> None:
        barrier.wait()
        try:
            store.save(candidate)
            outcomes.append("saved")
        except ArchiveError:
            outcomes.append("refused")

    threads = [threading.Thread(target=save, args=(c,)) for c in candidates]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 7 + ["saved"]
    assert names(tmp_path) == ["same.json"]
    assert store.load("same") in candidates


# --- failures while writing -----------------------------------------------------------

Patch = Callable[[pytest.MonkeyPatch], None]


def fail_open_temp(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.open

    def fake(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake)


def fail_write(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.write
    calls = {"n": 0}

    def fake(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[:10])  # a short write first, then the disk fills
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", fake)


def fail_fsync_file(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fsync

    def fake(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fake)


def fail_close(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.close

    def fake(fd: int) -> None:
        is_file = stat.S_ISREG(os.fstat(fd).st_mode)
        real(fd)
        if is_file:
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "close", fake)


def fail_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(src: Any, dst: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "replace", fake)


def fail_fsync_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fsync

    def fake(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fake)


def fail_mkdir(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(path: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "mkdir", fake)


def fail_open_temp_eacces(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.open

    def fake(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake)


@pytest.mark.parametrize(
    ("patch", "errno_name"),
    [
        (fail_open_temp, "ENOSPC"),
        (fail_open_temp_eacces, "EACCES"),
        (fail_write, "ENOSPC"),
        (fail_fsync_file, "EIO"),
        (fail_close, "EIO"),
        (fail_replace, "EROFS"),
        (fail_fsync_dir, "EIO"),
        (fail_mkdir, "EROFS"),
    ],
)
def test_any_os_error_while_saving_is_an_archive_error_leaving_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, patch: Patch, errno_name: str
) -> None:
    store = FileArchiveStore(str(tmp_path))
    secret = "do-not-leak-this-message"
    with monkeypatch.context() as m:
        patch(m)
        with pytest.raises(ArchiveError) as info:
            store.save(archive("a1", messages=[{"role": "user", "content": secret}]))
    assert str(info.value) == f"archive write failed: {errno_name}"
    assert secret not in str(info.value)
    assert names(tmp_path) == []


def test_store_works_again_after_a_failed_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileArchiveStore(str(tmp_path))
    with monkeypatch.context() as m:
        fail_fsync_dir(m)
        with pytest.raises(ArchiveError):
            store.save(archive("a1"))
    store.save(archive("a1"))
    assert store.load("a1") == archive("a1")


def test_a_failed_fsync_is_never_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def fake(fd: int) -> None:
        calls.append(fd)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fake)
    with pytest.raises(ArchiveError, match="EIO"):
        FileArchiveStore(str(tmp_path)).save(archive("a1"))
    assert len(calls) == 1


def test_an_interrupt_between_write_and_replace_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Crash(BaseException):
        pass

    def crash(src: Any, dst: Any) -> None:
        raise Crash

    store = FileArchiveStore(str(tmp_path))
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(Crash):
        store.save(archive("a1"))
    assert names(tmp_path) == []
    monkeypatch.undo()
    assert store.load("a1") is None


def test_data_dir_that_is_a_regular_file_is_an_archive_error(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.write_text("not a directory")
    with pytest.raises(ArchiveError, match="archive write failed: E"):
        FileArchiveStore(str(data_dir)).save(archive("a1"))
    assert data_dir.read_text() == "not a directory"


def test_unserializable_messages_are_an_archive_error(tmp_path: Path) -> None:
    ref = ArchiveRef(id="a1", session_id=None, message_count=1, sha256="0" * 64)
    bad = Archive(ref=ref, created_at="t", messages=[{"role": "user", "content": object()}])
    with pytest.raises(ArchiveError, match="serializable"):
        FileArchiveStore(str(tmp_path)).save(bad)
    assert names(tmp_path) == []


# --- failures while reading -----------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b'{"id": "a1", "messages": [',
        b"[]",
        b'"a1"',
        b'{"id": "a1"}',
        b'{"id":"other","session_id":null,"created_at":"t","message_count":0,'
        b'"sha256":"x","messages":[]}',
        b'{"id":"a1","session_id":null,"created_at":"t","message_count":true,'
        b'"sha256":"x","messages":[]}',
        b'{"id":"a1","session_id":null,"created_at":"t","message_count":0,'
        b'"sha256":"x","messages":[1]}',
        b'{"id":"a1","session_id":3,"created_at":"t","message_count":0,"sha256":"x","messages":[]}',
        b"\x1f\x8b not gzip after all",
        gzip.compress(b"{not json"),
    ],
)
def test_corrupt_archive_is_an_archive_error(tmp_path: Path, content: bytes) -> None:
    archives_dir(tmp_path).mkdir()
    (archives_dir(tmp_path) / "a1.json").write_bytes(content)
    with pytest.raises(ArchiveError, match="corrupt"):
        FileArchiveStore(str(tmp_path)).load("a1")


def test_load_when_the_data_dir_does_not_exist_is_none(tmp_path: Path) -> None:
    assert FileArchiveStore(str(tmp_path / "missing")).load("a1") is None


def test_load_when_the_data_dir_is_a_regular_file_is_an_archive_error(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.write_text("x")
    with pytest.raises(ArchiveError, match="ENOTDIR"):
        FileArchiveStore(str(data_dir)).load("a1")


def test_load_does_not_follow_a_symlink(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("real"))
    (archives_dir(tmp_path) / "link.json").symlink_to(archives_dir(tmp_path) / "real.json")
    with pytest.raises(ArchiveError, match="ELOOP"):
        store.load("link")


def test_load_of_a_fifo_fails_without_hanging(tmp_path: Path) -> None:
    archives_dir(tmp_path).mkdir()
    os.mkfifo(archives_dir(tmp_path) / "a1.json")
    with pytest.raises(ArchiveError, match="regular"):
        FileArchiveStore(str(tmp_path)).load("a1")


def test_load_of_a_directory_is_an_archive_error(tmp_path: Path) -> None:
    (archives_dir(tmp_path) / "a1.json").mkdir(parents=True)
    with pytest.raises(ArchiveError):
        FileArchiveStore(str(tmp_path)).load("a1")


# --- writable -------------------------------------------------------------------------


def test_writable_on_a_fresh_dir(tmp_path: Path) -> None:
    assert FileArchiveStore(str(tmp_path / "data")).writable()
    assert names(tmp_path / "data") == []


def test_not_writable_when_the_data_dir_is_a_regular_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.write_text("x")
    assert not FileArchiveStore(str(data_dir)).writable()


def test_not_writable_when_creating_a_file_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileArchiveStore(str(tmp_path))
    assert store.writable()
    fail_open_temp(monkeypatch)
    assert not store.writable()
    assert names(tmp_path) == []


# --- concurrency ----------------------------------------------------------------------


def test_twenty_threads_saving_distinct_ids_give_twenty_complete_archives(
    tmp_path: Path,
) -> None:
    store = FileArchiveStore(str(tmp_path))
    originals = [
        archive(f"{i:020d}-{i:04x}", messages=[{"role": "user", "content": "x" * 10_000 * i}])
        for i in range(20)
    ]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(originals))

    def save(candidate: Archive) -> None:
        barrier.wait()
        try:
            store.save(candidate)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(a,)) for a in originals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert names(tmp_path) == sorted(f"{a.ref.id}.json" for a in originals)
    for original in originals:
        assert store.load(original.ref.id) == original


def test_an_id_removed_and_written_again_is_searched_as_written_again(tmp_path: Path) -> None:
    """A job's archive has the job's id: a fallback (or a run again after its replica
    died) removes an attempt's archive and writes another under the same id. Recall then
    reads the new one, never what it parsed of the removed one."""
    store = FileArchiveStore(str(tmp_path))
    first = [{"role": "user", "content": "the old plan"}]
    again = [{"role": "user", "content": "the old plan"}, {"role": "user", "content": "new"}]

    def search(query: str) -> list[RecallHit]:
        return store.search("s-1", parse_query(query), 5, lambda: 60.0).hits

    store.save(archive("00000000000000000001-aaaa", "s-1", first))
    assert [h.message_index for h in search("plan")] == [0]
    store.delete("00000000000000000001-aaaa")
    assert search("plan") == []
    store.save(archive("00000000000000000001-aaaa", "s-1", again))
    assert [h.snippet for h in search("new")] == ["new"]
