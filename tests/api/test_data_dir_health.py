"""Readiness on a data directory without room, and the periodic sweep of crash debris in
every directory of it (not only `archives/`, not only at start-up)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.anyio


async def test_readyz_is_503_when_the_data_dir_has_less_room_than_the_minimum(
    client_for: Any,
) -> None:
    # the probe file still fits: only the free-space check can tell
    client = await client_for(min_free_bytes=2**62)
    ready = await client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {
        "ready": False,
        "checks": {
            "tokenizer_loaded": True,
            "data_dir_writable": True,
            "data_dir_has_room": False,
            "workdir_readable": True,
        },
        "summarizer": "extractive",
        "summary_fallback": "none",
    }


async def test_readyz_with_room_to_spare_is_ready(client_for: Any) -> None:
    client = await client_for(min_free_bytes=1)
    assert (await client.get("/readyz")).json()["checks"]["data_dir_has_room"] is True


async def test_stale_temps_are_swept_periodically_in_every_directory(
    client_for: Any, tmp_path: Path
) -> None:
    await client_for(temp_sweep_seconds=0.05)
    data = tmp_path / "data"
    debris = []
    for place in ("archives", "jobs", "sessions/s1/compactions", "sessions/s1/seen"):
        directory = data / place
        directory.mkdir(parents=True, exist_ok=True)
        old = directory / ".killed.0123456789abcdef.tmp"
        old.write_bytes(b'{"half": ')
        os.utime(old, (0, 0))
        debris.append(old)
    young = data / "jobs" / ".running.0123456789abcdef.tmp"
    young.write_bytes(b"{")
    for _ in range(100):
        if not any(path.exists() for path in debris):
            break
        await asyncio.sleep(0.02)
    assert [path for path in debris if path.exists()] == []
    assert young.exists()


async def test_the_start_up_sweep_covers_every_directory(client_for: Any, tmp_path: Path) -> None:
    stale = tmp_path / "data" / "sessions" / "s1" / "seen" / ".abc.0123456789abcdef.tmp"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"1")
    os.utime(stale, (0, 0))
    await client_for(temp_sweep_seconds=0)
    assert not stale.exists()
