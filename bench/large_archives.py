"""Large archives written at the same time: `python -m bench.large_archives [--clients 4]`.

Starts the real server (extractive summarizer) on the file store and on a fresh database
of the local PostgreSQL (`--admin-url`, dropped afterwards), and sends `--clients` forced
`/compact` calls at once, each a conversation of about `--mb` MB of JSON built from the
corpus's transcripts (each text `--inflate` times over, so the bodies stay under the
service's message limit), each with its own session so that every archive is indexed for
recall. Reports per store whether each compacted, its time and the reason when it did
not; `--write` replaces the `## Large archives at once` section of `bench/RESULTS.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from bench.corpus import _renumbered, load_transcripts
from bench.http1 import Http1Connection
from bench.postgres import ADMIN_URL, fresh_database
from bench.results import write_section
from bench.run import machine
from bench.server import running_server

SECTION = "## Large archives at once"


def conversation(megabytes: float, inflate: int) -> list[dict[str, Any]]:
    """Transcripts one after another (tool ids kept unique), texts `inflate` times over,
    until about `megabytes` of JSON; roles alternate and a user turn ends it."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    size, copy = 0, 0
    transcripts = load_transcripts()
    while size < megabytes * 1_000_000:
        for transcript in transcripts:
            copy += 1
            if messages[-1]["role"] == "user":
                messages.append({"role": "assistant", "content": "Next task."})
            for message in _renumbered(transcript[1:], f"c{copy}_"):
                grown = _inflated(message, inflate)
                messages.append(grown)
                size += len(orjson.dumps(grown))
            if size >= megabytes * 1_000_000:
                break
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "Done."})
    messages.append({"role": "user", "content": "Go on."})
    return messages


def _inflated(message: dict[str, Any], times: int) -> dict[str, Any]:
    content = message["content"]
    if isinstance(content, str):
        return {**message, "content": content * times}
    blocks = []
    for block in content:
        if block.get("type") == "text":
            block = {**block, "text": block["text"] * times}
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), str):
            block = {**block, "content": block["content"] * times}
        blocks.append(block)
    return {**message, "content": blocks}


async def _post(url: str, body: bytes, within: float) -> tuple[float, str]:
    address = urlsplit(url)
    assert address.hostname is not None
    assert address.port is not None
    connection = Http1Connection(address.hostname, address.port)
    started = time.perf_counter()
    try:
        status, payload = await asyncio.wait_for(connection.post("/compact", body), within)
    finally:
        await connection.close()
    took = time.perf_counter() - started
    answer = orjson.loads(payload)
    if status != 200:
        return took, f"HTTP {status} {answer.get('error')}"
    if answer.get("compacted"):
        return took, "compacted"
    warnings = "; ".join(answer.get("warnings") or [])[:160]
    return took, f"{answer.get('reason')} ({warnings})"


async def _all_at_once(url: str, bodies: list[bytes], within: float) -> list[tuple[float, str]]:
    return list(await asyncio.gather(*(_post(url, body, within) for body in bodies)))


def run(args: argparse.Namespace) -> list[str]:
    messages = conversation(args.mb, args.inflate)
    bodies = [
        orjson.dumps({"messages": messages, "force": True, "session_id": f"large-{n}"})
        for n in range(args.clients)
    ]
    mb = len(bodies[0]) / 1_000_000
    rows = []
    for store in args.stores.split(","):
        with ExitStack() as stack:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="compact-large-")))
            env = {"COMPACT_REQUEST_TIMEOUT": str(args.timeout)}
            if store == "postgres":
                env["COMPACT_DATABASE_URL"] = stack.enter_context(fresh_database(args.admin_url))
            url, _ = stack.enter_context(running_server(tmp, tmp / "data", **env))
            started = time.perf_counter()
            answers = asyncio.run(_all_at_once(url, bodies, args.timeout + 30))
            wall = time.perf_counter() - started
        compacted = sum(1 for _, outcome in answers if outcome == "compacted")
        times = ", ".join(f"{took:.0f}" for took, _ in sorted(answers))
        failures = sorted({outcome for _, outcome in answers if outcome != "compacted"})
        rows.append(
            f"| {store} | {compacted} of {len(answers)} | {times} | {wall:.0f} |"
            f" {'; '.join(failures) or '—'} |"
        )
    load = os.getloadavg()[0]
    return [
        SECTION,
        "",
        f"`python -m bench.large_archives --clients {args.clients} --mb {args.mb:g}` on "
        f"{machine()}: {args.clients} forced `/compact` sent at once, each a conversation of "
        f"{mb:.1f} MB ({len(messages)} messages, the corpus's texts {args.inflate} times over, "
        "a session each), extractive summarizer, default database settings "
        f"(`COMPACT_DATABASE_CALL_TIMEOUT` 15 s, statement timeout 10 s), "
        f"`COMPACT_REQUEST_TIMEOUT={args.timeout:g}`.",
        "",
        "| store | compacted | each /compact, s | all, s | not compacted |",
        "|---|---|---|---:|---|",
        *rows,
        "",
        f"Run on {datetime.now(UTC):%Y-%m-%d at %H:%M} UTC, load average (1 min) {load:.1f} "
        "after the run.",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=os.environ.get("COMPACT_TEST_POSTGRES", ADMIN_URL))
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--mb", type=float, default=29.0)
    parser.add_argument("--inflate", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--stores", default="postgres,file")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    lines = run(args)
    print("\n".join(lines))
    if args.write:
        write_section(SECTION, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
