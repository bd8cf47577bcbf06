"""Bodies of the context-engineering toolkit's routes: `/compress-tool-result`, `/preprocess-input`,
`/project-rules` and `/assemble`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from app.api.examples import EXAMPLE_MESSAGES
from app.api.schemas import (
    ANY_MESSAGE_ITEMS,
    DEFAULT_MAX_MESSAGES,
    FORMAT_DESCRIPTION,
    Messages,
    SessionIdField,
)
from app.core.toolkit import ToolResultLimits, stray_fields
from app.core.vocabulary import Format, RequestFormat

MAX_TEXT = 1_000_000

_READ_RESULT = "def test_app():\n    assert app() == 1\n"
_REMINDER = (
    "<system-reminder>\nThe user mentioned @src/utils/auth.ts.\n"
    "You MUST read this file with the Read tool before answering.\n</system-reminder>"
)


class CompressToolResultRequest(BaseModel):
    """One tool call's full result, to compress for history (the model saw it whole once)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "tool": "Read",
                    "input": {"file_path": "tests/test_app.py"},
                    "result": _READ_RESULT,
                    "session_id": "session-42",
                },
                {
                    "tool": "bash",
                    "input": {"command": "pytest -q"},
                    "result": {
                        "status": "error",
                        "data": {"stdout": "1 failed", "stderr": "E assert 0 == 1", "exit_code": 1},
                        "error": {"code": "exit_1", "message": "command failed"},
                        "stats": {"ms": 812},
                    },
                    "limits": {"bash_stderr_lines": 10},
                },
            ]
        },
    )
    tool: str = Field(
        min_length=1,
        max_length=200,
        description=(
            "The tool's name. Matched case-insensitively, `_`, `-` and `.` ignored, with "
            "common aliases: LS (ls, list_dir, ...), Glob (glob, find_files, ...), Grep "
            "(grep, rg, search, ...), Read (read_file, view, cat, ...), Edit/MultiEdit "
            "(edit, str_replace, ...), Write (write_file, create_file, ...), Bash (bash, "
            "shell, run_command, ...), TodoWrite (todo_write, ...), `str_replace_editor` by "
            "its `command`; anything else gets the fallback rule."
        ),
    )
    input: dict[str, Any] = Field(
        default_factory=dict,
        description="The tool call's input (arguments): paths, patterns, edits, todos.",
    )
    result: str | dict[str, Any] | list[dict[str, Any]] = Field(
        description=(
            "The full result: the text the agent got back, a list of content blocks (an "
            "Anthropic `tool_result`'s content: its text blocks are read), or a structured "
            "object `{status, data, error, text, stats, context}` (an object with none of "
            "these fields is the data itself; other fields beside `data` or `text` are "
            "refused, 422, rather than dropped)."
        )
    )
    is_error: bool = Field(False, description="A string result is an error (status `error`).")
    session_id: str | None = SessionIdField
    limits: ToolResultLimits | None = Field(
        None, description="Per-request limits; fields left out take the server's defaults."
    )

    @field_validator("result")
    @classmethod
    def _no_field_dropped(
        cls, result: str | dict[str, Any] | list[dict[str, Any]]
    ) -> str | dict[str, Any] | list[dict[str, Any]]:
        stray = stray_fields(result) if isinstance(result, dict) else []
        if stray:
            named = ", ".join(f"`{key}`" for key in stray)
            raise PydanticCustomError(
                "fields_lost",
                "{named} beside `data` or `text` would be lost: put them inside `data`",
                {"named": named},
            )
        return result


class CompressToolResultResponse(BaseModel):
    """The compressed result: `result` as an object, `content` as the tool message text."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "tool": "Read",
                    "rule": "read",
                    "result": {
                        "status": "success",
                        "data": {
                            "file": "tests/test_app.py",
                            "start_line": 1,
                            "end_line": 2,
                            "content": "     1\tdef test_app():\n     2\t    assert app() == 1",
                            "truncated": False,
                        },
                    },
                    "content": (
                        '{"status": "success", "data": {"file": "tests/test_app.py", '
                        '"start_line": 1, "end_line": 2, "content": "     1\\tdef test_app():'
                        '\\n     2\\t    assert app() == 1", "truncated": false}}'
                    ),
                    "original_chars": 39,
                    "compressed_chars": 172,
                    "warnings": [],
                }
            ]
        }
    )
    tool: str = Field(description="The tool name as sent.")
    rule: Literal["ls", "glob", "grep", "read", "edit", "write", "bash", "todo", "fallback"] = (
        Field(description="The rule that was applied.")
    )
    result: dict[str, Any] = Field(
        description="`status`, the compressed `data`, and `error` when the status is error."
    )
    content: str = Field(description="`result` as JSON text: the tool message to store.")
    original_chars: int = Field(description="Characters of the result as sent.")
    compressed_chars: int = Field(description="Characters of `content`.")
    warnings: list[str] = Field(default_factory=list)


class PreprocessInputRequest(BaseModel):
    """A user input whose `@path` mentions get reminders to read the file."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"text": "Why does @src/utils/auth.ts reject user@example.com?"}]
        },
    )
    text: str = Field(max_length=MAX_TEXT, description="The user's input as typed.")
    check_exists: bool = Field(
        True,
        description=(
            "Check each mention in the work directory: only files and directories that "
            "exist get a reminder; the others are listed under `missing`."
        ),
    )
    limit: int | None = Field(
        None, ge=0, le=100, description="Mentions named; defaults to the server's (5)."
    )


