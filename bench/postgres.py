"""The shared shape on PostgreSQL: `python -m bench.postgres [--seconds 20] [--clients 32]`.

Two measurements, each on a fresh database created on `--admin-url` (default: the local
server, `postgresql://postgres@127.0.0.1:5432/postgres`) and dropped afterwards:

1. Throughput of forced `/compact` calls (a 61-message conversation of ~14,600 tokens,
   a summarizer that waits `--llm-delay` seconds like an LLM call and uses no CPU),
   `--clients` concurrent clients spread evenly over the replicas, for: one replica on
   the file store (the reference), one replica on the database, two on one database.
2. What a replica's death costs a background job: a job posted to replica A (lease
   `--lease` s, the summary taking `--job-delay` s), A killed with SIGKILL once the job
   runs, replica B polled until the job is done: seconds from the kill to `done`.

Prints a Markdown section; the numbers go into docs/postgres.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import psycopg
from psycopg import sql

from bench.http1 import Http1Connection, ProtocolError
from bench.load import percentile
from bench.run import machine
from bench.server import running_server

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def conversation(rounds: int = 30) -> list[dict[str, Any]]:
    words = " ".join(f"word{i}" for i in range(120))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(rounds):
        messages.append({"role": "user", "content": f"step {i}: {words}"})
        messages.append({"role": "assistant", "content": f"done {i}: {words}"})
    return messages


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    name = f"cc_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["dbname"] = name
    try:
        yield psycopg.conninfo.make_conninfo(**info)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


async def drive(urls: list[str], body: bytes, clients: int, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        address = urlsplit(urls[index % len(urls)])
        assert address.hostname is not None
        assert address.port is not None
        connection = Http1Connection(address.hostname, address.port)
        try:
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                try:
                    status, payload = await connection.post("/compact", body)
                except (OSError, EOFError, ValueError, ProtocolError) as exc:
                    errors.append(type(exc).__name__)
                    continue
                latencies.append(time.perf_counter() - start)
                if status != 200 or not orjson.loads(payload).get("compacted"):
                    errors.append(f"{status} {payload[:120]!r}")
        finally:
            await connection.close()

    begin = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    wall = time.perf_counter() - begin
    ordered = sorted(latencies)
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
        "rps": len(latencies) / wall,
        "p50": percentile(ordered, 0.5),
        "p99": percentile(ordered, 0.99),
    }


def throughput(args: argparse.Namespace, tmp: Path) -> list[str]:
    body = orjson.dumps({"messages": conversation(), "force": True})
    rows = []
    shapes = [("files", 1), ("postgres", 1), ("postgres", 2)]
    for store, replicas in shapes:
        with ExitStack() as stack:
            env: dict[str, str] = {}
            if store == "postgres":
                env["COMPACT_DATABASE_URL"] = stack.enter_context(fresh_database(args.admin_url))
            data = tmp / f"data-{store}-{replicas}"
            urls = [
                stack.enter_context(
                    running_server(tmp, data / str(i), llm_delay=args.llm_delay, **env)
                )[0]
                for i in range(replicas)
            ]
            asyncio.run(drive(urls, body, args.clients, 2.0))  # warm-up
            result = asyncio.run(drive(urls, body, args.clients, args.seconds))
        rows.append(
            f"| {store} | {replicas} | {result['requests']} | {result['errors']} | "
            f"{result['rps']:.1f} | {result['p50'] * 1000:.0f} ms | {result['p99'] * 1000:.0f} ms |"
        )
        if result["errors"]:
            rows.append(f"|  first error: {result['first_error']} |")
    return [
        "| store | replicas | requests | errors | requests/s | p50 | p99 |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]


def takeover(args: argparse.Namespace, tmp: Path) -> list[str]:
    lines = []
    for store in ("postgres", "files"):
        with ExitStack() as stack:
            env = {"COMPACT_JOB_LEASE_SECONDS": str(args.lease)}
            if store == "postgres":
                env["COMPACT_DATABASE_URL"] = stack.enter_context(fresh_database(args.admin_url))
            shared = tmp / f"jobs-{store}"  # the file store shares one data directory
            a_url, a_pid = stack.enter_context(
                running_server(tmp, shared, llm_delay=args.job_delay, **env)
            )
            b_url, _ = stack.enter_context(
                running_server(tmp, shared, llm_delay=args.job_delay, **env)
            )
            body = {"messages": conversation(), "force": True, "session_id": "bench"}
            job = httpx.post(f"{a_url}/compactions", json=body, timeout=10).json()
            while httpx.get(f"{a_url}/compactions/{job['id']}").json()["state"] != "running":
                time.sleep(0.05)
            time.sleep(0.5)
            os.kill(a_pid, signal.SIGKILL)
            killed = time.monotonic()
            state, seen = "running", None
            while time.monotonic() - killed < 4 * args.lease + 2 * args.job_delay:
                seen = httpx.get(f"{b_url}/compactions/{job['id']}", timeout=10).json()
                state = seen["state"]
                if state not in ("queued", "running"):
                    break
                time.sleep(0.05)
            elapsed = time.monotonic() - killed
            reason = f" ({seen.get('reason')})" if seen and seen.get("reason") else ""
            lines.append(
                f"| {store} | {state}{reason} | {elapsed:.1f} s |"
                f" {'B' if seen and seen.get('owner') != job['owner'] else 'A'} |"
            )
    return [
        f"lease {args.lease:g} s, summary {args.job_delay:g} s, A killed 0.5 s into the run:",
        "",
        "| store | the job ends | kill → end | last owner |",
        "|---|---|---|---|",
        *lines,
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=os.environ.get("COMPACT_TEST_POSTGRES", ADMIN_URL))
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--llm-delay", type=float, default=0.5)
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--job-delay", type=float, default=4.0)
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compact-pg-bench-") as name:
        tmp = Path(name)
        out = [f"machine: {machine()}", ""]
        if not args.skip_throughput:
            out += [*throughput(args, tmp), ""]
        out += takeover(args, tmp)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
