"""Load benchmark: `python -m bench.load` (see docs/development.md, "Load benchmark").

The real server (uvicorn in a subprocess, on a free 127.0.0.1 port) with the
OpenAI-compatible summarizer pointed at a fake LLM on 127.0.0.1 that answers after
`--llm-delay` seconds (1 s). `--clients` concurrent clients (64) send a fixed mix of
`/count`, `/should-compact` and `/compact` (force) built from the `tests/data/corpus`
transcripts until `--seconds` (30) have passed or `--max-requests` were sent, whichever
comes first. The clients run in this process, the server in its own, and speak HTTP/1.1
through `bench/http1.py`, which costs a fraction of httpx's CPU (see there): the figures
are the server's, not the client's queue.

An error is any exception, any non-2xx answer, and a forced `/compact` that did not compact
(a summary that timed out or failed under load would otherwise pass unseen). The server
runs on its default summary slots (`COMPACT_MAX_CONCURRENT_SUMMARIES`, 64) unless
`--summary-slots` says otherwise: with fewer slots than clients, the forced `/compact`
calls measure the 503 `busy` back-pressure instead of the service. The report
gives per route: requests, errors, p50, p99 and max latency, throughput; it is printed and
written to its own section of `bench/RESULTS.md` (`--out -` prints only).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from app.settings import Settings
from bench.corpus import Msg, load_transcripts
from bench.http1 import Http1Connection, ProtocolError
from bench.results import RESULTS, write_section
from bench.run import machine
from bench.server import running_server
from tests.fakes.fake_llm_server import openai_completion, reply, start_fake_llm

SECTION = "## Load"
# Every section with content about an agent session, as the summary check requires of an
# LLM's answer; generic enough to talk about each corpus transcript.
FAKE_SUMMARY = """## Goals & Decisions
- The user asked the agent to solve an issue in the repository (fake LLM under load).
## File Operations
- The agent opened and edited files of the repository.
## Tool Calls
- Commands run in the shell: open, edit, python, search.
## Task Status
- The issue is being fixed; next: run the tests again.
## Errors & Resolutions
- None recorded by this fake summary.
"""
ROUTES = ("/count", "/should-compact", "/compact")
# Every client walks this cycle from its own offset: 45% /count, 45% /should-compact,
# 10% /compact, and the first three clients start on three different routes.
CYCLE = (
    *("/compact", *("/count", "/should-compact") * 4, "/count"),
    *("/compact", *("/should-compact", "/count") * 4, "/should-compact"),
)
REQUEST_TIMEOUT = 60.0


@dataclass(frozen=True)
class LoadConfig:
    seconds: float = 30.0
    clients: int = 64
    max_requests: int = 100_000
    llm_delay: float = 1.0
    summary_slots: int | None = None  # COMPACT_MAX_CONCURRENT_SUMMARIES; None: the default

    @property
    def slots(self) -> int:
        default: int = Settings.model_fields["max_concurrent_summaries"].default
        return self.summary_slots or default


@dataclass
class RouteStats:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)

    def failed(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 3:
            self.error_samples.append(what[:200])


@dataclass
class LoadReport:
    config: LoadConfig
    routes: dict[str, RouteStats]
    wall: float
    llm_calls: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0

    @property
    def requests(self) -> int:
        return sum(len(s.latencies) for s in self.routes.values())

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.routes.values())


def percentile(sorted_values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile of already sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = math.ceil(share * len(sorted_values) - 1e-9)  # 0.99 * 100 is 99.00000000000001
    return sorted_values[min(max(rank, 1), len(sorted_values)) - 1]


def request_bodies(transcripts: list[list[Msg]]) -> dict[str, list[bytes]]:
    """Per route, one request body per corpus transcript (serialized once, up front)."""
    return {
        "/count": [orjson.dumps({"messages": t}) for t in transcripts],
        "/should-compact": [orjson.dumps({"messages": t}) for t in transcripts],
        "/compact": [orjson.dumps({"messages": t, "force": True}) for t in transcripts],
    }


async def _one(connection: Http1Connection, route: str, body: bytes, stats: RouteStats) -> None:
    start = time.perf_counter()
    try:
        status, payload = await asyncio.wait_for(connection.post(route, body), REQUEST_TIMEOUT)
    except (OSError, EOFError, ValueError, TimeoutError, ProtocolError) as exc:
        stats.latencies.append(time.perf_counter() - start)
        stats.failed(f"{type(exc).__name__}: {exc}")
        return
    stats.latencies.append(time.perf_counter() - start)
    if not 200 <= status < 300:
        stats.failed(f"{status}: {payload.decode(errors='replace')}")
    elif route == "/compact" and not (answer := orjson.loads(payload)).get("compacted"):
        stats.failed(f"not compacted: {answer.get('reason')}")


async def drive(url: str, bodies: dict[str, list[bytes]], cfg: LoadConfig) -> LoadReport:
    """`cfg.clients` clients, each with its own connection and one request at a time,
    until the deadline or until `cfg.max_requests` have been started."""
    routes = {route: RouteStats() for route in ROUTES}
    started = 0
    address = urlsplit(url)
    assert address.hostname is not None
    assert address.port is not None
    host, port = address.hostname, address.port
    begin = time.perf_counter()
    deadline = begin + cfg.seconds

    async def worker(index: int) -> None:
        nonlocal started
        connection = Http1Connection(host, port)
        step = index
        try:
            while time.perf_counter() < deadline and started < cfg.max_requests:
                started += 1
                route = CYCLE[step % len(CYCLE)]
                body = bodies[route][(index + step) % len(bodies[route])]
                step += 1
                await _one(connection, route, body, routes[route])
        finally:
            await connection.close()

    await asyncio.gather(*(worker(i) for i in range(cfg.clients)))
    return LoadReport(cfg, routes, time.perf_counter() - begin)


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux `/proc/{pid}/stat`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_load(cfg: LoadConfig) -> LoadReport:
    """Fake LLM, server, clients; the report."""
    bodies = request_bodies(load_transcripts())
    script = [reply(200, openai_completion(FAKE_SUMMARY), delay=cfg.llm_delay)]
    with (
        start_fake_llm(script, record=False) as llm,
        tempfile.TemporaryDirectory(prefix="compact-load-") as tmp,
    ):
        workdir, data_dir = Path(tmp, "work"), Path(tmp, "data")
        workdir.mkdir()
        env = {
            "COMPACT_SUMMARIZER": "openai",
            "COMPACT_OPENAI_BASE_URL": f"{llm.url}/v1",
            "COMPACT_SUMMARY_MODEL": "fake-llm",
            "COMPACT_SUMMARY_ATTEMPTS": "1",
            "COMPACT_MAX_CONCURRENT_SUMMARIES": str(cfg.slots),
        }
        with running_server(workdir, data_dir, **env) as (url, pid):
            server_before, client_before = process_cpu_seconds(pid), time.process_time()
            report = asyncio.run(drive(url, bodies, cfg))
            report.server_cpu = process_cpu_seconds(pid) - server_before
            report.client_cpu = time.process_time() - client_before
        report.llm_calls = llm.received
    return report


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def render(report: LoadReport, command: str) -> str:
    cfg = report.config
    lines = [
        SECTION,
        "",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine()}",
        f"- command: `{command}`",
        f"- {cfg.clients} concurrent clients (one request at a time each, in a process of "
        f"their own) for {report.wall:.1f} s (limit {cfg.seconds:g} s or "
        f"{cfg.max_requests:,} requests); server: one uvicorn process; summarizer: "
        f"OpenAI-compatible client against a fake LLM that answers after {cfg.llm_delay:g} s "
        f"({report.llm_calls:,} summary calls), {cfg.slots} summary slots "
        "(`COMPACT_MAX_CONCURRENT_SUMMARIES`); inputs: the tests/data/corpus transcripts",
        f"- total: {report.requests:,} requests, {report.errors} errors, "
        f"{report.requests / report.wall:.1f} requests/s; CPU during the run: server "
        f"{report.server_cpu:.1f} s, clients {report.client_cpu:.1f} s "
        f"(of {report.wall * (os.cpu_count() or 1):.0f} core-seconds)",
        "",
        "| route | requests | errors | p50 | p99 | max | requests/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for route, stats in report.routes.items():
        latencies = sorted(stats.latencies)
        lines.append(
            f"| `{route}` | {len(latencies):,} | {stats.errors} | "
            f"{_ms(percentile(latencies, 0.50))} | {_ms(percentile(latencies, 0.99))} | "
            f"{_ms(latencies[-1] if latencies else 0.0)} | "
            f"{len(latencies) / report.wall:.1f} |"
        )
    samples = [
        f"- `{route}`: {sample}"
        for route, stats in report.routes.items()
        for sample in stats.error_samples
    ]
    if samples:
        lines += ["", "First errors:", "", *samples]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--seconds", type=float, default=LoadConfig.seconds)
    parser.add_argument("--clients", type=int, default=LoadConfig.clients)
    parser.add_argument("--max-requests", type=int, default=LoadConfig.max_requests)
    parser.add_argument("--llm-delay", type=float, default=LoadConfig.llm_delay)
    parser.add_argument(
        "--summary-slots",
        type=int,
        default=None,
        help="COMPACT_MAX_CONCURRENT_SUMMARIES of the server (default: the server's, 64)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="'-' to print only")
    args = parser.parse_args(argv)
    cfg = LoadConfig(
        seconds=args.seconds,
        clients=args.clients,
        max_requests=args.max_requests,
        llm_delay=args.llm_delay,
        summary_slots=args.summary_slots,
    )
    report = run_load(cfg)
    command = "python -m bench.load " + " ".join(argv if argv is not None else sys.argv[1:])
    text = render(report, command.strip())
    print(text)
    if str(args.out) != "-":
        write_section(SECTION, text, args.out)
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
