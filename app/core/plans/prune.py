"""The `prune` strategy (no LLM): clear the content of old tool results.

Every tool result outside the protected window (the `keep_recent` most recent tool uses)
has its content replaced by a placeholder that names the call and what was removed:

    [Old tool result cleared: read_file(path=src/app.py), 1,234 tokens]

A result whose text states a failure (`app.core.history.failures`: a flagged result, or a test,
build or program failure in ordinary output) keeps the line that states it after the
figure, so the stub still says what failed (and a later compaction reads that line back
as the result's error, `app.core.history.failures`). That line is kept as a summary keeps
an error's key line (`ERROR_LINE_CHARS`, `app.core.history.facts`): whole up to that
bound, then cut with ` …`, each of its one or two key lines alike. A shorter bound of its
own would make the stub lose what a summary of the same result keeps, and a harness that
packs its explanation into the failure's line (Gemini CLI's `A secondary check by an LLM
determined ...`) would lose the part that says what failed:

    [Old tool result cleared: bash(command=pytest -q), 880 tokens; failed: FAILED t.py::x - ...]

Results of excluded tools, results already cleared, and results whose placeholder would
not be smaller are left as they are. With `clear_inputs`, the call's `input` becomes `{}`
too (its arguments stay readable in the placeholder). The placeholder text is the only
mark of a cleared result: the providers reject unknown keys on `tool_result` blocks and
`tool` messages, so nothing else is added (the session record and the archive say when
and what). A result whose content is a placeholder is never cleared again; one that still
carries the `compacted_at` field earlier versions added is recognized too. Token figures
are those of the result's text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.compact_json import compact_json
from app.core.history import (
    CLEARED_PREFIX,
    ERROR_LINE_CHARS,
    FAILED_MARK,
    KEY_LINE_SEPARATOR,
    error_line,
    one_line,
)
from app.core.messages import Message, ToolResultBlock, ToolUseBlock, tool_result_text, tool_uses
from app.core.provider import BOOKKEEPING
from app.core.vocabulary import Format

MARKER = "compacted_at"
VALUE_CHARS = 60
ARGUMENT_CHARS = 120


@dataclass(frozen=True)
class PruneRules:
    keep_recent: int
    exclude_tools: frozenset[str] = frozenset()
    clear_inputs: bool = False


@dataclass(frozen=True)
class PrunePlan:
    """The pruned list, which of its messages changed, and what clearing saves."""

    messages: tuple[Message, ...]
    compacted_indexes: tuple[int, ...]
    cleared_results: int
    tokens_saved: int


def placeholder(use: ToolUseBlock, tokens: int, failure: str | None = None) -> str:
    """The one-line stub of a cleared result; `failure`: the line stating its failure, one or
    two key lines (`error_line`'s), each on one line whole up to `ERROR_LINE_CHARS`."""
    stated = ""
    if failure:
        lines = (" ".join(part.split()) for part in failure.split(KEY_LINE_SEPARATOR))
        stated = FAILED_MARK + KEY_LINE_SEPARATOR.join(
            one_line(line, ERROR_LINE_CHARS) for line in lines
        )
    return f"{CLEARED_PREFIX}{call_label(use)}, {tokens:,} tokens{stated}]"


def call_label(use: ToolUseBlock) -> str:
    """`name(key=value, ...)`: values on one line, each cut to 60 characters, all to 120."""
    parts = []
    for key, value in use.input.items():
        text = value if isinstance(value, str) else compact_json(value)
        parts.append(f"{key}={_cut(' '.join(text.split()), VALUE_CHARS)}")
    return f"{use.name}({_cut(', '.join(parts), ARGUMENT_CHARS)})"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def already_cleared(block: ToolResultBlock | ToolUseBlock) -> bool:
    """A placeholder as content, or the marker field of earlier versions."""
    extra = block.model_extra or {}
    note = extra.get(BOOKKEEPING)
    note_extra = note.get("extra") if isinstance(note, dict) else None
    call = note.get("call") if isinstance(note, dict) else None
    if MARKER in extra or (isinstance(note_extra, dict) and MARKER in note_extra):
        return True
    if isinstance(call, dict) and MARKER in call:
        return True
    return isinstance(block, ToolResultBlock) and tool_result_text(block).startswith(CLEARED_PREFIX)


def plan_prune(
    messages: Sequence[Message],
    rules: PruneRules,
    fmt: Format,
    compacted_at: str,
    count: Callable[[str], int],
) -> PrunePlan:
    """`fmt` and `compacted_at` are kept for callers; the output carries neither (see the
    module doc)."""
    uses = {use.id: use for message in messages for use in tool_uses(message)}
    order = list(uses)
    protected = set(order[len(order) - rules.keep_recent :]) if rules.keep_recent else set()
    out = list(messages)
    changed: set[int] = set()
    cleared_calls: set[str] = set()
    saved = 0
    for index, message in enumerate(messages):
        if message.role != "user" or isinstance(message.content, str):
            continue
        blocks = list(message.content)
        for position, block in enumerate(blocks):
            if not isinstance(block, ToolResultBlock) or block.tool_use_id in protected:
                continue
            use = uses.get(block.tool_use_id)
            if use is None or use.name in rules.exclude_tools or already_cleared(block):
                continue
            content = tool_result_text(block)
            tokens = count(content)
            text = placeholder(use, tokens, error_line(content, block.is_error, use.name))
            if count(text) >= tokens:
                continue
            blocks[position] = _marked(block, {"content": text}, fmt, compacted_at)
            saved += tokens - count(text)
            cleared_calls.add(use.id)
        if blocks != list(message.content):
            out[index] = message.model_copy(update={"content": blocks})
            changed.add(index)
    if rules.clear_inputs:
        saved += _clear_inputs(out, cleared_calls, changed, fmt, compacted_at, count)
    return PrunePlan(tuple(out), tuple(sorted(changed)), len(cleared_calls), saved)


def _clear_inputs(
    out: list[Message],
    calls: Collection[str],
    changed: set[int],
    fmt: Format,
    compacted_at: str,
    count: Callable[[str], int],
) -> int:
    saved = 0
    for index, message in enumerate(out):
        if message.role != "assistant" or isinstance(message.content, str):
            continue
        blocks = list(message.content)
        for position, block in enumerate(blocks):
            if isinstance(block, ToolUseBlock) and block.id in calls and block.input:
                saved += max(count(compact_json(block.input)) - count("{}"), 0)
                blocks[position] = _marked(block, {"input": {}}, fmt, compacted_at)
        if blocks != list(message.content):
            out[index] = message.model_copy(update={"content": blocks})
            changed.add(index)
    return saved


def _marked(
    block: ToolResultBlock | ToolUseBlock, update: dict[str, Any], fmt: Format, at: str
) -> Any:
    """A copy of the block with `update`, and nothing else: no marker field (`fmt` and
    `at` no longer change it)."""
    data = block.model_dump(mode="json", exclude_unset=True) | update
    note = data.get(BOOKKEEPING)
    call = note.get("call") if isinstance(note, dict) else None
    if isinstance(call, dict) and "input" in update:  # an OpenAI call's raw arguments too
        function = dict(call.get("function") or {}) | {"arguments": "{}"}
        data[BOOKKEEPING] = dict(note or {}) | {"call": call | {"function": function}}
    return type(block).model_validate(data)
