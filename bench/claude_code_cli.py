"""The real Claude Code CLI through the proxy, against the tests' fake provider with a small
window: `python -m bench.claude_code_cli` (`--claude PATH` to reuse a binary; else `npm
install @anthropic-ai/claude-code` into a temporary folder, never into the project).

Claude Code runs headless (`claude -p TASK --model MODEL --allowedTools Read`, a fresh
`HOME`, `ANTHROPIC_BASE_URL` at the proxy as docs/proxy.md says, a dummy
`ANTHROPIC_API_KEY`) in a work directory whose CLAUDE.md holds a distinctive project rule.
The fake model asks for each of the parts with `Read`, one by one, more than the window
holds, then ends. The same task runs direct (the provider's own URL) for comparison.
Between Claude Code and what it talks to sits a recording relay (`bench.cli_relay`): what
the agent saw. Printed per run: the requests that reached the provider, its refusals for
length, the errors the agent saw, the proxy's actions (its `/metrics`), the first
request that reached the provider compacted (fewer reads than the parts already read), in
how many requests from that one on the CLAUDE.md rule reached the provider, Claude Code's
exit code and its last line. `--write` replaces this benchmark's section of
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bench.cli_relay import npm_installed, proxy_actions, relay, results_table
from bench.results import write_section
from tests.fakes.provider import FakeProvider, Limits, Received, Text, ToolCall, answer
from tests.proxy.live import serve_proxy

PACKAGE = "@anthropic-ai/claude-code"
MODEL = "claude-sonnet-4-5"
# Claude Code's system prompt and tools are about 26k tokens and it asks for 32k of output:
# a window of 96k leaves it about 38k for the conversation.
WINDOW = 96_000
FILES = 40
LINES = 120  # per file: about 2,000 tokens as Read returns them (numbered lines)
RULE = "Every summary of the parts ends with the words CORMORANT-LEDGER-7."
TASK = f"Read each of the {FILES} files in parts/ with the Read tool, in order, then say Done."
HEADING = "## Proxy: the real Claude Code CLI, CLAUDE.md after a compaction (bench.claude_code_cli)"
PART = re.compile(r"part_(\d+)\.txt")


def _work(root: Path) -> Path:
    work = root / "work"
    (work / "parts").mkdir(parents=True)
    (work / "CLAUDE.md").write_text(f"# Project rules\n\n{RULE}\n")
    for n in range(FILES):
        lines = [f"part {n:02d} line {i:03d}: value = {n * 1000 + i} # ok" for i in range(LINES)]
        (work / "parts" / f"part_{n:02d}.txt").write_text("\n".join(lines) + "\n")
    return work


def _blocks(body: Any) -> list[dict[str, Any]]:
    """Every content block of a Messages body's messages, in order."""
    found = []
    for message in body.get("messages") or [] if isinstance(body, dict) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, dict)]
    return found


def reads(body: Any) -> list[int]:
    """The parts a Messages body's `Read` calls asked for, in order."""
    found = []
    for block in _blocks(body):
        if block.get("type") == "tool_use" and block.get("name") == "Read":
            match = PART.search(str((block.get("input") or {}).get("file_path")))
            if match:
                found.append(int(match.group(1)))
    return found


def is_main(body: Any) -> bool:
    """The agent's own conversation: a Messages body with tools (side requests have none)."""
    return isinstance(body, dict) and bool(body.get("tools")) and bool(body.get("messages"))


def next_read(work: Path, received: Received) -> Any:
    """The fake model: `Read` the part after the latest one read, then `Done.`; a side
    request (no tools) gets a short text."""
    body = received.json
    if not is_main(body):
        return answer(Text("Reading parts"))
    read = reads(body)
    following = (read[-1] + 1) if read else 0
    if following >= FILES:
        return answer(Text("Done."))
    path = work / "parts" / f"part_{following:02d}.txt"
    return answer(Text(f"Part {following:02d}."), ToolCall("Read", {"file_path": str(path)}))


def is_compacted(body: Any) -> bool:
    """A body that no longer holds every read: fewer `Read` calls than parts up to the
    latest it asked for (a compaction summarized the others)."""
    read = reads(body)
    return bool(read) and len(read) < read[-1] + 1


@dataclass(frozen=True)
class RuleCount:
    first_compacted: int | None  # the index among the main requests, None when none was
    after: int  # the main requests from that one on
    with_rule: int  # of those, the ones that carried the rule's text


def rule_after_compaction(bodies: Sequence[bytes], rule: str = RULE) -> RuleCount:
    """From the first compacted main request on, how many carried `rule` verbatim."""
    main = [b for b in bodies if is_main(_json(b))]
    first = next((i for i, b in enumerate(main) if is_compacted(_json(b))), None)
    if first is None:
        return RuleCount(None, 0, 0)
    later = main[first:]
    needle = rule.encode()
    return RuleCount(first, len(later), sum(needle in b for b in later))


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def _for_length(status: int, body: bytes) -> bool:
    """Anthropic's refusals for length: the prompt alone, or with `max_tokens`."""
    return status == 400 and (b"prompt is too long" in body or b"context limit" in body)


