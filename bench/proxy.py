"""The transparent proxy's benchmark: `python -m bench.proxy` (run by hand, never in CI).

The fake provider of the tests (`tests/fakes/provider`) on 127.0.0.1, the whole app with its
proxy in front of it (`tests/proxy/live.py`), and a minimal HTTP/1.1 client
(`bench/proxy_http.py`), measuring side by side in one run:
- the time to the first byte added by the proxy, requests paired direct and through it
  (alternating, the same bytes), 1 KB and ~900 KB bodies below the threshold;
- a stream's wall time through the proxy over directly;
- pass-through fidelity: answers (text, tool use, thinking, an error stream, an error; both
  APIs, streamed or not) byte-identical both ways;
- long sessions (`../shared/corpus-long`, both shapes) replayed through it at small windows
  (`bench/proxy_replay.py`): context-length errors reaching the agent, compactions put in
  without the agent waiting, cache reads, the facts the provider still received.
The timings run the fake provider and `context-compact serve` as processes of their own
(`bench/fake_provider.py`); the rest runs in this one. `--write` puts the tables into
`## Proxy` of bench/RESULTS.md; `--quick` is a smoke run. `--replay-only` skips the
timings and the fidelity cases; `--sessions N` replays the N smallest sessions, `--shapes`
the named shapes only: the narrowest run that answers a question about the replays.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from bench.fake_provider import STREAM_MODEL
from bench.proxy_http import Client
from bench.proxy_replay import replay, summed
from bench.replay import CORPUS_LONG, load_conversations
from bench.results import write_section
from bench.run import machine
from tests.fakes.provider import FakeProvider, StreamError, Text, Thinking, ToolCall, answer, raw
from tests.proxy.live import serve_proxy

SECTION = "## Proxy"
ANTHROPIC = {"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"}
OPENAI = {"authorization": "Bearer sk-bench"}


@contextlib.contextmanager
def processes(data: Path) -> Iterator[tuple[str, str]]:
    """The fake provider and `context-compact serve` with its proxy, each a process of its
    own on 127.0.0.1; yields (provider URL, proxy URL)."""
    fake = subprocess.Popen(
        [sys.executable, "-m", "bench.fake_provider"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert fake.stdout is not None
    provider = fake.stdout.readline().strip()
    api, proxy = _free_port(), _free_port()
    env = {
        **os.environ,
        "COMPACT_PORT": str(api),
        "COMPACT_PROXY_PORT": str(proxy),
        "COMPACT_PROXY_ANTHROPIC_URL": provider,
        "COMPACT_PROXY_OPENAI_URL": provider,
        "COMPACT_DATA_DIR": str(data),
        "COMPACT_WORKDIR": str(data),
        "COMPACT_LOG_LEVEL": "warning",
    }
    server = subprocess.Popen([sys.executable, "-m", "app", "serve"], env=env)
    try:
        _wait_for(api)
        yield provider, f"http://127.0.0.1:{proxy}"
    finally:
        server.terminate()
        server.wait(10)
        assert fake.stdin is not None
        fake.stdin.close()
        fake.wait(10)
        fake.stdout.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


def _client(url: str) -> Client:
    host, port = url.removeprefix("http://").split(":")
    return Client(host, int(port))


def _body(kilobytes: int) -> bytes:
    text = "lorem ipsum dolor sit amet, " * (kilobytes * 1024 // 28 // 40 + 1)
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i in range(40)]
    body = orjson.dumps({"model": "gpt-4.1", "max_tokens": 100, "messages": messages})
    return (
        body
        if kilobytes > 1
        else orjson.dumps(
            {
                "model": "gpt-4.1",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": "x" * 900}],
            }
        )
    )


def _quantile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def first_byte(provider: str, proxy: str, kilobytes: int, pairs: int) -> dict[str, Any]:
    body = _body(kilobytes)
    direct, through = _client(provider), _client(proxy)
    added: list[float] = []
    seen: list[str] = []
    for i in range(pairs + 5):
        order = [(direct, "d"), (through, "p")]
        random.Random(i).shuffle(order)
        times = {}
        for client, label in order:
            answer = await client.post("/v1/chat/completions", body, OPENAI)
            times[label] = answer.first_byte
            if label == "p":
                seen.append(answer.headers.get("x-compact-action", "?"))
        if i >= 5:  # warm-up: connections, the token cache
            added.append((times["p"] - times["d"]) * 1000)
    await direct.close()
    await through.close()
    return {
        "body_kb": round(len(body) / 1024),
        "pairs": pairs,
        "added_p50_ms": round(statistics.median(added), 2),
        "added_p99_ms": round(_quantile(added, 0.99), 2),
        "actions": sorted(set(seen)),
    }


async def stream_ratio(provider: str, proxy: str, runs: int) -> dict[str, Any]:
    body = orjson.dumps(
        {
            "model": STREAM_MODEL,
            "max_tokens": 100,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
    )
    direct, through = _client(provider), _client(proxy)
    ratios = []
    for i in range(runs):
        walls = {}
        order = [(direct, "d"), (through, "p")]
        random.Random(i).shuffle(order)
        for client, label in order:
            walls[label] = (await client.post("/v1/messages", body, ANTHROPIC)).wall
        ratios.append(walls["p"] / walls["d"])
    await direct.close()
    await through.close()
    return {
        "runs": runs,
        "median_ratio": round(statistics.median(ratios), 3),
        "p90_ratio": round(_quantile(ratios, 0.9), 3),
    }


CASES: list[tuple[str, str, Any, bool]] = [
    ("anthropic text", "/v1/messages", answer("Hello."), False),
    ("anthropic text stream", "/v1/messages", answer("Hello."), True),
    (
        "anthropic tool use stream",
        "/v1/messages",
        answer(ToolCall("bash", {"command": "ls"})),
        True,
    ),
    ("anthropic thinking stream", "/v1/messages", answer(Thinking("hmm", "sig"), Text("ok")), True),
    (
        "anthropic error stream",
        "/v1/messages",
        answer("x", error_after=3, error=StreamError("overloaded_error", "Overloaded")),
        True,
    ),
    (
        "anthropic 529",
        "/v1/messages",
        raw(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        False,
    ),
    ("openai chat", "/v1/chat/completions", answer("Hello."), False),
    ("openai chat stream", "/v1/chat/completions", answer("Hello."), True),
    (
        "openai tool calls stream",
        "/v1/chat/completions",
        answer(ToolCall("bash", {"command": "ls"})),
        True,
    ),
    ("openai responses", "/v1/responses", answer("Hello."), False),
    ("openai responses stream", "/v1/responses", answer("Hello."), True),
]


async def fidelity(provider: FakeProvider, proxy: str) -> dict[str, Any]:
    same, cases = 0, []
    for name, path, script, stream in CASES:
        model = "claude-sonnet-4-6" if path == "/v1/messages" else "gpt-4o"
        key = "input" if path == "/v1/responses" else "messages"
        value: Any = "hi" if key == "input" else [{"role": "user", "content": "hi"}]
        body = orjson.dumps({"model": model, "max_tokens": 50, "stream": stream, key: value})
        headers = ANTHROPIC if path == "/v1/messages" else OPENAI
        bodies = []
        for url in (provider.url, proxy):
            provider.script(script)
            client = _client(url)
            got = await client.post(path, body, headers)
            await client.close()
            bodies.append((got.status, got.body))
        identical = bodies[0] == bodies[1]
        same += identical
        cases.append({"case": name, "identical": identical})
    return {"identical": same, "cases": len(CASES), "detail": cases}


async def measure(args: argparse.Namespace, data: Path) -> dict[str, Any]:
    report: dict[str, Any] = {}
    if not args.replay_only:
        with processes(data / "timed") as (provider_url, proxy_url):
            report["first_byte"] = [
                await first_byte(provider_url, proxy_url, kb, args.pairs) for kb in (1, 900)
            ]
            report["stream"] = await stream_ratio(provider_url, proxy_url, args.stream_runs)
        with FakeProvider() as provider, serve_proxy(provider.url, data / "pass") as live:
            report["fidelity"] = await fidelity(provider, live.proxy)
    conversations = _chosen(load_conversations(args.corpus, quick=args.quick), args)
    replays = []
    for window in args.windows:
        for c in conversations:
            started = time.perf_counter()
            done = await replay(
                c.name,
                c.shape,
                c.messages,
                window,
                data / f"{c.name}.{c.shape}.{window}",
                args.summary_seconds * args.time_scale,
                args.turn_seconds * args.time_scale,
                local_seconds=args.turn_seconds,
            )
            replays.append(done)
            print(
                f"replayed {c.name} {c.shape} {window}: {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
    report["replay"] = {
        "per_run": [
            {
                "session": r.name,
                "shape": r.shape,
                "window": r.window,
                "requests": r.requests,
                "overflows": r.overflows,
                "compactions": dict(r.compactions),
                "summarizer_calls": r.summarizer_calls,
                "repeated": r.repeated,
                "summarizer_input": r.summarizer_input,
                "billed": round(r.billed),
                "facts": {k: list(v) for k, v in r.facts.items()},
            }
            for r in replays
        ],
        "total": summed(replays),
        "by_window": {str(w): summed([r for r in replays if r.window == w]) for w in args.windows},
    }
    return report


def _chosen(conversations: list[Any], args: argparse.Namespace) -> list[Any]:
    """The conversations `--sessions` and `--shapes` keep (the smallest sessions first)."""
    names = list(dict.fromkeys(c.name for c in conversations))[: args.sessions]
    return [c for c in conversations if c.name in names and c.shape in args.shapes]


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def cost_rows(report: dict[str, Any], corpus: str) -> list[str]:
    """The configured summarizer's cost per window: calls per compaction put in, calls
    repeating an earlier input exactly, its input over the agent's billed input, and the
    first request's cache share after a compaction."""
    lines = [
        "",
        f"The configured summarizer's cost (corpus `{corpus}`; its input counted as the "
        "prompt an LLM would read; the agent's input as billed, cache reads at 0.1, cache "
        "writes at 1.25):",
        "",
        "| window | compactions put in | summarizer calls | per compaction | repeating an "
        "earlier input | summarizer input tokens | ÷ agent's billed input | first request "
        "read from cache |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = [*report["replay"]["by_window"].items(), ("all", report["replay"]["total"])]
    for window, w in rows:
        lines.append(
            f"| {window} | {sum(w['compactions'].values())} | {w['summarizer_calls']} "
            f"| {_ratio(w['calls_per_head'])} | {w['repeated']} | {w['summarizer_input']:,} "
            f"| {_exact(w['summarizer_share'])} | {_exact(w['cache_after'])} |"
        )
    return lines


def _percent(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.0f}%"


def _exact(share: float | None) -> str:
    """A share beside its target, not rounded up to it."""
    return "—" if share is None else f"{int(1000 * share) / 10:g}%"


def render(report: dict[str, Any], args: argparse.Namespace, command: str) -> str:
    lines = [SECTION, "", f"`{command}` on {machine()}.", ""]
    if "first_byte" in report:
        lines += _timings(report)
    lines += _replays(report, args)
    lines += cost_rows(report, args.corpus.name)
    return "\n".join(lines) + "\n"


def _timings(report: dict[str, Any]) -> list[str]:
    lines = [
        "| body (not compacted) | pairs | added first byte, p50 | p99 | proxy's action |",
        "|---|---|---|---|---|",
    ]
    for row in report["first_byte"]:
        actions = ", ".join(row["actions"])
        lines.append(
            f"| {row['body_kb']} KB | {row['pairs']} | {row['added_p50_ms']} ms "
            f"| {row['added_p99_ms']} ms | {actions} |"
        )
    s, f = report["stream"], report["fidelity"]
    names = ", ".join(c["case"] for c in f["detail"])
    lines += [
        "",
        "A stream of 200 events 2 ms apart, wall time through the proxy ÷ direct: median "
        f"{s['median_ratio']}, p90 {s['p90_ratio']} ({s['runs']} runs).",
        "",
        f"Pass-through fidelity: {f['identical']} of {f['cases']} answers byte-identical "
        f"({names}).",
        "",
    ]
    return lines


def _replays(report: dict[str, Any], args: argparse.Namespace) -> list[str]:
    t = report["replay"]["total"]
    summary, turn = args.summary_seconds * args.time_scale, args.turn_seconds * args.time_scale
    windows = ", ".join(map(str, args.windows))
    all_kept, all_facts = t["all_facts"]
    facts = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in t["facts"].items())
    shapes = "both shapes" if len(args.shapes) > 1 else f"shape {args.shapes[0]}"
    lines = [
        f"Long sessions replayed through the proxy at windows {windows}, {shapes}; a "
        f"background summary takes {summary:g} s, a turn {turn:g} s (time scale "
        f"{args.time_scale:g} of {args.summary_seconds:g} s and {args.turn_seconds:g} s; the "
        "proxy's own work, which the scale cannot shrink, takes none of it: each turn ends "
        "once the background compactions are done or waiting on the summarizer):",
        "",
        "| measure | result |",
        "|---|---|",
        f"| requests | {t['requests']} |",
        f"| context-length errors reaching the agent | {t['overflows']} "
        f"(other errors: {t['other_errors']}) |",
        f"| compactions, by how they came | {t['compactions']} |",
        f"| compactions put in without the agent waiting | {_exact(t['without_waiting'])} "
        f"({t['compactions'].get('applied', 0)} of {sum(t['compactions'].values())}; "
        f"{_percent(t['foreseen_without_waiting'])} of those the start mark could foresee: "
        f"{t['jumps']} came after one turn that added more than the room between the start "
        f"mark and the limit; {t['quick']} put in were made by the extractive summarizer in "
        "the background, the configured one's too late for them) |",
        "| tokens read from cache between compactions / first request after one (after "
        "one that kept a previous head; of what it resent, all but the turn the agent had "
        "just added) | "
        f"{_exact(t['cache_between'])} / {_exact(t['cache_after'])} "
        f"({_percent(t['cache_after_later'])}; {_percent(t['cache_after_resent'])}) |",
        f"| facts the provider still received | {all_kept}/{all_facts} "
        f"({_percent(all_kept / max(1, all_facts))}) |",
        f"| by kind | {facts} |",
        "",
        "| window | compactions | without the agent waiting | of them extractive | "
        "read from cache on the first request after one | facts |",
        "|---|---|---|---|---|---|",
    ]
    for window, w in report["replay"]["by_window"].items():
        kept_w, all_w = w["all_facts"]
        lines.append(
            f"| {window} | {sum(w['compactions'].values())} | {_exact(w['without_waiting'])} "
            f"| {w['quick']} | {_exact(w['cache_after'])} | {kept_w}/{all_w} |"
        )
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--stream-runs", type=int, default=20)
    parser.add_argument("--corpus", type=Path, default=CORPUS_LONG)
    parser.add_argument(
        "--windows", type=lambda s: [int(w) for w in s.split(",")], default=[32_000, 64_000]
    )
    parser.add_argument("--summary-seconds", type=float, default=10.0)
    parser.add_argument("--turn-seconds", type=float, default=5.0)
    parser.add_argument("--time-scale", type=float, default=0.02)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--replay-only", action="store_true")
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--shapes", type=lambda s: s.split(","), default=["anthropic", "openai"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.pairs, args.stream_runs, args.windows = 30, 5, [32_000]
    command = "python -m bench.proxy " + " ".join(argv if argv is not None else sys.argv[1:])
    with tempfile.TemporaryDirectory() as data:
        report = asyncio.run(measure(args, Path(data)))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    text = render(report, args, command.strip())
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
