"""What happened, step by step, for checking what a summary claims happened.

A summary's claims ("the tests pass", "the error came from fields.py", "reproduce.py was
kept") are about things and their state at some time. The history's names alone
(`app.core.gate.entities`) cannot say whether a claim is true: `pytest` occurs in a
history whose last run failed as well as in one whose last run passed. So the history is
read once more as a list of steps — each tool call with what it named, the files it
touched and whether its result reports a failure — and the user's own words apart, so
the claim rules (`app.core.gate.claims`) can ask for the first and the latest evidence
about the thing a sentence names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.compact_json import compact_json
from app.core.history import EDITOR_TOOLS, FileTracker, error_line, shell_command
from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_result_text,
    tool_uses,
)

# Commands that run tests: a sentence about "the tests" is about their latest run.
_TEST_RUNNER = re.compile(
    r"\b(?:pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|go test|cargo test|"
    r"npm (?:run )?test|yarn test|pnpm test|mvn test|gradle test|dotnet test|rspec|"
    r"phpunit|make test|ctest|bun test|deno test)\b"
)


@dataclass(frozen=True)
class Step:
    """One tool call and its result, lower-cased: what it named and what came back."""

    at: int
    tool: str
    call: str  # the call's input as text
    command: str  # the shell command it ran ('' for other tools)
    result: str  # '' when no result answered it
    failed: bool
    answered: bool
    paths: tuple[str, ...]  # files the call read, created, edited or deleted
    ops: tuple[tuple[str, str], ...]  # (kind, path) of each file operation
    removed: str = ""  # an edit's text before (its old strings, SEARCH blocks, `-` lines)
    added: str = ""  # and after

    @property
    def runs_tests(self) -> bool:
        return _TEST_RUNNER.search(self.call) is not None


@dataclass(frozen=True)
class Evidence:
    """The steps in order, and what the assistant said between them."""

    steps: tuple[Step, ...]
    # The assistant's text blocks, each with the number of steps before it: what the agent
    # said it did (an install outside the tools) is evidence after those steps.
    notes: tuple[tuple[int, str], ...] = ()

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Evidence:
        results = {
            block.tool_use_id: block
            for message in messages
            for block in message.blocks()
            if isinstance(block, ToolResultBlock)
        }
        tracker = FileTracker()
        steps: list[Step] = []
        notes: list[tuple[int, str]] = []
        for message in messages:
            if message.role == "assistant":
                texts = (b.text for b in message.blocks() if isinstance(b, TextBlock))
                notes.extend((len(steps), t.lower()) for t in texts if t.strip())
            for use in tool_uses(message):
                steps.append(_step(len(steps), use, results.get(use.id), tracker))
        return cls(tuple(steps), tuple(notes))

    def naming(self, needle: str) -> list[Step]:
        """The steps whose call or touched files name `needle` (lower-cased)."""
        return [s for s in self.steps if needle in s.call or any(_ends(p, needle) for p in s.paths)]

    def tests(self) -> list[Step]:
        return [s for s in self.steps if s.runs_tests and s.answered]


def _ends(path: str, needle: str) -> bool:
    return path == needle or path.endswith("/" + needle.lstrip("./"))


def _step(at: int, use: ToolUseBlock, result: ToolResultBlock | None, tracker: FileTracker) -> Step:
    ops = tuple((op.kind, op.path.lower()) for op in tracker.operations(use))
    text = "" if result is None else tool_result_text(result)
    failed = result is not None and error_line(text, result.is_error, use.name) is not None
    values = " ".join(str(v) for v in use.input.values() if isinstance(v, str))
    return Step(
        at=at,
        tool=use.name.lower(),
        call=f"{use.name} {values} {compact_json(use.input)}".lower(),
        command=(shell_command(use.input) or "").lower() if use.name not in EDITOR_TOOLS else "",
        result=text.lower(),
        failed=failed,
        answered=result is not None,
        paths=tuple(dict.fromkeys(path for _, path in ops)),
        ops=ops,
        **dict(zip(("removed", "added"), _edit_sides(use.input), strict=True)),
    )


_SEARCH_REPLACE = re.compile(r"<<<<<<< SEARCH\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE", re.DOTALL)


def _edit_sides(data: dict[str, object]) -> tuple[str, str]:
    """An edit call's text before and after, lower-cased: `old_string` / `new_string`
    (`old_str` / `new_str`, each of `edits`), SEARCH / REPLACE blocks, a diff's `-` and
    `+` lines."""
    pairs: list[tuple[str, str]] = []
    edits = data.get("edits")
    for item in [data, *(edits if isinstance(edits, list) else [])]:
        if not isinstance(item, dict):
            continue
        old = item.get("old_string", item.get("old_str"))
        new = item.get("new_string", item.get("new_str"))
        if isinstance(old, str) and isinstance(new, str):
            pairs.append((old, new))
    for value in data.values():
        if not isinstance(value, str):
            continue
        pairs += _SEARCH_REPLACE.findall(value)
        if not pairs and "\n-" in value and "\n+" in value:
            lines = value.splitlines()
            pairs.append(
                (
                    "\n".join(
                        ln[1:] for ln in lines if ln.startswith("-") and not ln.startswith("---")
                    ),
                    "\n".join(
                        ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++")
                    ),
                )
            )
    return "\n".join(o for o, _ in pairs).lower(), "\n".join(n for _, n in pairs).lower()