class MissingMentionInfo(BaseModel):
    """A mention that names nothing in the work directory, and why."""

    path: str
    reason: str = Field(
        description="not_found, outside_workdir, invalid_path, unreadable, not_regular_file."
    )


class PreprocessInputResponse(BaseModel):
    """The input with the reminders appended, and what was found."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "text": f"Why does @src/utils/auth.ts reject user@example.com?\n\n{_REMINDER}",
                    "mentions": ["src/utils/auth.ts"],
                    "reminded": ["src/utils/auth.ts"],
                    "more_count": 0,
                    "missing": [],
                    "warnings": [],
                }
            ]
        }
    )
    text: str = Field(description="The input, then a blank line and the reminder blocks.")
    mentions: list[str] = Field(description="Every mention, in order, each once.")
    reminded: list[str] = Field(description="The mentions named in reminders (at most limit).")
    more_count: int = Field(description="Existing mentions beyond the limit: (and N more…).")
    missing: list[MissingMentionInfo] = Field(description="Mentions that name nothing.")
    warnings: list[str] = Field(default_factory=list)


class ProjectRulesResponse(BaseModel):
    """`CODE_LAW.md` (any case) at the root of the work directory: the project's rules."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "found": True,
                    "path": "CODE_LAW.md",
                    "content": "Never edit generated files.\n",
                    "skipped": None,
                },
                {"found": False, "path": None, "content": None, "skipped": None},
            ]
        }
    )
    found: bool = Field(description="True when the rules were read.")
    path: str | None = Field(description="The file's name as it is on disk.")
    content: str | None = Field(description="Its text.")
    skipped: str | None = Field(
        description="Why a file that exists was not read: too_large, not_utf8, unreadable, ..."
    )


class AssembleRequest(BaseModel):
    """The parts of one model call, to put in layer order (system, rules, history, input)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "system": "You are a coding agent.",
                    "tools": "Tools: Read(file_path), Bash(command).",
                    "messages": EXAMPLE_MESSAGES[1:],
                    "input": "Now fix @tests/test_app.py.",
                    "todo_recap": "Todos: 1 in progress (fix the test).",
                }
            ]
        },
    )
    system: str = Field("", max_length=MAX_TEXT, description="L1: the system prompt.")
    tools: str = Field(
        "", max_length=MAX_TEXT, description="L1: tool descriptions, after the system prompt."
    )
    rules: str | None = Field(
        None,
        max_length=MAX_TEXT,
        description=(
            "L2: project rules. Left out: CODE_LAW.md from the work directory; empty: none."
        ),
    )
    messages: Messages = Field(
        default_factory=list,
        description=(
            "L3: the history, system summaries included, in either shape (as for `/compact`); "
            "at most `COMPACT_MAX_MESSAGES` messages."
        ),
        json_schema_extra={"maxItems": DEFAULT_MAX_MESSAGES},
    )
    format: RequestFormat = Field("auto", description=FORMAT_DESCRIPTION)
    input: str = Field("", max_length=MAX_TEXT, description="The current user input.")
    preprocess: bool = Field(True, description="Add @file reminders to `input` first.")
    todo_recap: str = Field("", max_length=MAX_TEXT, description="Appended after the input.")


class AssembleResponse(BaseModel):
    """The message list to send, in the request's format, and the layer of each message."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "messages": [
                        {
                            "role": "system",
                            "content": "You are a coding agent.\n\nTools: Read(file_path).",
                        },
                        {
                            "role": "system",
                            "content": "[Project rules] CODE_LAW.md:\nNever edit generated files.",
                        },
                        {"role": "user", "content": "Fix the failing test."},
                    ],
                    "format": "anthropic",
                    "layers": ["L1", "L2", "input"],
                    "rules_source": "workdir",
                    "rules_path": "CODE_LAW.md",
                    "mentions": None,
                    "warnings": [],
                }
            ]
        }
    )
    messages: list[dict[str, Any]] = Field(
        description="The messages to send, in the request's format.",
        json_schema_extra=ANY_MESSAGE_ITEMS,
    )
    format: Format
    layers: list[Literal["L1", "L2", "L3", "input", "L3+input"]] = Field(
        description="The layer of each message of `messages`, one label each."
    )
    rules_source: Literal["workdir", "request", "none"]
    rules_path: str | None
    mentions: PreprocessInputResponse | None = Field(
        None, description="The @file preprocessing of `input`, when it ran."
    )
    warnings: list[str] = Field(default_factory=list)
