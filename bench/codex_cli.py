"""The real Codex CLI through the proxy, against the tests' fake provider with a small window:
`python -m bench.codex_cli` (`--codex PATH` to reuse a binary; else `npm install
@openai/codex@0.171.0` into a temporary folder, never into the project).

Codex is given a task that reads files of a scratch repository one by one (the fake model
asks for `cat` of each after a reasoning item, Codex runs it and sends the reasoning back),
more than the window holds: run directly, the provider refuses it for its length before the
task ends; through the proxy, set up as docs/proxy.md says (`codex -c openai_base_url=...`,
or the proxy named in `[model_providers]`), it is compacted on the way and the task
finishes. Printed per run: the seconds until Codex's first request reached the provider
(its WebSocket refused with a 426 through the proxy), the requests, the provider's context-
length refusals, how many requests from the first compacted one on carry the rule of the
scratch repository's AGENTS.md, the proxy's actions and its mean overhead (its
`/metrics`), Codex's exit code and its last line.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.cli_relay import npm_installed
from tests.fakes.provider import (
    FakeProvider,
    Limits,
    Received,
    Text,
    Thinking,
    ToolCall,
    answer,
)
from tests.proxy.live import serve_proxy

MODEL = "gpt-compact-bench"
WINDOW = 32_000
FILES = 24
LINES = 200  # per file: about 2,400 tokens
CODEX = "@openai/codex@0.171.0"
TASK = f"Read each of the {FILES} files in parts/ with cat, in order, then say Done."
# The project's rule in its AGENTS.md, which Codex sends in its instructions message: it must
# reach the model in every request after a compaction too.
RULE = "Never edit files under parts/; report values as hexadecimal (rule 7f3a)."


def _repository(root: Path) -> Path:
    work = root / "work"
    (work / "parts").mkdir(parents=True)
    for n in range(FILES):
        lines = [
            f"part {n:02d} line {i:03d}: value = {n * 1000 + i} # checked" for i in range(LINES)
        ]
        (work / "parts" / f"part_{n:02d}.txt").write_text("\n".join(lines) + "\n")
    (work / "AGENTS.md").write_text(f"# Project rules\n\n{RULE}\n")
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


def _next_read(received: Received) -> Any:
    """The fake model: `cat` the file after the latest one read, then `Done.`."""
    body = received.json if isinstance(received.json, dict) else {}
    read = -1
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call":
            found = re.search(r"part_(\d+)", str(item.get("arguments")))
            read = int(found.group(1)) if found else read
    if read + 1 >= FILES:
        return answer(Text("Done."))
    thinking = Thinking(f"Part {read + 1:02d} next.", "gAAAA" + f"{read + 1:02d}" * 100)
    return answer(thinking, ToolCall("exec_command", {"cmd": f"cat parts/part_{read + 1:02d}.txt"}))


def rules_after_compaction(bodies: list[Any]) -> tuple[int, int]:
    """Of the requests from the first compacted one on (it carries fewer calls than the one
    before it), how many carry AGENTS.md's rule; (0, 0) when none was compacted."""
    calls = [
        sum(isinstance(i, dict) and i.get("type") == "function_call" for i in _input(b))
        for b in bodies
    ]
    first = next((k for k in range(1, len(calls)) if calls[k] < calls[k - 1]), None)
    if first is None:
        return 0, 0
    after = bodies[first:]
    return sum(RULE in orjson.dumps(b).decode() for b in after), len(after)


def _input(body: Any) -> list[Any]:
    found = body.get("input") if isinstance(body, dict) else None
    return found if isinstance(found, list) else []


def _refusals(provider: FakeProvider) -> int:
    return sum(b"context_length_exceeded" in b"".join(e.sent.chunks) for e in provider.exchanges)


def _actions(api: str) -> tuple[dict[str, int], float]:
    """The proxy's actions, and its mean time before a request left (ms), from `/metrics`."""
    text = httpx.get(f"{api}/metrics").text
    found = re.findall(r'context_compact_proxy_requests_total\{action="(\w+)"\} (\d+)', text)
    sums = re.findall(r"context_compact_proxy_overhead_seconds_(sum|count)\{[^}]*\} (\S+)", text)
    total = {kind: sum(float(v) for k, v in sums if k == kind) for kind in ("sum", "count")}
    mean = 1000 * total["sum"] / total["count"] if total["count"] else 0.0
    return {action: int(float(n)) for action, n in found}, round(mean, 1)


def _provider_entry(home: Path, base: str) -> None:
    """The proxy named in Codex's configuration as a provider of its own (docs/proxy.md)."""
    (home / "config.toml").write_text(
        'model_provider = "compact"\n\n[model_providers.compact]\n'
        'name = "OpenAI through Context Compact"\n'
        f'base_url = "{base}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
    )


def run(codex: Path, root: Path, how: str) -> dict[str, Any]:
    """One run of the task: `direct`, `proxy` (`-c openai_base_url`) or `provider_entry`
    (`[model_providers]`)."""
    through_proxy = how != "direct"
    work = _repository(root / how)
    home = work.parent / "codex-home"
    home.mkdir()
    with FakeProvider(Limits(windows={MODEL: WINDOW}), validate=True) as provider:
        provider.respond_with(_next_read)
        models = {MODEL: {"context_window": WINDOW, "tokenizer": "o200k"}}
        with serve_proxy(provider.url, work.parent, models=models) as live:
            base = (live.proxy if through_proxy else provider.url) + "/v1"
            env = {**os.environ, "CODEX_HOME": str(home), "CODEX_API_KEY": "sk-bench"}
            command = [str(codex), "exec", "--skip-git-repo-check", "-m", MODEL]
            if how == "provider_entry":
                _provider_entry(home, base)
                env = {**os.environ, "CODEX_HOME": str(home), "OPENAI_API_KEY": "sk-bench"}
            else:
                command += ["-c", f"openai_base_url={base}"]
            command.append(TASK)
            began = time.monotonic()
            done = subprocess.run(
                command, cwd=work, env=env, capture_output=True, text=True, timeout=600
            )
            posts = [e.received for e in provider.exchanges if e.received.method == "POST"]
            first = posts[0].at - began if posts else None
            actions, overhead = _actions(live.api) if through_proxy else ({}, 0.0)
            errors = [
                e
                for e in provider.exchanges
                if e.sent.status != 200 and e.received.method == "POST"
            ]
            last = (done.stdout.strip().splitlines() or [""])[-1]
            carried, compacted = rules_after_compaction([r.json for r in posts])
            return {
                "run": how,
                "first_request_s": None if first is None else round(first, 2),
                "requests": len(posts),
                "reasoning_items_sent": sum(
                    isinstance(i, dict) and i.get("type") == "reasoning"
                    for r in posts
                    for i in (r.json or {}).get("input") or []
                ),
                "refused_for_length": _refusals(provider),
                "agents_md_after_compaction": f"{carried} of {compacted}",
                "other_errors": len(errors),
                "actions": actions,
                "overhead_ms_mean": overhead,
                "exit": done.returncode,
                "last_line": last,
                "ran_out_of_room": "context window" in (done.stdout + done.stderr),
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex", type=Path, help="a codex binary (else installed from npm)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codex-bench-") as scratch:
        root = Path(scratch)
        codex = args.codex or npm_installed(CODEX, root / "npm", "codex")
        for how in ("direct", "proxy", "provider_entry"):
            print(orjson.dumps(run(codex, root, how)).decode(), flush=True)


if __name__ == "__main__":
    main()
