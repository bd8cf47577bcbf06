"""A real replica killed with SIGKILL mid-job: another replica, a separate process on the
same database, takes the job over and finishes it, leaving one archive for it."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from bench.server import running_server
from tests.service.test_compaction import CONVERSATION

pytestmark = pytest.mark.slow  # two server processes: ~10 s


def test_a_job_of_a_killed_replica_is_finished_by_another(
    database_url: str, tmp_path: Path
) -> None:
    env = {"COMPACT_DATABASE_URL": database_url, "COMPACT_JOB_LEASE_SECONDS": "1"}
    with (
        running_server(tmp_path, tmp_path / "a", llm_delay=1.5, **env) as (a, a_pid),
        running_server(tmp_path, tmp_path / "b", llm_delay=0.1, **env) as (b, _),
    ):
        session = f"kill-{os.getpid()}-{time.time_ns()}"
        body = {"messages": CONVERSATION, "force": True, "session_id": session}
        job = httpx.post(f"{a}/compactions", json=body, timeout=10).json()
        for _ in range(200):
            if httpx.get(f"{a}/compactions/{job['id']}", timeout=10).json()["state"] == "running":
                break
            time.sleep(0.02)
        os.kill(a_pid, signal.SIGKILL)
        seen = job
        for _ in range(300):
            seen = httpx.get(f"{b}/compactions/{job['id']}", timeout=10).json()
            if seen["state"] not in ("queued", "running"):
                break
            time.sleep(0.05)
    assert (seen["state"], seen["reason"]) == ("done", None)
    assert seen["owner"] != job["owner"]
    assert seen["result"]["compacted"] is True
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT id, message_count FROM compact_archives WHERE session_id = %s", (session,)
        ).fetchall()
    assert rows == [(job["id"], len(CONVERSATION) - 1)]  # the run again replaced the dead one's
    assert seen["result"]["archive"]["id"] == job["id"]
