"""Header-abuse benchmark: `python -m bench.headers` (see docs/development.md).

`python -m app serve` (or, with `--baseline`, plain uvicorn on the same app: the start
command before the header limits) on a free 127.0.0.1 port. For `--seconds` (20), a load
process keeps `--blasters` clients (8) each sending a `--header-mb` (64) MB header line
(reconnecting when answered or cut), `--drips` connections (500) sending a header line
every `--drip-every` seconds (5) and `--idle` connections (500) sending nothing, each
re-opened when the server closes it. Meanwhile this process times `GET /healthz`, each on
a new connection, every 50 ms, and every tenth time how long a 128 KiB header line takes
to be answered 431. It reports the /healthz p50, p99 and max, the probes that
failed, what the blasters were answered and how long it took, how long the drip and idle
connections lived, and the server's peak RSS; `--write` puts it in its `bench/RESULTS.md`
section. Bounded: everything stops after `--seconds` plus a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.results import write_section
from bench.run import machine
from bench.server import free_port

SECTION = "## Header limits"
BASELINE_SECTION = "## Header-limit baseline: plain uvicorn"
ROOT = Path(__file__).resolve().parents[1]
PROBE_EVERY = 0.05
CHUNK = 1 << 20
ANSWER_GRACE = 3.0  # seconds past the end a blaster still waits for its answer
BASELINE = "plain uvicorn with httptools (the start command before the limits)"


@dataclass(frozen=True)
class Load:
    port: int
    seconds: float
    blasters: int
    header_mb: int
    drips: int
    drip_every: float
    idle: int


@contextmanager
def server(baseline: bool, scratch: Path, **settings: str) -> Iterator[tuple[int, int]]:
    """(port, pid) of the server, once /healthz answers; stopped on exit."""
    port = free_port()
    env = {
        **os.environ,
        "COMPACT_WORKDIR": str(scratch),
        "COMPACT_DATA_DIR": str(scratch / "data"),
        "COMPACT_SUMMARIZER": "extractive",
        "COMPACT_LOG_LEVEL": "error",
        **settings,
    }
    if baseline:
        command = [sys.executable, "-m", "uvicorn", "bench.server:create_bench_app", "--factory"]
        command += ["--log-level", "error", "--host", "127.0.0.1", "--port", str(port)]
    else:
        command = [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(port)]
    process = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while probe(port) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        yield port, process.pid
    finally:
        process.kill()
        process.wait()


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n"
OVERSIZED = b"GET /healthz HTTP/1.1\r\nHost: b\r\nX-Big: " + b"a" * (1 << 17) + b"\r\n\r\n"


def probe(port: int, request: bytes = HEALTHZ, expect: bytes = b"HTTP/1.1 200") -> float | None:
    """Seconds from connecting to the answer's status line, None if another came."""
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            with contextlib.suppress(OSError):  # a server may stop reading at its limit
                connection.sendall(request)
            answer = b""
            while b"\r\n" not in answer and (chunk := connection.recv(4096)):
                answer += chunk
    except OSError:
        return None
    return time.perf_counter() - started if answer.startswith(expect) else None


async def blast(load: Load, until: float, results: list[tuple[str, float]]) -> None:
    """Sends one huge header line after another; records each answer and its delay."""
    while time.monotonic() < until:
        results.append(await blast_once(load, until))


async def blast_once(load: Load, until: float) -> tuple[str, float]:
    """All of one huge header line, whatever the server answers meanwhile."""
    line = b"a" * CHUNK
    started = time.monotonic()
    answered: list[float] = []
    answer: asyncio.Future[bytes] | None = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", load.port)
        writer.write(b"GET / HTTP/1.1\r\nHost: b\r\nX-Big: ")
        answer = asyncio.ensure_future(reader.readline())
        answer.add_done_callback(lambda _: answered.append(time.monotonic() - started))
        for _ in range(load.header_mb):
            if time.monotonic() > until:
                break
            writer.write(line)
            await writer.drain()
        await asyncio.wait_for(answer, max(until - time.monotonic(), 0) + ANSWER_GRACE)
        writer.close()
    except (TimeoutError, OSError):
        pass
    return _status(answer, answered[0] if answered else time.monotonic() - started)


def _status(answer: asyncio.Future[bytes] | None, delay: float) -> tuple[str, float]:
    """The status line the server answered (or how the exchange ended), and when."""
    if answer is None or not answer.done() or answer.cancelled():
        if answer is not None:
            answer.cancel()
        return "no answer", delay
    if answer.exception() is not None:
        return "reset", delay
    return answer.result().decode(errors="replace").strip() or "closed", delay


async def hold(load: Load, until: float, drip: bool, lives: list[float]) -> None:
    """One connection at a time, re-opened when the server closes it; records lifetimes."""
    while time.monotonic() < until:
        opened = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", load.port)
            if drip:
                writer.write(b"GET / HTTP/1.1\r\nHost: b\r\n")
            closed = asyncio.ensure_future(reader.read())
            while not closed.done() and time.monotonic() < until:
                await asyncio.wait([closed], timeout=min(load.drip_every, until - time.monotonic()))
                if drip and not closed.done():
                    writer.write(b"X-Drip: 1\r\n")
            if closed.done():
                lives.append(time.monotonic() - opened)
            else:
                closed.cancel()
            writer.close()
        except OSError:
            await asyncio.sleep(0.1)


async def attack(load: Load) -> dict[str, Any]:
    until = time.monotonic() + load.seconds
    answers: list[tuple[str, float]] = []
    drip_lives: list[float] = []
    idle_lives: list[float] = []
    tasks = [blast(load, until, answers) for _ in range(load.blasters)]
    tasks += [hold(load, until, True, drip_lives) for _ in range(load.drips)]
    tasks += [hold(load, until, False, idle_lives) for _ in range(load.idle)]
    await asyncio.gather(*tasks)
    return {"answers": answers, "drip_lives": drip_lives, "idle_lives": idle_lives}


