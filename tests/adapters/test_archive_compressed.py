"""Archives on the file store are gzip-compressed in members cut at message boundaries,
their word indexes hold no text, and a snippet reads one member; archives and indexes
written before (plain JSON, SQLite with the text) stay readable and found."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

import app.adapters.archive_file as archive_file
import app.adapters.recall_index as recall_index
from app.adapters.archive_file import MEMBER_BYTES, encode_archive, pack_archive
from app.adapters.archive_store import FileArchiveStore
from app.adapters.recall_index import MAGIC, PackedIndex
from app.core.errors import ArchiveError
from app.core.recall import PostingBudget
from app.core.recall.terms import parse_query
from tests.adapters.old_formats import write_plain_archive, write_sqlite_index
from tests.adapters.test_archive_store import MESSAGES, archive

A1, A2 = "00000000000000000001-aaaa", "00000000000000000002-aaaa"


def turns(n: int, size: int) -> list[dict[str, Any]]:
    """`n` messages of about `size` characters each, message i saying `marker{i}` once."""
    return [
        {
            "role": "user" if i % 2 else "assistant",
            "content": f"marker{i} " + "lorem " * (size // 6),
        }
        for i in range(n)
    ]


def test_an_archive_is_written_gzip_compressed_and_reads_back_equal(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    saved = archive(A1, "s-1", [*MESSAGES, *turns(40, 2000)])
    store.save(saved)
    data = (tmp_path / "archives" / f"{A1}.json").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data) == encode_archive(saved)  # `gzip -dc` reads the JSON
    assert len(data) * 10 < len(encode_archive(saved))
    assert store.load(A1) == saved


def test_members_are_cut_at_message_boundaries(tmp_path: Path) -> None:
    saved = archive(A1, "s-1", turns(12, 20_000))
    packed = pack_archive(saved)
    document = encode_archive(saved)
    # a member closes at the first boundary past 64 KiB: four messages of 20 KB each
    assert [m[0] for m in packed.members] == [0, packed.spans[4][0], packed.spans[8][0]]
    for (start, end), message in zip(packed.spans, saved.messages, strict=True):
        assert document[start:end].decode().startswith('{"role":')
        assert archive_file.read_message_from(packed.data, (start, end), packed.members) == message
    assert all(document[u - 1 : u] == b"," for u, _ in packed.members[1:])
    assert packed.members[1][0] >= MEMBER_BYTES


def test_a_plain_archive_written_before_compression_still_loads_and_is_found(
    tmp_path: Path,
) -> None:
    old = archive(A1, "s-1", [{"role": "user", "content": "the deploy key is in vault"}])
    write_plain_archive(tmp_path, old)
    store = FileArchiveStore(str(tmp_path))
    assert store.load(A1) == old
    [hit] = store.search("s-1", parse_query("vault"), 5, lambda: 60.0).hits
    assert (hit.archive_id, hit.snippet) == (A1, "the deploy key is in vault")
    # indexed by that recall, in the new format, without text and without places
    index = (tmp_path / "archive_index" / f"{A1}.recall").read_bytes()
    assert index.startswith(MAGIC)
    assert b"vault" not in index
    assert store.search("s-1", parse_query("deploy"), 5, lambda: 60.0).hits[0].snippet == (
        "the deploy key is in vault"
    )


def test_an_sqlite_index_written_before_still_finds_with_its_snippets(tmp_path: Path) -> None:
    old = archive(A1, "s-1", [{"role": "user", "content": "use port 8080 for the relay"}])
    write_plain_archive(tmp_path, old)
    write_sqlite_index(tmp_path, old)
    store = FileArchiveStore(str(tmp_path))
    store.save(archive(A2, "s-1", [{"role": "user", "content": "port 9090 now"}]))
    hits = store.search("s-1", parse_query("port"), 5, lambda: 60.0).hits
    assert [(h.archive_id, h.snippet) for h in hits] == [
        (A2, "port 9090 now"),
        (A1, "use port 8080 for the relay"),
    ]


def test_the_word_index_holds_no_text(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive(A1, "s-1", [{"role": "user", "content": "zebra quagga okapi " * 50}]))
    index = PackedIndex((tmp_path / "archive_index" / f"{A1}.recall").read_bytes())
    body = b"".join(index._part(n) for n in range(2))  # the meta and the one bucket
    assert body.count(b"zebra") == 1  # once, in the words' directory, never as text
    assert b"zebra quagga" not in body


def test_a_snippet_reads_only_the_member_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileArchiveStore(str(tmp_path))
    saved = archive(A1, "s-1", turns(40, 20_000))
    store.save(saved)
    size = (tmp_path / "archives" / f"{A1}.json").stat().st_size
    read: list[int] = []
    original = archive_file._read
    monkeypatch.setattr(archive_file, "_read", lambda fd, n: read.append(n) or original(fd, n))
    [hit] = store.search("s-1", parse_query("marker17"), 5, lambda: 60.0).hits
    assert (hit.message_index, hit.snippet[:14]) == (17, "marker17 lorem")
    [member] = read
    assert 0 < member * 8 < size


def test_a_member_that_does_not_hold_its_message_is_an_archive_error(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive(A1, "s-1", turns(3, 100)))
    path = tmp_path / "archives" / f"{A1}.json"
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(ArchiveError, match="corrupt"):
        store.search("s-1", parse_query("marker1"), 5, lambda: 60.0)
    with pytest.raises(ArchiveError, match="corrupt"):
        store.load(A1)


def test_a_snippet_of_an_archive_gone_since_is_empty(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive(A1, "s-1", turns(3, 100)))
    (tmp_path / "archives" / f"{A1}.json").unlink()
    [hit] = store.search("s-1", parse_query("marker1"), 5, lambda: 60.0).hits
    assert (hit.message_index, hit.snippet) == (1, "")


def test_a_large_index_is_read_by_bucket_only_those_of_the_query(tmp_path: Path) -> None:
    store = FileArchiveStore(str(tmp_path))
    many = [
        {"role": "user", "content": " ".join(f"w{i}x{j}" for j in range(300))} for i in range(60)
    ]
    store.save(archive(A1, "s-1", many))
    data = (tmp_path / "archive_index" / f"{A1}.recall").read_bytes()
    assert data[len(MAGIC) : len(MAGIC) + 1] == b"z"  # past WHOLE_BELOW: zlib, in buckets
    index = PackedIndex(data)
    buckets = len(index._offsets) - 2
    assert buckets > 4
    [hit] = store.search("s-1", parse_query("w42x7"), 5, lambda: 60.0).hits
    assert (hit.message_index, hit.snippet[:12]) == (42, "w42x0 w42x1 ")
    with recall_index.open_index(str(tmp_path / "archive_index" / f"{A1}.recall"), lambda: 9) as i:
        assert isinstance(i, PackedIndex)
        i.find(0, A1, PostingBudget(("w42x7",)))
        assert sorted(i._parts) == [0, 1 + recall_index._bucket("w42x7", buckets)]


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d[:-3],
        lambda d: d[: len(MAGIC)] + b"q" + d[len(MAGIC) + 1 :],
        lambda d: d[: len(MAGIC) + 5],
        lambda d: d[:-8] + b"\xff" * 8,
    ],
)
def test_a_damaged_index_is_an_archive_error(tmp_path: Path, damage: Any) -> None:
    store = FileArchiveStore(str(tmp_path))
    store.save(archive(A1, "s-1", turns(3, 100)))
    path = tmp_path / "archive_index" / f"{A1}.recall"
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ArchiveError, match="recall index"):
        store.search("s-1", parse_query("marker1"), 5, lambda: 60.0)
