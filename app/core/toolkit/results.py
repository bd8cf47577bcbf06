"""The compressed form of a tool result, to write into history.

The model reasons over a tool's full output once (the scratchpad); history keeps this
compressed form, so a session's history stops growing with every file it reads.

Input: the tool's name, its input (arguments) and its full result, either a string (the
text the agent got back) or a structured object `{status, data, error, text, stats,
context}`. Its fields: `status` is kept (a string result is `success`, or `error` when the
caller says so); `data` is compressed by the tool's rule (when a structured result has no
`data`, its `text` is compressed instead); `error` is kept whole when the status is
`error` (a string error result becomes `{"message": <the text>}`); `text`, `stats` and
`context` are dropped. An object with none of those fields (a bare `{"stdout", "stderr"}`)
is the `data` itself; other fields beside `data` or `text` would be lost, so `stray_fields`
names them for the caller to refuse. Status markers in `data` (`truncated`, `applied`,
`fallback`) are kept, and a rule that cuts something sets `truncated`.

Which rule applies is decided by the tool's name, case- and separator-insensitively, with
the aliases of common agents (`read_file`, `bash`/`shell`, `str_replace_editor` by its
`command`, ...); an unknown tool gets the fallback: kept as it is when short, else a
summary and the first `fallback_chars` characters (an object: every field, each cut).
Bash and the fallback keep every field of an object (a shell's `{stdout, stderr, ...}`), cut when
long; the other rules keep the fields listed in docs/toolkit.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.toolkit.limits import ToolResultLimits
from app.core.toolkit.rules import (
    PATH_FIELDS,
    RULES,
    Body,
    Rule,
    to_content,
)

ToolResult = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]

MARKERS = ("truncated", "applied", "fallback")


@dataclass(frozen=True)
class ToolOutput:
    """A result as received, as `{status, data, text, error}`."""

    status: str
    data: Body
    text: str | None
    error: dict[str, Any] | None


@dataclass(frozen=True)
class CompressedResult:
    """The history form: `result` as an object, `content` as the tool message's text."""

    tool: str
    rule: Rule
    result: dict[str, Any]
    content: str
    original_chars: int


def _key(name: str) -> str:
    return re.sub(r"[\s_\-.]", "", name.lower())


_ALIASES: dict[Rule, tuple[str, ...]] = {
    "ls": ("ls", "list", "list_dir", "list_directory", "listdir", "list_files", "dir"),
    "glob": (
        "glob",
        "find_files",
        "find_file",
        "file_search",
        "glob_search",
        "find",
        "find_by_name",
    ),
    "grep": (
        "grep",
        "rg",
        "ripgrep",
        "search",
        "search_files",
        "grep_search",
        "search_file_content",
        "codebase_search",
    ),
    "read": ("read", "read_file", "view", "view_file", "cat", "read_text_file", "open_file"),
    "edit": (
        "edit",
        "multi_edit",
        "edit_file",
        "str_replace",
        "replace",
        "replace_in_file",
        "search_replace",
    ),
    "write": ("write", "write_file", "create_file", "write_to_file"),
    "bash": (
        "bash",
        "shell",
        "sh",
        "run_shell_command",
        "execute_command",
        "run_command",
        "run_terminal_cmd",
        "execute_bash",
        "terminal",
        "exec",
    ),
    "todo": ("todo_write", "todo", "todos", "update_todos", "write_todos", "todo_list"),
}
ALIASES: dict[str, Rule] = {_key(a): rule for rule, names in _ALIASES.items() for a in names}
# Multi-command editors (SWE-agent, OpenHands, Anthropic's text editor tool): by `command`.
_EDITOR_COMMANDS: dict[str, Rule] = {
    "view": "read",
    "create": "write",
    "str_replace": "edit",
    "insert": "edit",
    "undo_edit": "edit",
}
EDITORS = frozenset({_key("str_replace_editor"), _key("str_replace_based_edit_tool")})


def rule_for(tool: str, args: Mapping[str, Any]) -> Rule:
    """The rule for a tool name (case-insensitive, `_`/`-`/`.` ignored), or `fallback`."""
    key = _key(tool)
    if key in EDITORS:
        command = args.get("command")
        return _EDITOR_COMMANDS.get(command, "fallback") if isinstance(command, str) else "fallback"
    return ALIASES.get(key, "fallback")


ENVELOPE = frozenset({"status", "data", "error", "text", "stats", "context"})


def stray_fields(result: Mapping[str, Any]) -> list[str]:
    """The fields of a structured result that would be dropped: those outside the envelope
    when it also has `data` or `text` (without either, they are the data)."""
    if result.get("data") is None and not isinstance(result.get("text"), str):
        return []
    return [key for key in result if key not in ENVELOPE]


def parse_output(result: str | Mapping[str, Any], *, is_error: bool = False) -> ToolOutput:
    """A string or a structured result, read as `{status, data, error, text}`; the fields
    outside that envelope are the data when it has neither `data` nor `text`."""
    if isinstance(result, str):
        status = "error" if is_error else "success"
        error = {"message": result} if is_error else None
        return ToolOutput(status, None, result, error)
    raw_error = result.get("error")
    error = (
        dict(raw_error)
        if isinstance(raw_error, Mapping)
        else {"message": raw_error}
        if isinstance(raw_error, str)
        else None
    )
    raw_status = result.get("status")
    if isinstance(raw_status, str) and raw_status:
        status = raw_status
    else:
        status = "error" if is_error or error is not None else "success"
    text = result.get("text")
    data = result.get("data")
    if data is None and not isinstance(text, str):
        data = {key: value for key, value in result.items() if key not in ENVELOPE} or None
    return ToolOutput(status, data, text if isinstance(text, str) else None, error)


def compress_tool_result(
    tool: str,
    args: Mapping[str, Any],
    result: ToolResult,
    limits: ToolResultLimits,
    *,
    is_error: bool = False,
    note: str | None = None,
) -> CompressedResult:
    """The compressed form of one result. `note` (a freshness note) goes into `data`.
    A list of content blocks (an Anthropic `tool_result`'s content) reads as its text."""
    if not isinstance(result, str | Mapping):
        result = blocks_text(result)
    rule = rule_for(tool, args)
    output = parse_output(result, is_error=is_error)
    compressed: dict[str, Any] = {"status": output.status}
    body: Body = output.data if output.data is not None else output.text
    if isinstance(result, str) and output.status == "error":
        body = None  # the text is the error message, kept whole under `error`
    if body is not None or note is not None:
        data = RULES[rule](args, body, limits) if body is not None else {}
        data = _with_markers(data, output.data)
        if note is not None:
            data["note"] = note
        compressed["data"] = data
    if output.status == "error" and output.error is not None:
        compressed["error"] = output.error
    return CompressedResult(
        tool=tool,
        rule=rule,
        result=compressed,
        content=to_content(compressed),
        original_chars=len(result) if isinstance(result, str) else len(to_content(result)),
    )


def blocks_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    """The text blocks' text, one per line (images and other blocks carry none)."""
    return "\n".join(
        str(b["text"]) for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _with_markers(data: dict[str, Any], original: Body) -> dict[str, Any]:
    if not isinstance(original, dict):
        return data
    for marker in MARKERS:
        if marker in original and not data.get(marker):
            data[marker] = original[marker]
    return data


__all__ = [
    "PATH_FIELDS",
    "Body",
    "CompressedResult",
    "Rule",
    "ToolOutput",
    "ToolResult",
    "ToolResultLimits",
    "compress_tool_result",
    "parse_output",
    "rule_for",
    "to_content",
]
