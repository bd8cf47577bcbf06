"""Recall on the file archive store: only the session's archives, through their word
indexes, never reading a whole archive, stopping at its deadline."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import app.adapters.archive_store as archive_store
from app.adapters.archive_store import FileArchiveStore
from app.core.errors import ArchiveError, RecallDeadlineError
from app.core.recall.rank import PostingBudget
from app.core.recall.search import RecallHit, RecallResult
from app.core.recall.terms import parse_query
from tests.adapters.old_formats import write_sqlite_index
from tests.adapters.test_archive_store import archive


def find(store: FileArchiveStore, session_id: str, query: str, limit: int = 5) -> list[RecallHit]:
    return recall(store, session_id, query, limit).hits


def recall(store: FileArchiveStore, session_id: str, query: str, limit: int = 5) -> RecallResult:
    return store.search(session_id, parse_query(query), limit, lambda: 60.0)


def said(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]


def test_a_search_finds_the_sessions_archived_message(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("the deploy key is in vault")))
    store.save(archive("00000000000000000002-aaaa", "s-1", said("use port 8080")))
    [hit] = find(store, "s-1", "deploy key")
    assert (hit.archive_id, hit.message_index, hit.role) == ("00000000000000000001-aaaa", 0, "user")
    assert hit.snippet == "the deploy key is in vault"


def test_another_sessions_archives_are_never_returned(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("secret plan alpha")))
    store.save(archive("00000000000000000002-aaaa", "s-2", said("secret plan beta")))
    store.save(archive("00000000000000000003-aaaa", None, said("secret plan gamma")))
    assert [h.archive_id for h in find(store, "s-2", "secret plan")] == [
        "00000000000000000002-aaaa"
    ]
    assert find(store, "s-3", "secret") == []
    assert find(store, "../s-1", "secret") == []


def test_an_index_entry_for_another_sessions_archive_is_ignored(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("alpha")))
    # A forged or stale line in s-2's list does not open s-1's archive to s-2.
    index = tmp_path / "archive_index" / "s-2.ids"
    index.write_text("00000000000000000001-aaaa\nnot/an-id\n")
    assert find(store, "s-2", "alpha") == []


def test_a_search_reads_no_whole_archive_once_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileArchiveStore(str(tmp_path))
    for i in range(3):
        store.save(archive(f"0000000000000000000{i}-aaaa", "s-1", said(f"note {i} " * 1000)))
    read: list[str] = []
    original = archive_store.read_regular
    monkeypatch.setattr(archive_store, "read_regular", lambda p: read.append(p) or original(p))
    for _ in range(4):
        hits = find(store, "s-1", "note 2")
        assert [h.archive_id for h in hits] == [
            "00000000000000000002-aaaa",
            "00000000000000000001-aaaa",
            "00000000000000000000-aaaa",
        ]
        assert hits[0].snippet.startswith("note 2 note 2")
    assert read == []


def test_an_archive_listed_without_its_index_is_indexed_by_the_next_recalls(
    tmp_path: Path,
) -> None:
    store = FileArchiveStore(str(tmp_path), backfill_bytes=1)
    for i in range(3):
        store.save(archive(f"0000000000000000000{i}-aaaa", "s-1", said(f"old note {i}")))
    for index in (tmp_path / "archive_index").glob("*.recall"):
        index.unlink()  # as written before indexes existed
    first = recall(store, "s-1", "note")
    assert (len(first.hits), first.complete) == (1, False)
    assert len(recall(store, "s-1", "note").hits) == 2
    last = recall(store, "s-1", "note")
    assert ([h.archive_id[:20] for h in last.hits], last.complete) == (
        ["00000000000000000002", "00000000000000000001", "00000000000000000000"],
        True,
    )


def test_a_recall_past_its_deadline_stops_between_archives(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    for i in range(5):
        store.save(archive(f"0000000000000000000{i}-aaaa", "s-1", said(f"note {i}")))
    opened: list[str] = []
    original = archive_store.recall_index.open_index
    left = iter([1.0, 1.0, 0.0])

    def counting(path: str, time_left: object) -> object:
        opened.append(path)
        return original(path, lambda: 1.0)

    archive_store.recall_index.open_index = counting  # type: ignore[assignment]
    try:
        with pytest.raises(RecallDeadlineError):
            store.search("s-1", parse_query("note"), 5, lambda: next(left))
    finally:
        archive_store.recall_index.open_index = original
    assert len(opened) == 2  # two archives searched, the third never opened


def test_a_long_query_inside_an_sqlite_index_is_interrupted_at_the_deadline(
    tmp_path: Path,
) -> None:
    store = FileArchiveStore(str(tmp_path))
    many = [{"role": "user", "content": f"word {i}"} for i in range(3000)]
    old = archive("00000000000000000001-aaaa", "s-1", many)
    store.save(old)
    write_sqlite_index(tmp_path, old)  # as written before the packed format
    ticks = iter([1.0] + [0.0] * 1000)  # time for the first look only
    with pytest.raises(RecallDeadlineError) as raised:
        store.search("s-1", parse_query("word"), 5, lambda: next(ticks))
    assert isinstance(raised.value.__cause__, sqlite3.OperationalError)


def test_a_word_found_everywhere_does_not_crowd_out_a_rare_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_store, "PostingBudget", lambda w: PostingBudget(w, total=4))
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("common rare")))
    for i in range(2, 6):
        store.save(archive(f"0000000000000000000{i}-aaaa", "s-1", said(f"common {i}")))
    result = recall(store, "s-1", "common rare")
    # "common" brings its share (two messages, the newest); "rare" is still found, in the
    # oldest archive, where "common" is past its share and not counted.
    assert [(h.archive_id[19], h.score) for h in result.hits] == [("5", 33), ("4", 33), ("1", 21)]
    assert result.complete is False


def test_a_corrupt_index_or_unindexed_archive_is_an_archive_error(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("x")))
    index = tmp_path / "archive_index" / "00000000000000000001-aaaa.recall"
    index.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(ArchiveError, match="recall index unreadable"):
        find(store, "s-1", "x")
    index.unlink()
    (tmp_path / "archives" / "00000000000000000001-aaaa.json").write_bytes(b"{not json")
    with pytest.raises(ArchiveError, match="corrupt"):
        find(store, "s-1", "x")


def test_an_unwritable_index_does_not_fail_the_save(tmp_path: Path) -> None:
    (tmp_path / "archive_index").write_text("a file where the directory should be")
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("x")))
    assert store.load("00000000000000000001-aaaa") is not None
    with pytest.raises(ArchiveError, match="session index read failed: ENOTDIR"):
        find(store, "s-1", "x")
