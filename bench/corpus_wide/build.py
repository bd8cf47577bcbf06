"""Builds the wide corpus: `python -m bench.corpus_wide.build [--mirrors DIR] [--out DIR]`.

Each source of `SOURCES` (the table `SOURCES.md` lists) is read from a snapshot of its
repository that the search tool's `fetch` brought onto this machine (`--mirrors`, one
`<owner>+<name>/repo` git directory each), at the commit named, converted by its agent's
module, checked against the providers' rules in both shapes and written to `--out` as
`<name>.anthropic.json` and `<name>.openai.json` (`{"messages", "source", "license",
"format", "agent", "split"}`), with a README. Nothing fetched is written into the
repository.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message
from app.core.tokens import count_total
from bench.corpus_wide import (
    aider,
    claude_console,
    gemini_console,
    gemini_markdown,
    roo_markdown,
    specstory,
    swe_agent,
)
from bench.corpus_wide.session import Transcript
from bench.replay_driver import violations_of

MIRRORS = Path("/work/.mirror")
OUT = Path("/work/corpus-wide")


@dataclass(frozen=True)
class Source:
    name: str
    agent: str
    repo: str
    commit: str
    path: str
    license: str
    split: str  # "dev": rules may be read against it; "held-out": measured only
    convert: Callable[[str], Transcript]


_BOOK = "palimondo/BookMinder"
_BOOK_AT = "0000000000000000000000000000000000000000"  # replaced by the snapshot's HEAD below
_SWE = "SWE-agent/SWE-agent"
_SWE_AT = "3ea751c087f3"
SOURCES: tuple[Source, ...] = (
    Source(
        "cursor-twat-cache",
        "cursor",
        "twardoch/twat-cache",
        "b00341c",
        ".specstory/history/2025-03-04_03-25-codebase-analysis-and-todo-md-update.md",
        "MIT",
        "dev",
        specstory.convert,
    ),
    Source(
        "cursor-twat-coding",
        "cursor",
        "twardoch/twat-coding",
        "a76ce40",
        ".specstory/history/2025-02-22_05-39-managing-todo-list-tasks.md",
        "MIT",
        "dev",
        specstory.convert,
    ),
    Source(
        "cursor-twat-fs",
        "cursor",
        "twardoch/twat-fs",
        "92e3ed5",
        ".specstory/history/2025-03-04_08-39-project-documentation-and-cleanup-tasks.md",
        "MIT",
        "held-out",
        specstory.convert,
    ),
    Source(
        "aider-mozgoslav",
        "aider",
        "AlexShchuka/mozgoslav",
        "1f66bc9",
        ".aider.chat.history.md",
        "MIT",
        "held-out",
        aider.convert,
    ),
    Source(
        "roo-rooport-repomix-attempt",
        "roo",
        "tgf-between-your-legs/rooport",
        "ed143cb",
        "repomix-attempt.md",
        "MIT",
        "dev",
        roo_markdown.convert,
    ),
    Source(
        "roo-rooport-repomix-error",
        "roo",
        "tgf-between-your-legs/rooport",
        "8e7b6bd",
        "repomix-error.md",
        "MIT",
        "held-out",
        roo_markdown.convert,
    ),
    Source(
        "roo-rooport-task-may-2",
        "roo",
        "tgf-between-your-legs/rooport",
        "a529ad4",
        "roo_task_may-2-2025_10-42-37-am.md",
        "MIT",
        "held-out",
        roo_markdown.convert,
    ),
    Source(
        "claudecode-bookminder-day-009",
        "claude-code",
        _BOOK,
        "HEAD",
        "claude-dev-log-diary/day-009.md",
        "MIT",
        "dev",
        claude_console.convert,
    ),
    Source(
        "claudecode-bookminder-day-018",
        "claude-code",
        _BOOK,
        "HEAD",
        "claude-dev-log-diary/day-018.md",
        "MIT",
        "dev",
        claude_console.convert,
    ),
    Source(
        "claudecode-bookminder-day-007",
        "claude-code",
        _BOOK,
        "HEAD",
        "claude-dev-log-diary/day-007.md",
        "MIT",
        "held-out",
        claude_console.convert,
    ),
    Source(
        "claudecode-bookminder-day-021",
        "claude-code",
        _BOOK,
        "HEAD",
        "claude-dev-log-diary/day-021.md",
        "MIT",
        "held-out",
        claude_console.convert,
    ),
    Source(
        "gemini-goagent-current",
        "gemini-cli",
        "weverkley/go-ai-agent-v2",
        "c5cd740",
        "current.md",
        "MIT",
        "dev",
        gemini_markdown.convert,
    ),
    Source(
        "gemini-goagent-agent",
        "gemini-cli",
        "weverkley/go-ai-agent-v2",
        "27d653f",
        "agent.md",
        "MIT",
        "dev",
        gemini_markdown.convert,
    ),
    Source(
        "gemini-bookminder-day-011",
        "gemini-cli",
        _BOOK,
        "HEAD",
        "claude-dev-log-diary/day-011.md",
        "MIT",
        "held-out",
        gemini_console.convert,
    ),
    Source(
        "gemini-bookminder-day-015",
        "gemini-cli",
        _BOOK,
        "HEAD",
        "claude-dev-log-diary/day-015.md",
        "MIT",
        "held-out",
        gemini_console.convert,
    ),
    Source(
        "aider-afi-core",
        "aider",
        "AFI-Protocol/afi-core",
        "59f2649967",
        ".aider.chat.history.md",
        "MIT",
        "dev",
        aider.convert,
    ),
    Source(
        "aider-monochromatic",
        "aider",
        "Aquaticat/Monochromatic",
        "56372c6db0",
        ".aider.chat.history.md",
        "Apache-2.0",
        "held-out",
        aider.convert,
    ),
    Source(
        "sweagent-marshmallow-1867",
        "swe-agent",
        _SWE,
        _SWE_AT,
        "trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1/marshmallow-code__marshmallow-1867.traj",
        "MIT",
        "dev",
        swe_agent.convert,
    ),
    Source(
        "sweagent-pydicom-1458",
        "swe-agent",
        _SWE,
        _SWE_AT,
        "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
        "MIT",
        "dev",  # the shared small corpus (../shared/corpus) has held this run for long
        swe_agent.convert,
    ),
    Source(
        "sweagent-ctf-i-got-id",
        "swe-agent",
        _SWE,
        _SWE_AT,
        "trajectories/demonstrations/ctf/web/i_got_id_demo.traj",
        "MIT",
        "held-out",
        swe_agent.convert,
    ),
    Source(
        "sweagent-ctf-flash",
        "swe-agent",
        _SWE,
        _SWE_AT,
        "trajectories/demonstrations/ctf/forensics/flash.traj",
        "MIT",
        "held-out",
        swe_agent.convert,
    ),
    Source(
        "sweagent-ctf-katy",
        "swe-agent",
        _SWE,
        _SWE_AT,
        "trajectories/demonstrations/ctf/crypto/katy.traj",
        "MIT",
        "held-out",
        swe_agent.convert,
    ),
)


def read_source(mirrors: Path, source: Source) -> tuple[str, str]:
    """The file's text at its commit, and the commit in full."""
    git = mirrors / source.repo.replace("/", "+") / "repo"
    commit = subprocess.run(
        ["git", "-C", str(git), "rev-parse", source.commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    text = subprocess.run(
        ["git", "-C", str(git), "show", f"{commit}:{source.path}"],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", errors="replace")
    return text, commit


def build(mirrors: Path, out: Path, names: Sequence[str] = ()) -> list[dict[str, object]]:
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = TiktokenTokenizer()
    rows: list[dict[str, object]] = []
    for source in SOURCES:
        if names and source.name not in names:
            continue
        text, commit = read_source(mirrors, source)
        transcript = source.convert(text)
        shapes = {"anthropic": transcript.anthropic(), "openai": transcript.openai()}
        for shape, messages in shapes.items():
            problems = violations_of(messages, shape)
            if problems:
                raise SystemExit(f"{source.name} ({shape}) breaks the rules: {problems[:3]}")
            body = {
                "messages": messages,
                "source": f"{source.repo}@{commit[:12]}:{source.path}",
                "license": source.license,
                "format": shape,
                "agent": source.agent,
                "split": source.split,
            }
            target = out / f"{source.name}.{shape}.json"
            target.write_text(json.dumps(body, ensure_ascii=False, indent=1), encoding="utf-8")
        parsed = [Message.model_validate(m) for m in shapes["anthropic"]]
        rows.append(
            {
                "name": source.name,
                "agent": source.agent,
                "repo": source.repo,
                "commit": commit,
                "path": source.path,
                "license": source.license,
                "split": source.split,
                "messages": len(shapes["anthropic"]),
                "calls": transcript.calls,
                "tokens": count_total(tokenizer, parsed),
            }
        )
        print(
            f"{source.name}: {rows[-1]['messages']} messages, {rows[-1]['tokens']:,} tokens",
            file=sys.stderr,
        )
    return rows


def table(rows: Sequence[dict[str, object]]) -> str:
    lines = [
        "| session | agent | split | repository | commit | path | licence | messages "
        "| tool calls | tokens (cl100k) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['agent']} | {r['split']} | {r['repo']} | {str(r['commit'])[:12]} "
            f"| `{r['path']}` | {r['license']} | {r['messages']} | {r['calls']} "
            f"| {int(str(r['tokens'])):,} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.corpus_wide.build", description=__doc__)
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("names", nargs="*", help="only these sessions")
    args = parser.parse_args(argv)
    rows = build(args.mirrors, args.out, args.names)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
