"""The digest path of a summary: notes the service writes, a narrative the model writes.

A small local model given a whole transcript re-types it, or answers with the prompt's own
section descriptions: the task is beyond it. Given instead a digest of what the history
shows — the user's requests, the files touched, the commands, the errors, an outline of
the tool calls and the latest exchanges — and one short question per narrative section,
it only has to write the narrative; the facts stay the service's (and the ledger keeps
them whatever the model writes). The digest stays within a token budget (a share of the
history's tokens), so the calls are short on a slow CPU server too.

Levels: the digest is rendered at the most generous level first, then at tighter ones
(fewer exchanges, shorter quotes, fewer commands and calls) until it fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.history import ExtractedFacts, cut_words, one_line
from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_tool_result_message,
)

Count = Callable[[str], int]

_TARGET_KEYS = (
    "path", "file_path", "target_file", "relative_workspace_path", "command", "query",
    "pattern", "url",
)  # fmt: skip
TARGET_CHARS = 80
_IN_CALL_CD = re.compile(r"`cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*&&\s*")
_LEADING_CD = re.compile(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*&&\s*")

# The digest's budget: this share of the history's tokens, at least MIN_DIGEST_TOKENS.
DIGEST_SHARE = 0.3
MIN_DIGEST_TOKENS = 400
# The system prompt and a question around the notes, at most (cl100k).
DIGEST_PROMPT_TOKENS = 300

DIGEST_SYSTEM = (
    "You write the summary of a coding session from notes about it, so that an AI agent "
    "can continue the work. Keep file paths, commands and error messages exactly as written."
)
# The model answers one short question per narrative section, each call with the same
# notes first (a local server reuses their evaluation from one call to the next); the
# service writes the sections that are lists of facts (files, commands and calls, errors).
# Asked for three headings at once, a small model wrote one section and stopped, or
# copied the notes; asked one question, it answers it.
SECTION_QUESTIONS = {
    "Goals & Decisions": "What does the user want, and what was decided?",
    "Task Status": "What was being done last, and what is the next step?",
}
MODEL_SECTIONS = tuple(SECTION_QUESTIONS)
# Where the notes end in the prompt (the summary check reads what is before as the source).
DIGEST_NOTES_END = "</notes>"
SERVICE_SECTIONS = ("File Operations", "Tool Calls", "Errors & Resolutions")
# Paths of each kind listed under File Operations, the latest kept.
FILES_PER_KIND = 12


@dataclass(frozen=True)
class Level:
    """How much of each list the digest shows."""

    request_words: int
    requests: int
    commands: int
    calls: int
    exchanges: int
    exchange_words: int


LEVELS = (
    Level(request_words=50, requests=8, commands=10, calls=10, exchanges=4, exchange_words=40),
    Level(request_words=35, requests=6, commands=8, calls=8, exchanges=3, exchange_words=30),
    Level(request_words=25, requests=4, commands=6, calls=5, exchanges=2, exchange_words=20),
    Level(request_words=15, requests=3, commands=4, calls=3, exchanges=2, exchange_words=12),
    Level(request_words=10, requests=2, commands=2, calls=0, exchanges=1, exchange_words=8),
)
# Each answer asked for, at most: a small model writes a few tokens a second, and the
# facts are the notes' and the ledger's, not the narrative's.
ANSWER_SENTENCES = "1 or 2 short sentences"


def digest_budget(history_tokens: int, input_budget: int, overhead: int) -> int:
    """Tokens the digest may take: `DIGEST_SHARE` of the history (at least
    `MIN_DIGEST_TOKENS`), within what the input budget leaves beside the prompt."""
    wanted = max(int(DIGEST_SHARE * history_tokens), MIN_DIGEST_TOKENS)
    return max(min(wanted, input_budget - overhead), 0)


def build_digest(
    messages: Sequence[Message], facts: ExtractedFacts, budget: int, count: Count
) -> str:
    """The notes on `messages` at the most generous level within `budget` tokens (the
    tightest level, cut to the budget, when none fits)."""
    text = ""
    for level in LEVELS:
        text = render_digest(messages, facts, level)
        if count(text) <= budget:
            return text
    words = text.split()
    while words and count(" ".join(words)) > budget:
        words = words[: len(words) * 3 // 4]
    return " ".join(words)


def build_section_prompt(digest: str, section: str, instructions: str | None) -> str:
    """The notes, then the one question of `section` (the notes first and alike in every
    call of one summary, so the server evaluates them once)."""
    focus = (
        f" The user asks this summary to focus on: {instructions.strip()}"
        if instructions and instructions.strip()
        else ""
    )
    return (
        f"<notes>\n{digest}\n{DIGEST_NOTES_END}\n\n"
        f"{SECTION_QUESTIONS[section]} Answer from the notes above in {ANSWER_SENTENCES}, "
        f"in your own words.{focus}"
    )


def render_digest(messages: Sequence[Message], facts: ExtractedFacts, level: Level) -> str:
    """The notes at one level: sections with nothing to show are left out."""
    sections = (
        _requests(facts, level),
        _files(facts),
        _listed(
            "Commands run, oldest first",
            [_without_cd(c) for c in facts.commands],
            level.commands,
            quote=True,
        ),
        _listed("Tool calls, oldest first", _outline(messages), level.calls),
        _errors(facts),
        _exchanges(messages, level),
    )
    return "\n\n".join(section for section in sections if section)


def _requests(facts: ExtractedFacts, level: Level) -> str:
    said = [s for s in facts.spoken if s.strip()]
    if not said and facts.first_request:
        said = [facts.first_request]
    if not said:
        return ""
    kept = said if len(said) <= level.requests else [*said[:1], *said[-(level.requests - 1) :]]
    lines = [f'- "{cut_words(s, level.request_words)}"' for s in kept]
    skipped = len(said) - len(kept)
    note = f" ({skipped} more in between)" if skipped else ""
    return "User requests, in order" + note + ":\n" + "\n".join(lines)


def _files(facts: ExtractedFacts) -> str:
    lines = [f"- {kind}: {', '.join(paths)}" for kind, paths in facts.files() if paths]
    return "Files:\n" + "\n".join(lines) if lines else ""


def _listed(title: str, items: Sequence[str], limit: int, quote: bool = False) -> str:
    if not items or limit <= 0:
        return ""
    kept = items[-limit:]
    earlier = len(items) - len(kept)
    note = f" ({earlier} earlier not shown)" if earlier else ""
    lines = [f"- `{one_line(i)}`" if quote else f"- {i}" for i in kept]
    return f"{title}{note}:\n" + "\n".join(lines)


def _outline(messages: Sequence[Message]) -> list[str]:
    """Each tool call as `name target`, `(failed)` when its result is an error: short lines
    of plain words (a small model copies whole JSON inputs and results when shown them)."""
    failed = {
        b.tool_use_id
        for m in messages
        for b in m.blocks()
        if isinstance(b, ToolResultBlock) and b.is_error
    }
    return [
        f"{block.name} {_target(block.input)}".strip() + (" (failed)" if block.id in failed else "")
        for message in messages
        for block in message.blocks()
        if isinstance(block, ToolUseBlock)
    ]


def _target(inputs: object) -> str:
    """What a call acted on: its path, command, query or URL, else its first text input."""
    if not isinstance(inputs, dict):
        return ""
    texts = [v for v in inputs.values() if isinstance(v, str) and v.strip()]
    named = [inputs[k] for k in _TARGET_KEYS if isinstance(inputs.get(k), str)]
    chosen = (named or texts or [""])[0]
    return one_line(_without_cd(chosen), TARGET_CHARS)


def _without_cd(command: str) -> str:
    """A command without its leading `cd DIR &&`: the directory is noise to a reader."""
    return _LEADING_CD.sub("", command.strip())


def _errors(facts: ExtractedFacts) -> str:
    if not facts.errors:
        return ""
    lines = [
        f"- {_IN_CALL_CD.sub('`', note.call)}: {one_line(note.message)} "
        f"({'resolved' if note.resolved else 'open'})"
        for note in facts.errors[-8:]
    ]
    return "Errors:\n" + "\n".join(lines)


def _exchanges(messages: Sequence[Message], level: Level) -> str:
    """The latest user and assistant texts (tool results are in the outline)."""
    said: list[str] = []
    for message in reversed(messages):
        if len(said) >= level.exchanges:
            break
        if message.role not in ("user", "assistant") or is_tool_result_message(message):
            continue
        text = " ".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()
        if text:
            said.append(f"{message.role}: {cut_words(text, level.exchange_words)}")
    if not said:
        return ""
    return "Latest exchanges, oldest first:\n" + "\n".join(reversed(said))


def service_sections(messages: Sequence[Message], facts: ExtractedFacts) -> dict[str, str]:
    """The sections the service writes beside the model's, by title: the files, the
    commands and tool calls, and the errors, from the notes (the same text at every level:
    `LEVELS[0]`)."""
    level = LEVELS[0]
    commands = [_without_cd(c) for c in facts.commands][-level.commands :]
    counts: dict[str, int] = {}
    for line in _outline(messages):
        name = line.split(" ", 1)[0]
        counts[name] = counts.get(name, 0) + 1
    calls = ", ".join(f"{name} {n}" for name, n in counts.items())
    tools = [f"- Calls: {calls}."] if calls else ["- None."]
    tools += [f"- `{one_line(c)}`" for c in commands]
    errors = [
        f"- {_IN_CALL_CD.sub('`', note.call)}: {one_line(note.message)} "
        f"({'resolved' if note.resolved else 'open'})"
        for note in facts.errors[-8:]
    ] or ["- None observed."]
    bodies = (_file_lines(facts) or ["- None."], tools, errors)
    return {
        title: f"## {title}\n" + "\n".join(lines)
        for title, lines in zip(SERVICE_SECTIONS, bodies, strict=True)
    }


def _file_lines(facts: ExtractedFacts) -> list[str]:
    """The files the history touched, by kind, the latest `FILES_PER_KIND` of each."""
    return [
        f"- {kind.capitalize()}: " + ", ".join(f"`{p}`" for p in paths[-FILES_PER_KIND:])
        for kind, paths in facts.files()
        if paths
    ]
