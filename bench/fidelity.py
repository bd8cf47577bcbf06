"""Summary fidelity: which ground-truth facts survive compaction.

Usage: python -m bench.fidelity          (prints the table and updates bench/RESULTS.md)

Ground truth, per transcript of the corpus's *.anthropic.json (`bench/corpus.py`):
- files: every path the agent read, created, edited or deleted (the same extraction the
  extractive summarizer uses: file-tool calls, SWE-agent's `create`/`edit`, shell `rm`);
- commands: the first line of every tool call's `input.command`; commands that differ
  only in their digits (`edit 1:1`, `edit 1475:1475`; `sleep 5`, `sleep 30`) are one fact,
  the latest run (the ledger keeps only it: earlier ones are near duplicates, in recall);
- errors: for every tool result that is an error (marked `is_error`, or saying so in its
  text: `app.core.history.failures`), the line that names the error, cut to 120 characters;
- user requests: the first 120 characters of each user message's own words
  (`app.core.history.harness`: not tool results, not text the agent's harness injected).
A fact is present when its text occurs verbatim in the compacted messages' text, where a
ledger line grouping one program's commands (`- [commands] git: status · log -3`) is read
as its commands (`git status`, `git log -3`).

Cases: (a) the extractive summarizer, no ledger; (b) a lossy LLM that answers one generic
sentence, no ledger; (c) the lossy LLM with the ledger; then three successive compactions
(the rest split in three, each compaction's output carried into the next) with (d) the
lossy LLM and the ledger, (e) the extractive summarizer and the ledger, (f) the lossy LLM
without the ledger. With the ledger the share must be 100% everywhere.
"""

from __future__ import annotations

import asyncio
import json
import platform
import re
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from app.core.history.facts import extract_facts
from app.core.history.failures import error_line
from app.core.history.harness import user_words
from app.core.messages import Message, message_text, tool_result_text, tool_uses
from app.core.ports import Summarizer, SummaryRequest
from app.core.summary.extractive import ExtractiveSummarizer
from app.service.compaction import CompactionService, CompactRequest
from app.settings import Settings
from app.wiring.service import build_service
from bench.corpus import CORPUS_DIR
from bench.results import write_section

CORPUS = CORPUS_DIR
SECTION = "## Summary fidelity"
ERROR_CHARS = 120
_DIGITS = re.compile(r"\d+")
_GROUP_LINE = re.compile(r"^- \[commands\] (.+?): (.+)$", re.MULTILINE)
REQUEST_CHARS = 120


class LossySummarizer:
    """A deliberately lossy LLM: one generic sentence, whatever it is given."""

    @property
    def name(self) -> str:
        return "lossy"

    @property
    def reads_prompt(self) -> bool:
        return True

    async def aclose(self) -> None:
        """No client to close."""

    async def summarize(self, request: SummaryRequest) -> str:
        return "The agent worked on the task and made some progress."


@dataclass(frozen=True)
class Case:
    label: str
    summarizer: Summarizer
    ledger: bool
    rounds: int


CASES = (
    Case("(a) extractive, no ledger", ExtractiveSummarizer(), False, 1),
    Case("(b) lossy LLM, no ledger", LossySummarizer(), False, 1),
    Case("(c) lossy LLM + ledger", LossySummarizer(), True, 1),
    Case("(d) lossy LLM + ledger, 3 compactions", LossySummarizer(), True, 3),
    Case("(e) extractive + ledger, 3 compactions", ExtractiveSummarizer(), True, 3),
    Case("(f) lossy LLM, no ledger, 3 compactions", LossySummarizer(), False, 3),
)


