"""The benchmark runner: `python -m bench` (see docs/development.md, "Benchmarks").

Every figure is measured side by side in one run on the same inputs, and targets are
ratios between such figures, so a noisy machine moves both sides together. Inputs are
real transcripts of `tests/data/corpus/`; each round salts them (a tag at the start of every
message) so that nothing is already in the token cache unless the round says so.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import tiktoken

from app.adapters.token_cache import CachingTokenizer
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message
from app.core.options.compact import CompactOptions
from app.core.options.params import RestoreParams, resolve_params
from app.core.tokens import count_text
from app.settings import Settings
from app.wiring.service import build_service
from bench.corpus import (
    Msg,
    build_transcript,
    load_transcripts,
    salted,
    with_file_reads,
    write_workdir_files,
)
from bench.server import running_server

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
JSON = {"content-type": "application/json"}


@dataclass
class Config:
    tokens: int = 200_000
    repeat: int = 5
    concurrency: int = 64
    llm_delay: float = 1.0
    restore_files: int = 5
    cache_entries: int = 50_000


@dataclass
class Run:
    """Medians (seconds unless named otherwise) and facts of one run."""

    values: dict[str, float] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)


def median_time(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _post(client: httpx.Client, path: str, body: bytes) -> dict[str, Any]:
    response = client.post(path, content=body, headers=JSON)
    response.raise_for_status()
    data: dict[str, Any] = orjson.loads(response.content)
    return data


def _body(messages: list[Msg], **extra: Any) -> bytes:
    return orjson.dumps({"messages": messages, **extra})


def _count_text_joined(messages: list[Msg]) -> str:
    return "\n".join(count_text(Message.model_validate(m))[0] for m in messages)


def _proc_status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise KeyError(key)


def measure_counting(url: str, messages: list[Msg], encoding: Any, cfg: Config, run: Run) -> None:
    """Raw tiktoken (the floor), /count cold, /count after one appended message."""
    raw, cold, warm = [], [], []
    with httpx.Client(base_url=url, timeout=120) as client:
        for r in range(cfg.repeat):
            msgs = salted(messages, f"[count-{r}]")
            text = _count_text_joined(msgs)
            seconds, _ = _timed(lambda t=text: encoding.encode_ordinary(t))  # type: ignore[misc]
            raw.append(seconds)
            body = _body(msgs)
            seconds, data = _timed(lambda b=body: _post(client, "/count", b))  # type: ignore[misc]
            cold.append(seconds)
            appended = _body([*msgs, {"role": "user", "content": f"Next step {r}, please."}])
            seconds, more = _timed(lambda b=appended: _post(client, "/count", b))  # type: ignore[misc]
            warm.append(seconds)
            run.facts["token_count"] = data["token_count"]
            run.facts["body_bytes"] = len(body)
            run.facts["message_count"] = data["message_count"]
            assert more["message_count"] == data["message_count"] + 1
    run.values["raw_tiktoken"] = median_time(raw)
    run.values["count_cold"] = median_time(cold)
    run.values["count_append"] = median_time(warm)


def measure_compact(url: str, messages: list[Msg], cfg: Config, run: Run, label: str) -> None:
    """/compact (force) and /count of the same (cold) input, alternating."""
    counts, compacts = [], []
    with httpx.Client(base_url=url, timeout=120) as client:
        for r in range(cfg.repeat):
            body = _body(salted(messages, f"[{label}-count-{r}]"))
            seconds, _ = _timed(lambda b=body: _post(client, "/count", b))  # type: ignore[misc]
            counts.append(seconds)
            msgs = salted(messages, f"[{label}-compact-{r}]")
            body = _body(msgs, force=True)
            seconds, data = _timed(lambda b=body: _post(client, "/compact", b))  # type: ignore[misc]
            compacts.append(seconds)
            assert data["compacted"], data.get("reason")
            run.facts[f"{label}_restored_files"] = len(data["restored_files"])
            run.facts[f"{label}_chunks"] = data.get("summary_chunks")
    run.values[f"{label}_count"] = median_time(counts)
    run.values[f"{label}_compact"] = median_time(compacts)


def measure_compact_after_count(url: str, messages: list[Msg], cfg: Config, run: Run) -> None:
    """An agent's flow: `/count` of a body (cold), then `/compact` of that same body, whose
    counts the first call left in the token cache (as `/should-compact` before `/compact`
    leaves them)."""
    counts, compacts = [], []
    with httpx.Client(base_url=url, timeout=120) as client:
        for r in range(cfg.repeat):
            msgs = salted(messages, f"[flow-{r}]")
            body = _body(msgs)
            seconds, _ = _timed(lambda b=body: _post(client, "/count", b))  # type: ignore[misc]
            counts.append(seconds)
            body = _body(msgs, force=True)
            seconds, data = _timed(lambda b=body: _post(client, "/compact", b))  # type: ignore[misc]
            compacts.append(seconds)
            assert data["compacted"], data.get("reason")
    run.values["flow_count"] = median_time(counts)
    run.values["flow_compact"] = median_time(compacts)


def measure_health_under_load(
    url: str, messages: list[Msg], cfg: Config, run: Run, path: str = "/count"
) -> None:
    """/healthz latencies sampled while cold 200k-token requests to `path` run back to back."""
    label = path.strip("/").replace("-", "_")
    extra = {"force": True} if path == "/compact" else {}
    bodies = [_body(salted(messages, f"[load-{label}-{r}]"), **extra) for r in range(cfg.repeat)]
    done = threading.Event()

    def load() -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            for body in bodies:
                _post(client, path, body)
        done.set()

    latencies = []
    with httpx.Client(base_url=url, timeout=10) as client:
        client.get("/healthz")
        worker = threading.Thread(target=load)
        worker.start()
        while not done.is_set():
            seconds, response = _timed(lambda: client.get("/healthz"))
            response.raise_for_status()
            latencies.append(seconds)
            time.sleep(0.002)
        worker.join()
    latencies.sort()
    prefix = "healthz" if path == "/count" else f"healthz_{label}"
    run.values[f"{prefix}_p50"] = latencies[len(latencies) // 2]
    run.values[f"{prefix}_p99"] = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    run.values[f"{prefix}_max"] = latencies[-1]
    run.facts[f"{prefix}_samples"] = len(latencies)


def measure_concurrency(url: str, transcript: list[Msg], cfg: Config, run: Run) -> None:
    """`concurrency` /compact requests at once against an LLM that takes `llm_delay` s."""
    bodies = [_body(salted(transcript, f"[conc-{i}]"), force=True) for i in range(cfg.concurrency)]

    async def go() -> float:
        limits = httpx.Limits(max_connections=cfg.concurrency)
        async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
            await client.get("/healthz")
            start = time.perf_counter()
            responses = await asyncio.gather(
                *(client.post("/compact", content=b, headers=JSON) for b in bodies)
            )
            wall = time.perf_counter() - start
        for response in responses:
            response.raise_for_status()
            assert orjson.loads(response.content)["compacted"]
        return wall

    walls = [asyncio.run(go()) for _ in range(max(1, min(cfg.repeat, 3)))]
    run.values["concurrent_wall"] = median_time(walls)
    run.facts["concurrent_body_bytes"] = len(bodies[0])


def measure_memory(
    workdir: Path, data_dir: Path, messages: list[Msg], small: list[Msg], run: Run
) -> None:
    """Peak RSS of a fresh server during one 200k-token /compact, over its idle RSS."""
    body = _body(salted(messages, "[memory]"), force=True)
    with (
        running_server(workdir, data_dir) as (url, pid),
        httpx.Client(base_url=url, timeout=120) as client,
    ):
        _post(client, "/compact", _body(salted(small, "[warm]"), force=True))
        idle = _proc_status_kib(pid, "VmRSS")
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        _post(client, "/compact", body)
        peak = _proc_status_kib(pid, "VmHWM")
    run.values["memory_over_idle_bytes"] = (peak - idle) * 1024
    run.facts["memory_idle_kib"] = idle
    run.facts["memory_peak_kib"] = peak
    run.facts["memory_body_bytes"] = len(body)


def measure_langchain(messages: list[Msg], run: Run) -> None:
    try:
        from langchain_core.messages import convert_to_messages
        from langchain_core.messages.utils import count_tokens_approximately, trim_messages
    except ImportError:
        run.facts["langchain"] = "not installed (pip install -e '.[bench]')"
        return
    lc_messages = convert_to_messages(messages)
    counts, trims = [], []
    approx = 0
    for _ in range(3):
        seconds, approx = _timed(lambda: count_tokens_approximately(lc_messages))
        counts.append(seconds)
        seconds, _ = _timed(
            lambda: trim_messages(
                lc_messages,
                max_tokens=int(run.facts["token_count"] * 0.8),
                token_counter=count_tokens_approximately,
                strategy="last",
                include_system=True,
            )
        )
        trims.append(seconds)
    run.values["langchain_count"] = median_time(counts)
    run.values["langchain_trim"] = median_time(trims)
    run.facts["langchain_approx_tokens"] = approx


def measure_restore(workdir: Path, data_dir: Path, messages: list[Msg], run: Run) -> None:
    """File restoration of the 5 files, in-process (read + count in a worker thread)."""
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        workdir=str(workdir),
        data_dir=str(data_dir),
        summarizer="extractive",
        token_cache_entries=0,
    )
    service = build_service(settings)
    parsed = [Message.model_validate(m) for m in messages]
    options, server = CompactOptions(), service.defaults.options
    times = []
    for _ in range(5):
        seconds, selection = _timed(
            lambda: asyncio.run(
                service.steps.restore(parsed, resolve_params(RestoreParams, options, server))
            )
        )
        times.append(seconds)
    run.values["restore_5_files"] = median_time(times)
    run.facts["restored_files"] = len(selection.selection.restored)


def measure_cache_memory(entries: int, run: Run) -> None:
    """Bytes per entry of a full token cache (the keys and counts, not the texts)."""

    class Words:
        name = "words"

        def count(self, text: str) -> int:
            return len(text)

        def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [len(t) for t in texts]

    texts = [f"message {i} " * 8 for i in range(entries)]
    cache = CachingTokenizer(Words(), entries)
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    for start in range(0, entries, 1000):
        cache.count_batch(texts[start : start + 1000])
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    run.values["cache_bytes_per_entry"] = (after - before) / entries
    run.facts["cache_entries"] = len(cache)


def floor_encoding(tokenizer: TiktokenTokenizer) -> Any:
    """A private copy of the service's encoding, first used (and so owned) by this thread:
    the floor runs at tiktoken's best speed, as the service's own tokenizer thread does."""
    shared = tokenizer._encoding
    encoding = tiktoken.Encoding(
        name=f"{shared.name}_floor",
        pat_str=shared._pat_str,
        mergeable_ranks=shared._mergeable_ranks,
        special_tokens=shared._special_tokens,
    )
    encoding.encode_ordinary("warm up")
    return encoding


def one_run(cfg: Config, progress: Callable[[str], None]) -> Run:
    run = Run()
    tokenizer = TiktokenTokenizer()
    encoding = floor_encoding(tokenizer)
    with tempfile.TemporaryDirectory(prefix="compact-bench-") as tmp:
        workdir, data_dir = Path(tmp, "work"), Path(tmp, "data")
        workdir.mkdir()
        paths = write_workdir_files(workdir, cfg.restore_files)
        messages = with_file_reads(build_transcript(tokenizer, cfg.tokens), paths)
        transcripts = load_transcripts()
        small = sorted(transcripts, key=len)[len(transcripts) // 2]
        progress("counting, LangChain, /compact (extractive), /healthz under load")
        with running_server(workdir, data_dir) as (url, _):
            measure_counting(url, messages, encoding, cfg, run)
            measure_langchain(messages, run)
            measure_compact(url, messages, cfg, run, "extractive")
            measure_compact_after_count(url, messages, cfg, run)
            measure_health_under_load(url, messages, cfg, run)
            measure_health_under_load(url, messages, cfg, run, "/compact")
        progress("/compact with a zero-latency fake LLM, in one call and in chunks")
        # The target is the pipeline's own cost: the fake LLM takes the whole history in
        # one call. With the default input budget (100k tokens) a 200k history is summarized
        # in chunks, which tokenizes its transcript once more: measured beside it.
        one_call = {"COMPACT_SUMMARY_INPUT_BUDGET": str(cfg.tokens * 4)}
        with running_server(workdir, data_dir, llm_delay=0, **one_call) as (url, _):
            measure_compact(url, messages, cfg, run, "fake_llm")
        with running_server(workdir, data_dir, llm_delay=0) as (url, _):
            measure_compact(url, messages, cfg, run, "chunked")
        progress(f"{cfg.concurrency} concurrent /compact, fake LLM of {cfg.llm_delay} s")
        with running_server(workdir, data_dir, llm_delay=cfg.llm_delay) as (url, _):
            measure_concurrency(url, small, cfg, run)
        progress("peak memory of one /compact, file restoration, cache memory")
        measure_memory(workdir, data_dir, messages, small, run)
        measure_restore(workdir, data_dir, messages, run)
        measure_cache_memory(cfg.cache_entries, run)
    return run


@dataclass(frozen=True)
class Target:
    name: str
    measured: Callable[[Run], float]
    limit: float
    unit: str
    strict: bool = False

    def value(self, run: Run) -> float:
        return self.measured(run)

    def met(self, run: Run) -> bool:
        v = self.value(run)
        return v < self.limit if self.strict else v <= self.limit


def _v(key: str) -> Callable[[Run], float]:
    return lambda run: run.values[key]


def _ratio(a: str, b: str) -> Callable[[Run], float]:
    return lambda run: run.values[a] / run.values[b]


TARGETS = (
    Target(
        "/count 200k tokens over HTTP ÷ raw tiktoken",
        _ratio("count_cold", "raw_tiktoken"),
        1.3,
        "×",
    ),
    Target(
        "/count after appending one message ÷ first /count",
        _ratio("count_append", "count_cold"),
        0.15,
        "×",
    ),
    Target(
        "/compact (extractive) ÷ /count, same input, both cold",
        _ratio("extractive_compact", "extractive_count"),
        1.3,
        "×",
    ),
    Target(
        "/compact (zero-latency LLM) ÷ /count, same input, both cold",
        _ratio("fake_llm_compact", "fake_llm_count"),
        2.0,
        "×",
    ),
    Target(
        "/healthz p99 while a 200k /count runs",
        lambda r: r.values["healthz_p99"] * 1000,
        50,
        "ms",
        strict=True,
    ),
    Target("64 concurrent /compact, LLM of 1 s: wall time", _v("concurrent_wall"), 1.5, "s"),
    Target(
        "peak RSS of a 200k /compact over idle ÷ body size",
        lambda r: r.values["memory_over_idle_bytes"] / r.facts["memory_body_bytes"],
        3.0,
        "×",
    ),
)

TIMINGS = (
    ("raw tiktoken `encode_ordinary` (the floor)", "raw_tiktoken"),
    ("`/count` over HTTP, cold", "count_cold"),
    ("`/count` over HTTP, one message appended", "count_append"),
    ("LangChain `count_tokens_approximately` (in-process)", "langchain_count"),
    ("LangChain `trim_messages` to 80 % (in-process)", "langchain_trim"),
    ("`/compact` extractive summarizer", "extractive_compact"),
    ("`/count` beside it (same input)", "extractive_count"),
    ("`/count` of a body, then:", "flow_count"),
    ("`/compact` extractive of that same body (its counts cached)", "flow_compact"),
    ("`/compact` zero-latency fake LLM", "fake_llm_compact"),
    ("`/count` beside it (same input)", "fake_llm_count"),
    ("`/compact` fake LLM, default input budget (in chunks)", "chunked_compact"),
    ("`/count` beside it (same input)", "chunked_count"),
    ("file restoration of 5 files (in-process)", "restore_5_files"),
    ("`/healthz` p50 under load", "healthz_p50"),
    ("`/healthz` max under load", "healthz_max"),
    ("`/healthz` p99 during 200k `/compact` (extractive)", "healthz_compact_p99"),
    ("`/healthz` max during 200k `/compact` (extractive)", "healthz_compact_max"),
)


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.1f} ms"
    return f"{value:.2f}×"


def machine() -> str:
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs (nproc), {cpu}, Python {platform.python_version()}"


def report(cfg: Config, runs: list[Run], command: str) -> str:
    first = runs[0]
    heads = " | ".join(f"run {i + 1}" for i in range(len(runs)))
    lines = [
        "# Benchmark results",
        "",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine()}",
        f"- command: `{command}`",
        f"- input: {first.facts['token_count']:,} tokens (cl100k), "
        f"{first.facts['message_count']} messages, {first.facts['body_bytes']:,} bytes of JSON, "
        f"from tests/data/corpus; {cfg.repeat} rounds per figure, medians; each round salts the "
        "messages so counts start cold",
        f"- concurrency: {cfg.concurrency} /compact requests of "
        f"{first.facts['concurrent_body_bytes']:,} bytes each (one corpus transcript)",
        "",
        "## Targets",
        "",
        f"| target | limit | {heads} | met? |",
        "|---|---|" + "---|" * len(runs) + "---|",
    ]
    for t in TARGETS:
        values = " | ".join(_fmt(t.value(r), t.unit) for r in runs)
        met = (
            "yes"
            if all(t.met(r) for r in runs)
            else ("no" if not any(t.met(r) for r in runs) else "in some runs")
        )
        limit = f"{'<' if t.strict else '≤'} {_fmt(t.limit, t.unit)}"
        lines.append(f"| {t.name} | {limit} | {values} | {met} |")
    lines += ["", "## Timings (medians)", "", f"| what | {heads} |", "|---|" + "---|" * len(runs)]
    for name, key in TIMINGS:
        if key in first.values:
            lines.append(
                f"| {name} | " + " | ".join(f"{r.values[key] * 1000:.1f} ms" for r in runs) + " |"
            )
    lines += ["", "## Other facts", "", f"| fact | {heads} |", "|---|" + "---|" * len(runs)]
    facts = {
        "peak RSS over idle (MiB)": lambda r: f"{r.values['memory_over_idle_bytes'] / 2**20:.1f}",
        "idle RSS (MiB)": lambda r: f"{r.facts['memory_idle_kib'] / 1024:.1f}",
        "peak RSS during that /compact (MiB)": lambda r: (
            f"{r.facts['memory_peak_kib'] / 1024:.1f}" if "memory_peak_kib" in r.facts else "-"
        ),
        "token cache bytes per entry": lambda r: f"{r.values['cache_bytes_per_entry']:.0f}",
        f"token cache at {cfg.cache_entries:,} entries (MiB)": lambda r: (
            f"{r.values['cache_bytes_per_entry'] * cfg.cache_entries / 2**20:.1f}"
        ),
        "LangChain approximate tokens (exact in header)": lambda r: str(
            r.facts.get("langchain_approx_tokens", r.facts.get("langchain", "-"))
        ),
        "restored files": lambda r: str(r.facts["restored_files"]),
        "summary chunks: fake LLM in one call / default budget": lambda r: (
            f"{r.facts.get('fake_llm_chunks')} / {r.facts.get('chunked_chunks')}"
        ),
        "/healthz samples under load": lambda r: str(r.facts["healthz_samples"]),
        "/compact after a /count of the same body ÷ that /count": lambda r: (
            f"{r.values['flow_compact'] / r.values['flow_count']:.2f}×"
            if "flow_count" in r.values
            else "-"
        ),
    }
    for name, fn in facts.items():
        lines.append(f"| {name} | " + " | ".join(fn(r) for r in runs) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--tokens", type=int, default=Config.tokens)
    parser.add_argument("--repeat", type=int, default=Config.repeat)
    parser.add_argument("--runs", type=int, default=2, help="whole runs, reported side by side")
    parser.add_argument("--concurrency", type=int, default=Config.concurrency)
    parser.add_argument("--llm-delay", type=float, default=Config.llm_delay)
    parser.add_argument("--out", type=Path, default=RESULTS, help="'-' to print only")
    args = parser.parse_args(argv)
    cfg = Config(
        tokens=args.tokens,
        repeat=args.repeat,
        concurrency=args.concurrency,
        llm_delay=args.llm_delay,
    )

    def progress(message: str) -> None:
        print(f"  {message}", file=sys.stderr, flush=True)

    runs = []
    for i in range(args.runs):
        print(f"run {i + 1}/{args.runs}", file=sys.stderr, flush=True)
        runs.append(one_run(cfg, progress))
    command = "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(cfg, runs, command.strip())
    print(text)
    if str(args.out) != "-":
        existing = args.out.read_text() if args.out.exists() else ""
        marker = "\n## Notes"
        notes = existing[existing.index(marker) :] if marker in existing else ""
        args.out.write_text(text + notes)
    return 0
