"""Recall on the file archive store: only the session's archives, each parsed once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import app.adapters.archive_store as archive_store
from app.adapters.archive_store import FileArchiveStore
from app.core.errors import ArchiveError
from tests.adapters.test_archive_store import archive


def said(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]


def test_a_search_finds_the_sessions_archived_message(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("the deploy key is in vault")))
    store.save(archive("00000000000000000002-aaaa", "s-1", said("use port 8080")))
    [hit] = store.search("s-1", "deploy key", 5)
    assert (hit.archive_id, hit.message_index, hit.role) == ("00000000000000000001-aaaa", 0, "user")
    assert hit.snippet == "the deploy key is in vault"


def test_another_sessions_archives_are_never_returned(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("secret plan alpha")))
    store.save(archive("00000000000000000002-aaaa", "s-2", said("secret plan beta")))
    store.save(archive("00000000000000000003-aaaa", None, said("secret plan gamma")))
    assert [h.archive_id for h in store.search("s-2", "secret plan", 5)] == [
        "00000000000000000002-aaaa"
    ]
    assert store.search("s-3", "secret", 5) == []
    assert store.search("../s-1", "secret", 5) == []


def test_an_index_entry_for_another_sessions_archive_is_ignored(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("alpha")))
    # A forged or stale line in s-2's list does not open s-1's archive to s-2.
    index = tmp_path / "archive_index" / "s-2.ids"
    index.write_text("00000000000000000001-aaaa\nnot/an-id\n")
    assert store.search("s-2", "alpha", 5) == []


def test_each_archive_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = FileArchiveStore(str(tmp_path))
    for i in range(3):
        store.save(archive(f"0000000000000000000{i}-aaaa", "s-1", said(f"note {i}")))
    parsed: list[int] = []
    original = archive_store.index_archive
    monkeypatch.setattr(archive_store, "index_archive", lambda m: parsed.append(1) or original(m))
    for _ in range(4):
        assert len(store.search("s-1", "note", 5)) == 3
    assert len(parsed) == 3


def test_a_corrupt_archive_is_an_archive_error(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("x")))
    (tmp_path / "archives" / "00000000000000000001-aaaa.json").write_bytes(b"{not json")
    with pytest.raises(ArchiveError, match="corrupt"):
        store.search("s-1", "x", 5)


def test_an_unwritable_index_does_not_fail_the_save(tmp_path: Path) -> None:
    (tmp_path / "archive_index").write_text("a file where the directory should be")
    store = FileArchiveStore(str(tmp_path))
    store.save(archive("00000000000000000001-aaaa", "s-1", said("x")))
    assert store.load("00000000000000000001-aaaa") is not None
    with pytest.raises(ArchiveError, match="session index read failed: ENOTDIR"):
        store.search("s-1", "x", 5)
