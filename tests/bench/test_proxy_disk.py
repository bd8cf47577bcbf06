"""`bench.proxy_disk`'s reading of a data directory: bytes by folder, archives, records by
outcome, and the totals per agent-hour. No replay runs here."""

from __future__ import annotations

from pathlib import Path

from bench.proxy_disk import disk, summary


def test_a_data_directory_is_read_by_folder_archives_and_outcomes(tmp_path: Path) -> None:
    (tmp_path / "archives").mkdir()
    (tmp_path / "archives" / "a1.json").write_bytes(b"x" * 100)
    (tmp_path / "archives" / "a2.json").write_bytes(b"x" * 50)
    (tmp_path / "archive_index").mkdir()
    (tmp_path / "archive_index" / "a1.recall").write_bytes(b"x" * 300)
    records = tmp_path / "sessions" / "s" / "compactions"
    records.mkdir(parents=True)
    (records / "r1.json").write_bytes(b'{"outcome": "compacted"}')
    (records / "r2.json").write_bytes(b'{"outcome": "no_gain"} ')
    found = disk(tmp_path)
    assert found == {
        "bytes": {"archives": 150, "archive_index": 300, "sessions": 47},
        "archives": 2,
        "records": {"compacted": 1, "no_gain": 1},
    }
    row = {"requests": 720, "heads_put_in": 2, **found}
    assert summary([row, row], turn_seconds=5.0) == {
        "replays": 2,
        "agent_hours": 2.0,
        "mb_per_agent_hour": 0.0,
        "mb_by_folder": {"archive_index": 0.0, "archives": 0.0, "sessions": 0.0},
        "archives": 4,
        "heads_put_in": 4,
        "records_compacted": 2,
    }