def run_attack(load: Load, out: Any) -> None:
    out.send(asyncio.run(attack(load)))


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(load: Load, pid: int) -> dict[str, Any]:
    receive, send = multiprocessing.Pipe(duplex=False)
    attacker = multiprocessing.Process(target=run_attack, args=(load, send))
    idle_rss = peak_rss_mib(pid)
    attacker.start()
    latencies: list[float] = []
    refusals: list[float | None] = []
    failed = 0
    until = time.monotonic() + load.seconds
    for round_ in itertools.count(1):
        if time.monotonic() >= until:
            break
        took = probe(load.port)
        if took is None:
            failed += 1
        else:
            latencies.append(took)
        if round_ % 10 == 0:
            refusals.append(probe(load.port, OVERSIZED, b"HTTP/1.1 431"))
        time.sleep(PROBE_EVERY)
    found = receive.recv() if receive.poll(load.seconds + 30) else {}
    attacker.join(10)
    if attacker.is_alive():
        attacker.kill()
    return {
        **found,
        "latencies": latencies,
        "failed": failed,
        "refusals": refusals,
        "idle_rss": idle_rss,
        "peak_rss": peak_rss_mib(pid),
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _spread(times: list[float | None]) -> str:
    """Median / max of the times, or how many got another answer."""
    answered = sorted(t for t in times if t is not None)
    if len(answered) < len(times):
        return f"{len(times) - len(answered)} of {len(times)} not answered 431"
    return f"{_ms(statistics.median(answered))} / {_ms(answered[-1])}" if answered else "-"


def _lives(lives: list[float]) -> str:
    if not lives:
        return "none closed by the server"
    return f"{len(lives)} closed by the server, after {min(lives):.1f}–{max(lives):.1f} s"


def report(load: Load, found: dict[str, Any], baseline: bool, command: str) -> str:
    latencies = sorted(found["latencies"])
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0
    answers: list[tuple[str, float]] = found.get("answers", [])
    statuses = sorted({status for status, _ in answers})
    delays = sorted(delay for _, delay in answers)
    lines = [
        BASELINE_SECTION if baseline else SECTION,
        "",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {machine()}; "
        f"load average {os.getloadavg()[0]:.1f} at the end (a shared machine)",
        f"- command: `{command}`",
        f"- server: {BASELINE if baseline else '`python -m app serve`, default limits'}",
        f"- load for {load.seconds:.0f} s: {load.blasters} clients sending {load.header_mb} MB "
        f"header lines, {load.drips} connections dripping a header line every "
        f"{load.drip_every:.0f} s, {load.idle} idle connections (each re-opened when closed)",
        "",
        "| what | value |",
        "|---|---|",
        f"| /healthz probes answered / failed | {len(latencies)} / {found['failed']} |",
        f"| /healthz p50 | {_ms(statistics.median(latencies)) if latencies else '-'} |",
        f"| /healthz p99 | {_ms(p99)} |",
        f"| /healthz max | {_ms(latencies[-1]) if latencies else '-'} |",
        f"| 128 KiB header line from the prober: 431 in, median / max "
        f"| {_spread(found['refusals'])} |",
        f"| {load.header_mb} MB header lines: answers "
        f"| {len(answers)}: {', '.join(statuses) or 'none'} |",
        f"| {load.header_mb} MB header lines: time to the answer, median / max | "
        f"{_ms(statistics.median(delays)) if delays else '-'} / "
        f"{_ms(delays[-1]) if delays else '-'} |",
        f"| drip connections | {_lives(found.get('drip_lives', []))} |",
        f"| idle connections | {_lives(found.get('idle_lives', []))} |",
        f"| server peak RSS, before / after | {found['idle_rss']:.0f} / "
        f"{found['peak_rss']:.0f} MiB |",
        "",
        "The large-header times are seen by clients that share a process (and its event "
        "loop) with the 1,000 other connections; the prober's 431 time is measured alone, "
        "like /healthz.",
    ]
    return "\n".join(lines) + "\n"


def run(
    shape: tuple[float, int, int, int, float, int], baseline: bool, header_timeout: float | None
) -> tuple[Load, dict[str, Any]]:
    """Starts the server, attacks it while probing, stops it: (the load, what was found)."""
    settings = {} if header_timeout is None else {"COMPACT_HEADER_TIMEOUT": str(header_timeout)}
    with (
        tempfile.TemporaryDirectory(prefix="bench-headers-") as scratch,
        server(baseline, Path(scratch), **settings) as (port, pid),
    ):
        load = Load(port, *shape)
        return load, measure(load, pid)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.headers", description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--blasters", type=int, default=8)
    parser.add_argument("--header-mb", type=int, default=64)
    parser.add_argument("--drips", type=int, default=500)
    parser.add_argument("--drip-every", type=float, default=5.0)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument(
        "--header-timeout", type=float, help="COMPACT_HEADER_TIMEOUT (default: the setting's)"
    )
    parser.add_argument("--baseline", action="store_true", help="plain uvicorn instead")
    parser.add_argument("--write", action="store_true", help="into bench/RESULTS.md")
    args = parser.parse_args(argv)
    shape = (args.seconds, args.blasters, args.header_mb, args.drips, args.drip_every, args.idle)
    load, found = run(shape, args.baseline, args.header_timeout)
    command = "python -m bench.headers " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(load, found, args.baseline, command.strip())
    print(text)
    if args.write:
        write_section(BASELINE_SECTION if args.baseline else SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