def ground_truth(messages: list[Message]) -> set[str]:
    found = extract_facts(messages)
    facts = {
        *found.files_read,
        *found.files_created,
        *found.files_edited,
        *found.files_deleted,
    }
    results = {}
    commands: dict[str, str] = {}
    for message in messages:
        for block in message.blocks():
            if getattr(block, "type", None) == "tool_result":
                results[block.tool_use_id] = block  # type: ignore[union-attr]
        for call in tool_uses(message):
            command = call.input.get("command")
            if isinstance(command, str) and command.strip():
                first = command.strip().split("\n", 1)[0]
                commands.pop(_DIGITS.sub("0", first), None)
                commands[_DIGITS.sub("0", first)] = first
    facts.update(commands.values())
    for block in results.values():
        line = error_line(tool_result_text(block), block.is_error)
        if line is not None:
            facts.add(line[:ERROR_CHARS].rstrip())
    for message in messages:
        words = " ".join(user_words(message).split())
        if words:
            facts.add(words[:REQUEST_CHARS].rstrip())
    return facts


def present(facts: set[str], messages: list[Message]) -> set[str]:
    text = "\n".join(message_text(m) for m in messages)
    text += "".join(
        f"\n{program} {rest}"
        for program, rests in _GROUP_LINE.findall(text)
        for rest in rests.split(" · ")
    )
    flat = " ".join(text.split())
    return {fact for fact in facts if fact in text or " ".join(fact.split()) in flat}


def _chunks(rest: list[Message], rounds: int) -> list[list[Message]]:
    """`rounds` parts of about equal length, each ending after a user message, so no part
    ends on a tool call whose result is in the next one (agents compact between turns)."""
    cuts = [i + 1 for i, m in enumerate(rest) if m.role == "user"]
    ends = sorted(
        {min(cuts, key=lambda c: abs(c - len(rest) * k // rounds)) for k in range(1, rounds)}
    )
    bounds = [0, *(e for e in ends if 0 < e < len(rest)), len(rest)]
    return [rest[a:b] for a, b in pairwise(bounds) if b > a]


async def compact_rounds(
    service: CompactionService, messages: list[Message], rounds: int
) -> list[Message]:
    head, rest = messages[:1], messages[1:]
    context = list(head)
    for chunk in _chunks(rest, rounds):
        context = [*context, *chunk]
        result = await service.compact(CompactRequest(messages=context, force=True))
        assert result.compacted, result.reason
        context = list(result.messages)
    return context


async def measure() -> list[tuple[str, dict[str, float]]]:
    paths = sorted(CORPUS.glob("*.anthropic.json"))
    if not paths:
        raise SystemExit(f"no transcripts under {CORPUS}")
    table: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            settings = Settings(  # type: ignore[call-arg]
                _env_file=None,
                workdir=tmp,
                data_dir=f"{tmp}/data",
                ledger_budget=1500 if case.ledger else 0,
            )
            base = build_service(settings, summarizer=case.summarizer)
            shares: dict[str, float] = {}
            for path in paths:
                raw: list[dict[str, Any]] = json.loads(path.read_text())["messages"]
                messages = [Message.model_validate(m) for m in raw]
                truth = ground_truth(messages)
                out = await compact_rounds(base, messages, case.rounds)
                shares[path.name.removesuffix(".anthropic.json")] = (
                    len(present(truth, out)) / len(truth) if truth else 1.0
                )
            table.append((case.label, shares))
    return table


def render(table: list[tuple[str, dict[str, float]]]) -> str:
    names = list(table[0][1])
    lines = [
        SECTION,
        "",
        f"`python -m bench.fidelity` on {datetime.now(UTC):%Y-%m-%d}, Python "
        f"{platform.python_version()}, {platform.machine()}. Share of ground-truth facts (file "
        "paths touched, commands run, error lines, user requests) present in the compacted "
        "context; see the "
        "module docstring for the definitions.",
        "",
        "| case | min | mean | " + " | ".join(n.removeprefix("swe-") for n in names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for label, shares in table:
        values = [shares[n] for n in names]
        cells = " | ".join(f"{v:.0%}" for v in values)
        lines.append(f"| {label} | {min(values):.0%} | {sum(values) / len(values):.0%} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    table = asyncio.run(measure())
    section = render(table)
    print(section)
    write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
