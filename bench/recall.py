"""Recall on a large session, on both stores: `python -m bench.recall [--store both]`.

Writes `--archives` archives (default 100) of about `--kb` KB of JSON each (default 1024:
~100 MB in all) for one session, `--messages` messages each (tool outputs of words drawn
with a Zipf law from a 30,000-word vocabulary, so some words are everywhere and most are
rare), with the file store in a temporary data directory and with the PostgreSQL store
in a fresh database on `--admin-url` (dropped afterwards). Then, per store:

- the latency of `--queries` recalls, one at a time, each a different query of 2,000
  characters (~400 terms, of which 64 are searched): median, p99, max;
- the growth of this process's resident memory while `--concurrency` recalls of such
  queries run at once (16 threads calling the store, past the service's slots): the peak
  over the resident size before, sampled every 5 ms.

Prints the section and writes it into bench/RESULTS.md (`--no-write`: print only).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from app.adapters.archive_store import FileArchiveStore
from app.adapters.pg_database import Database
from app.adapters.pg_stores import PgArchiveStore
from app.core.ports import Archive, ArchiveRef, ArchiveStore
from app.core.recall.terms import parse_query
from app.core.sessions.ids import archive_sha256
from bench.load import percentile
from bench.postgres import ADMIN_URL, fresh_database
from bench.results import write_section
from bench.run import machine

SECTION = "## Recall"
SESSION = "s-bench"
QUERY_CHARS = 2000
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Corpus:
    """Deterministic words: a vocabulary and a Zipf law over it."""

    def __init__(self, seed: int = 7, size: int = 30_000) -> None:
        self.random = random.Random(seed)
        letters = "abcdefghijklmnopqrstuvwxyz"
        vocabulary: dict[str, None] = {}
        while len(vocabulary) < size:
            length = self.random.randint(2, 7)
            vocabulary["".join(self.random.choices(letters, k=length))] = None
        self.words = list(vocabulary)
        self._weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(size)))

    def text(self, words: int) -> str:
        drawn = self.random.choices(self.words, cum_weights=self._weights, k=words)
        lines = (" ".join(drawn[i : i + 12]) for i in range(0, len(drawn), 12))
        return "\n".join(f"src/{line.replace(' ', '_', 1)}" for line in lines)

    def query(self) -> str:
        """~400 terms, rare and common alike (uniform over the vocabulary), 2,000 chars."""
        terms: list[str] = []
        while len(" ".join(terms)) < QUERY_CHARS:
            terms.append(self.random.choice(self.words))
        return " ".join(terms)[:QUERY_CHARS].rsplit(" ", 1)[0]


def messages(corpus: Corpus, count: int, kb: int) -> list[dict[str, Any]]:
    words = max(1, kb * 1024 // count // 6)
    out: list[dict[str, Any]] = []
    for i in range(count):
        if i % 2 == 0:
            out.append({"role": "assistant", "content": corpus.text(words)})
        else:
            out.append({"role": "user", "content": corpus.text(words)})
    return out


def fill(store: ArchiveStore, corpus: Corpus, archives: int, count: int, kb: int) -> float:
    started = time.perf_counter()
    for n in range(archives):
        batch = messages(corpus, count, kb)
        ref = ArchiveRef(
            id=f"{n:020d}-bench",
            session_id=SESSION,
            message_count=len(batch),
            sha256=archive_sha256(batch),
        )
        store.save(Archive(ref=ref, created_at="2026-11-25T00:00:00+00:00", messages=batch))
    return time.perf_counter() - started


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


@contextmanager
def peak_rss() -> Iterator[list[int]]:
    """The highest resident size seen while the block runs (sampled every 5 ms)."""
    peak = [rss()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()
        peak[0] = max(peak[0], rss())


def measure(store: ArchiveStore, corpus: Corpus, queries: int, concurrency: int) -> dict[str, Any]:
    cpu: list[float] = []

    def recall(query: str) -> float:
        started, used = time.perf_counter(), time.thread_time()
        store.search(SESSION, parse_query(query), 5, lambda: 60.0)
        cpu.append(time.thread_time() - used)
        return time.perf_counter() - started

    recall(corpus.query())  # warm: the first connection, the page cache
    cpu.clear()
    latencies = [recall(corpus.query()) for _ in range(queries)]
    alone = sorted(cpu)
    batch = [corpus.query() for _ in range(concurrency)]
    before = rss()
    with ThreadPoolExecutor(concurrency) as pool, peak_rss() as peak:
        together = list(pool.map(recall, batch))
    return {
        "median": statistics.median(latencies),
        "p99": percentile(sorted(latencies), 0.99),
        "max": max(latencies),
        "cpu_p99": percentile(alone, 0.99),
        "concurrent_max": max(together),
        "growth": peak[0] - before,
    }


def run_store(name: str, make: Callable[[], ArchiveStore], args: argparse.Namespace) -> list[str]:
    corpus = Corpus()
    store = make()
    filled = fill(store, corpus, args.archives, args.messages, args.kb)
    load = os.getloadavg()[0]
    found = measure(store, corpus, args.queries, args.concurrency)
    mb = 1024 * 1024
    return [
        f"| {name} | {filled:.0f} | {found['median'] * 1000:.0f} | {found['p99'] * 1000:.0f} "
        f"| {found['max'] * 1000:.0f} | {found['cpu_p99'] * 1000:.0f} "
        f"| {found['concurrent_max'] * 1000:.0f} | {found['growth'] / mb:.1f} "
        f"| {load:.1f}–{os.getloadavg()[0]:.1f} |"
    ]


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("file", "pg", "both"), default="both")
    parser.add_argument("--archives", type=int, default=100)
    parser.add_argument("--kb", type=int, default=1024)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--admin-url", default=os.environ.get("COMPACT_TEST_POSTGRES", ADMIN_URL))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rows: list[str] = []
    if args.store in ("file", "both"):
        with tempfile.TemporaryDirectory(prefix="compact-recall-bench-") as tmp:
            rows += run_store("file", lambda: FileArchiveStore(tmp), args)
    if args.store in ("pg", "both"):
        with fresh_database(args.admin_url) as url:
            database = Database(url)
            try:
                rows += run_store("PostgreSQL", lambda: PgArchiveStore(database), args)
            finally:
                database.close()
    section = "\n".join(
        (
            SECTION,
            "",
            f"`python -m bench.recall --archives {args.archives} --kb {args.kb} --messages "
            f"{args.messages} --queries {args.queries} --concurrency {args.concurrency}` "
            f"on {machine()}: one session of {args.archives} archives of ~{args.kb} KB "
            f"({args.messages} messages each), recalls of {args.queries} different 2,000-"
            "character queries (~400 terms, 64 searched) one at a time, then "
            f"{args.concurrency} at once; memory is this process's resident size (the "
            "database server's own is not counted). The machine is shared: the load average "
            "(1 min) before and after the recalls says how much of it the run had; the CPU "
            "time of this process's thread per recall does not depend on it (for PostgreSQL "
            "it leaves out the server's).",
            "",
            "| store | fill s | median ms | p99 ms | max ms | p99 CPU ms (this process) "
            "| max of concurrent ms | RSS growth MB | load average |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        )
    )
    print(section)
    if not args.no_write:
        write_section(SECTION, section + "\n")
    return section


if __name__ == "__main__":
    main()