def run(claude: Path, root: Path, how: str) -> dict[str, Any]:
    """One run of the task, `direct` or through the `proxy`."""
    work = _work(root / how)
    home = work.parent / "home"
    home.mkdir()
    with FakeProvider(Limits(windows={MODEL: WINDOW}), validate=True) as provider:
        provider.respond_with(lambda received: next_read(work, received))
        models = {MODEL: {"context_window": WINDOW, "tokenizer": "tiktoken"}}
        with serve_proxy(provider.url, work.parent, models=models) as live:
            upstream = live.proxy if how == "proxy" else provider.url
            with relay(upstream) as seen:
                env = {
                    **os.environ,
                    "HOME": str(home),
                    "ANTHROPIC_BASE_URL": seen.url,
                    "ANTHROPIC_API_KEY": "sk-ant-bench",
                    "DISABLE_TELEMETRY": "1",
                    "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                }
                command = [str(claude), "-p", TASK, "--model", MODEL, "--allowedTools", "Read"]
                done = subprocess.run(
                    command, cwd=work, env=env, capture_output=True, text=True, timeout=1200
                )
            answers = list(seen.answers)
            actions = proxy_actions(live.api) if how == "proxy" else {}
    posts = [e for e in provider.exchanges if e.received.method == "POST"]
    messages = [e for e in posts if e.received.path == "/v1/messages"]
    bodies = [e.received.body for e in messages]
    count = rule_after_compaction(bodies)
    return {
        "run": how,
        "requests": len(messages),
        "main_requests": sum(is_main(e.received.json) for e in messages),
        "refused_for_length": sum(_for_length(e.sent.status, e.sent.body) for e in posts),
        "refused_prompt_alone": sum(b"prompt is too long" in e.sent.body for e in posts),
        "smallest_max_tokens": min(
            (int(e.received.json.get("max_tokens") or 0) for e in messages), default=None
        ),
        "other_provider_errors": sum(
            e.sent.status != 200 and not _for_length(e.sent.status, e.sent.body) for e in posts
        ),
        "errors_seen_by_agent": sum(a.error for a in answers if a.method == "POST"),
        "actions": actions,
        "first_compacted_request": count.first_compacted,
        "requests_from_first_compaction": count.after,
        "with_claude_md_rule": count.with_rule,
        "parts_read": max((max(reads(_json(b)), default=-1) for b in bodies), default=-1) + 1,
        "exit": done.returncode,
        "last_line": (done.stdout.strip().splitlines() or [""])[-1][:200],
    }


ROWS = (
    ("requests that reached the provider (`POST /v1/messages`)", "requests"),
    ("of those, the conversation's own (with tools)", "main_requests"),
    ("refused by the provider for their length", "refused_for_length"),
    ("of those, the prompt alone over the window (not with `max_tokens`)", "refused_prompt_alone"),
    ("the smallest `max_tokens` Claude Code asked for", "smallest_max_tokens"),
    ("other errors from the provider", "other_provider_errors"),
    ("errors seen by Claude Code", "errors_seen_by_agent"),
    ("the proxy's actions", "actions"),
    ("parts read (of the task's)", "parts_read"),
    (
        "first compacted request (counted from 0 among the conversation's)",
        "first_compacted_request",
    ),
    ("requests from that one on", "requests_from_first_compaction"),
    ("of those, with the CLAUDE.md rule verbatim", "with_claude_md_rule"),
    ("Claude Code's exit code", "exit"),
    ("its last line", "last_line"),
)


def table(results: Sequence[dict[str, Any]]) -> str:
    return results_table(results, ROWS)


def section(results: Sequence[dict[str, Any]], version: str) -> str:
    return (
        f"{HEADING}\n\n"
        f"`python -m bench.claude_code_cli --write` (Claude Code {version} from npm, run "
        f'headless: `claude -p "<task>" --model {MODEL} --allowedTools Read` with '
        "`ANTHROPIC_BASE_URL` at the proxy and a dummy `ANTHROPIC_API_KEY`, a fresh `HOME`), "
        f"the tests' fake provider with a {WINDOW // 1000}k window ({MODEL}; Claude Code's "
        "system prompt and tools are about 26k tokens, and it asks for 32k of output). The "
        f"work directory's CLAUDE.md holds one rule (`{RULE}`); the fake model asks for each "
        f"of {FILES} parts of about 2,000 tokens with `Read`, then ends. Errors seen by Claude "
        "Code are counted by a relay between it and what it talks to; a request counts as "
        "compacted when it holds fewer `Read` calls than parts read so far (direct, Claude "
        "Code shortened its own history once lowering `max_tokens` no longer fitted):\n\n"
        + table(results)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", type=Path, help="a claude binary (else installed from npm)")
    parser.add_argument("--write", action="store_true", help="replace the section of RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="claude-code-bench-") as scratch:
        root = Path(scratch)
        claude = args.claude or npm_installed(PACKAGE, root / "npm", "claude")
        version = subprocess.run(
            [str(claude), "--version"], capture_output=True, text=True, check=True
        ).stdout.split()[0]
        results = []
        for how in ("direct", "proxy"):
            results.append(run(claude, root, how))
            print(orjson.dumps(results[-1]).decode(), flush=True)
    print(table(results))
    if args.write:
        write_section(HEADING, section(results, version))


if __name__ == "__main__":
    main()
