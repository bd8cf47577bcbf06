import os
import threading
from pathlib import Path

import pytest

from app.adapters.seen_store import FileSeenStore
from app.core.errors import SeenStoreError
from app.core.restore.freshness import seen_key


def test_an_unseen_file_has_no_time(tmp_path: Path) -> None:
    assert FileSeenStore(str(tmp_path / "data")).last_seen("s1", "src/a.py") is None


def test_a_remembered_time_is_read_back_by_another_store_on_the_same_dir(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    FileSeenStore(data).remember("s1", "src/a.py", 42)
    replica = FileSeenStore(data)
    assert replica.last_seen("s1", "src/a.py") == 42
    assert replica.last_seen("s2", "src/a.py") is None
    assert replica.last_seen("s1", "src/b.py") is None


def test_one_file_per_path_named_by_its_sha256(tmp_path: Path) -> None:
    store = FileSeenStore(str(tmp_path))
    store.remember("s1", "src/a.py", 1)
    store.remember("s1", "src/b.py", 2)
    store.remember("s1", "src/a.py", 3)
    seen = tmp_path / "sessions" / "s1" / "seen"
    assert sorted(os.listdir(seen)) == sorted([seen_key("src/a.py"), seen_key("src/b.py")])
    assert (seen / seen_key("src/a.py")).read_bytes() == b'{"location":"src/a.py","mtime_ns":3}'
    assert oct((seen / seen_key("src/a.py")).stat().st_mode & 0o777) == "0o600"


def test_concurrent_writers_of_different_files_lose_no_update(tmp_path: Path) -> None:
    stores = [FileSeenStore(str(tmp_path)) for _ in range(4)]

    def write(index: int) -> None:
        for n in range(25):
            stores[index].remember("s1", f"f{index}_{n}.py", index * 100 + n)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reader = FileSeenStore(str(tmp_path))
    assert [reader.last_seen("s1", f"f{i}_{n}.py") for i in range(4) for n in range(25)] == [
        i * 100 + n for i in range(4) for n in range(25)
    ]


@pytest.mark.parametrize("session_id", ["../x", "a/b", "", ".hidden", "a..b"])
def test_an_invalid_session_id_is_refused(tmp_path: Path, session_id: str) -> None:
    store = FileSeenStore(str(tmp_path))
    with pytest.raises(SeenStoreError, match="invalid session id"):
        store.remember(session_id, "a.py", 1)
    with pytest.raises(SeenStoreError, match="invalid session id"):
        store.last_seen(session_id, "a.py")


def test_a_damaged_record_is_an_error_not_a_time(tmp_path: Path) -> None:
    store = FileSeenStore(str(tmp_path))
    store.remember("s1", "a.py", 1)
    (tmp_path / "sessions" / "s1" / "seen" / seen_key("a.py")).write_bytes(b"{not json")
    with pytest.raises(SeenStoreError, match="damaged"):
        store.last_seen("s1", "a.py")


def test_an_unwritable_data_dir_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SeenStoreError, match="seen time write failed"):
        FileSeenStore(str(blocker)).remember("s1", "a.py", 1)
