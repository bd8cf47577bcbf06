"""Recall over a session of many archives: time of a query, first and later ones.

Usage: python -m bench.recall [archives] [messages-per-archive]

Writes `archives` synthetic archives (default 100, 200 messages each: tool calls and
~2 KB tool outputs, ~45 MB of JSON in all) for one session into a temporary data
directory, plus as many for another session, with the file archive store, then times
`search` through the store: the first query (each archive of the session read and
indexed once) and the next ones (from memory). Prints the table and writes it into
bench/RESULTS.md.
"""

from __future__ import annotations

import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from typing import Any

from app.adapters.archive_store import FileArchiveStore
from app.core.ids import archive_sha256
from app.core.ports import Archive, ArchiveRef
from bench.results import write_section

SECTION = "## Recall"
QUERIES = ("KeyError HASDATA_API_KEY", "src/module_42.py", "pytest -x tests", "never matches zzz")


def archive_messages(archive: int, count: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Task {archive}: go on."}]
    for i in range((count - 1) // 2):
        call_id = f"t{archive}-{i}"
        path = f"src/module_{(archive * 7 + i) % 500}.py"
        call = {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": path}}
        body = f"def f_{i}(value):\n    return value + {i}\n" * 50
        if i % 97 == 0:
            body += "Traceback (most recent call last):\nKeyError: 'HASDATA_API_KEY'\n"
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, call]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": body}],
            },
        ]
    return messages


def fill(store: FileArchiveStore, session_id: str, archives: int, count: int, tag: str) -> None:
    for n in range(archives):
        messages = archive_messages(n, count)
        ref = ArchiveRef(
            id=f"{n:020d}-{tag}",
            session_id=session_id,
            message_count=len(messages),
            sha256=archive_sha256(messages),
        )
        store.save(Archive(ref=ref, created_at="2026-11-25T00:00:00+00:00", messages=messages))


def main() -> None:
    archives = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    with tempfile.TemporaryDirectory() as tmp:
        writer = FileArchiveStore(tmp)
        fill(writer, "s-1", archives, count, "aaaa")
        fill(writer, "s-2", archives, count, "bbbb")
        store = FileArchiveStore(tmp)  # a fresh process's store: nothing cached
        started = time.perf_counter()
        first = store.search("s-1", QUERIES[0], 5)
        cold = time.perf_counter() - started
        warm: list[float] = []
        for _ in range(5):
            for query in QUERIES:
                started = time.perf_counter()
                store.search("s-1", query, 5)
                warm.append(time.perf_counter() - started)
    section = "\n".join(
        (
            SECTION,
            "",
            f"`python -m bench.recall {archives} {count}` on {datetime.now(UTC):%Y-%m-%d}, Python "
            f"{platform.python_version()}, {platform.machine()}, this 2-core machine: "
            f"{archives} archives of {count} messages (~2 KB tool outputs) in the session and "
            "as many in another; the file archive store's `search`. The first query reads and "
            "indexes the session's archives, as every query would without the cache.",
            "",
            "| query | ms |",
            "|---|---:|",
            f"| first (reads and indexes the session's archives) | {cold * 1000:.0f} |",
            f"| later, median of {len(warm)} | {statistics.median(warm) * 1000:.0f} |",
            f"| later, max | {max(warm) * 1000:.0f} |",
            "",
            f"Hits of the first query: {len(first)}.",
        )
    )
    print(section)
    write_section(SECTION, section + "\n")


if __name__ == "__main__":
    main()
