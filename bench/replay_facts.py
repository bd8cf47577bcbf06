"""Ground-truth facts of an original agent session, by the replay benchmark's own rules.

Deliberately independent of the service's fact ledger (`app/core/ledger/extract.py`): the bench
must be able to tell the ledger is wrong. The rules, applied to the messages as sent, in
either shape (Anthropic Messages or OpenAI Chat Completions):

- path: the string value of a tool call input key named `path`, `file_path`, `absolute_path`,
  `absolutePath`, `notebook_path`,
  `target_file`, `filepath` or `filename` (a file read, written or edited; directories
  passed as `relative_workspace_path` or `dir_path` are not files).
- command: a tool call input `command` (or `cmd`), whitespace collapsed; distinct ones.
- error (flagged) and output_error (not flagged): a tool result that the provider flags
  (`is_error`), or whose text names an error without a flag (the OpenAI shape has no flag:
  all its errors are output errors); an error line found both ways counts in each kind.
  Its key line is the line that names the error: after a Python traceback the last
  `SomeError: ...` line; else the first line that is `error:`/`fatal:`/`failed:`,
  `SomethingError: ...` (an optional diagnostic code such as `E999` before it),
  `FAILED ...`, or mentions `command not found`, `No such file or directory`,
  `Permission denied`, `timed out`, a non-zero `exit code`/`exit status`, is Go's
  `--- FAIL: TestX`, or is only `Cancelled`/`Aborted`/`Interrupted`. A flagged result that
  opens by saying what failed (`Failed to edit ...`, `Error: ...`, the user's refusal
  `User rejected update to a.py`): that first line, the rest being what the call carried;
  the same for a result not flagged that another line shows to be an error.
  A flagged result with none of these: its first non-empty line. A reading tool's result
  (read, view, grep, search, list, find, fetch) not flagged: only its first two lines, the
  rest being the file's own text. Whitespace collapsed, cut to 200 characters.
- first_request and request: each user text that is not a tool result, with the blocks an
  agent's harness injects removed (`<environment_details>`, `<system-reminder>` and the
  like, see `HARNESS_TAGS`, and the notices it writes from their opening line to the
  block's end: Cline's `[TASK RESUMPTION]`, Gemini CLI's setup message, see
  `HARNESS_NOTICES`; one-line notices such as `[Request interrupted by user]` only their
  line, `HARNESS_LINES`); its first non-empty line, whitespace collapsed, cut to 200
  characters. The first one is `first_request`, every later distinct one a `request`.
  The harnesses' texts are those their sources write (Gemini CLI's `<session_context>`,
  aider's reflected messages, OpenHands' context blocks, ...); a field that says there was
  nothing (`Error: (none)`) names no error.

A fact is kept when its text occurs in the final context's text (every string of every
message, tool call arguments included) after both sides had whitespace collapsed; a
ledger line grouping one program's commands (`- [commands] git: status · log -3`) is read
as its commands (`git status`, `git log -3`). Commands that differ only in their numbers
stay distinct facts here: the ledger's dropping of near duplicates counts as a loss. A short
fact (a request of two words) can be found by chance; that is the price of a simple rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

Msg = dict[str, Any]
# The kinds of the table: errors flagged `is_error` apart from error lines found in
# unflagged output, the user's first request apart from the later ones.
KINDS = ("path", "command", "error", "output_error", "first_request", "request")
PATH_KEYS = (
    "path",
    "file_path",
    "target_file",
    "filepath",
    "filename",
    "absolute_path",
    "absolutePath",
    "notebook_path",
)
COMMAND_KEYS = ("command", "cmd")
FACT_CHARS = 200
HARNESS_TAGS = (
    "environment_details",
    "system-reminder",
    "system_reminder",
    "additional_data",
    "attached_files",
    "open_files",
    "user_info",
    "custom_instructions",
    "project_layout",
    "task_progress",
    "feedback",
    # Gemini CLI's setup and hooks, OpenHands' context blocks
    "session_context",
    "hook_context",
    "RUNTIME_INFORMATION",
    "REPOSITORY_INFO",
    "REPOSITORY_INSTRUCTIONS",
    "EXTRA_INFO",
)
_HARNESS = re.compile(
    r"<(" + "|".join(map(re.escape, HARNESS_TAGS)) + r")\b[^>]*>.*?(</\1>|\Z)", re.DOTALL
)
# Lines that open text the harness wrote into a user message (not the user's words).
HARNESS_NOTICES = (
    "[TASK RESUMPTION]",
    "[ERROR] You did not use a tool",
    "# TODO LIST UPDATE REQUIRED",
    "This is the Gemini CLI. We are setting up the context",
    "This session is being continued from a previous conversation",
    "I committed the changes with git hash",
    "I added these files to the chat:",
    # aider's reflected messages and notes, Gemini CLI's loop notice, OpenHands' headless
    # reply: each harness's own text in the user's turn
    "I ran this command:",
    "I did `git reset --hard HEAD~1`",
    "I have *added these files to the chat*",
    "Here are summaries of some files present",
    "# Fix any errors below, if possible.",
    "System: Potential loop detected",
    "Please continue working on the task on whatever approach",
)
# Notices of one line: only the line is the harness's (the user's words may follow).
HARNESS_LINES = (
    "[Request interrupted by user",
    "Caveat: The messages below were generated",
    "User steering update:",  # Gemini CLI, before the user's `<user_input>`
)
_NOTICE = re.compile(
    r"^\s*(?:" + "|".join(map(re.escape, HARNESS_NOTICES)) + r").*\Z", re.DOTALL | re.MULTILINE
)
_NOTICE_LINE = re.compile(
    r"^\s*(?:" + "|".join(map(re.escape, HARNESS_LINES)) + r").*$", re.MULTILINE
)
# Tags that wrap the user's own words (Cline's `<task>`, Cursor's `<user_query>`, ...).
_WRAPPER_TAG = re.compile(r"</?(?:task|user_query|user_message|feedback|answer|user_input)>")
# aider's reflected edit failure, sent as the user's turn.
_REFLECTED = re.compile(
    r"^\s*#+ ?\d+ SEARCH/REPLACE blocks? failed to match!.*\Z", re.DOTALL | re.M
)
# A field that says there was nothing (Gemini CLI's shell tool: `Error: (none)`).
_NOTHING = re.compile(r"^\s*[A-Z][\w ]{0,30}:\s*\((?:none|empty)\)\s*$")
_TRACEBACK = "Traceback (most recent call last)"
_GROUP_LINE = re.compile(r"^- \[commands\] (.+?): (.+)$", re.MULTILINE)
_NAMED_ERROR = re.compile(r"^\s*(?:[A-Z]+\d+\s+)?(?:[\w]+\.)*[A-Z]\w*(?:Error|Exception)\b:")
_ERROR_LINE = re.compile(
    r"^\s*(?:error|fatal|failed)\s*[:\[]"
    r"|^\s*(?-i:FAILED)\b|^\s*--- (?-i:FAIL): "
    r"|command not found|No such file or directory|Permission denied|timed out"
    r"|exit (?:code|status)\s*:?\s*[1-9]"
    r"|^\s*(?:cancell?ed|canceled|aborted|interrupted)\.?\s*$",
    re.IGNORECASE,
)


# A flagged result that opens by saying what failed: an edit that failed, the user's refusal
# of the call; what follows is what the call carried (a diff, the text an edit looked for).
_OPENS_WITH_FAILURE = re.compile(
    r"^\s*(?:failed to\b|(?:error|fatal)\s*:"
    r"|(?:the )?user (?:rejected|denied|declined|refused|does(?:n't| not) want)\b)",
    re.IGNORECASE,
)
# Tools whose result is a file's text, search hits or a listing: what it quotes is no failure
# of the call, which says so in its first lines (`Error: file not found`).
_READS = re.compile(r"read|view|cat\b|open|grep|search|glob|list|^ls$|find|fetch", re.IGNORECASE)
READ_STATUS_LINES = 2


def normal(text: str) -> str:
    """Whitespace collapsed to single spaces, ends stripped."""
    return " ".join(text.split())


def _cut(text: str) -> str:
    return normal(text)[:FACT_CHARS].rstrip()


@dataclass
class Facts:
    """The distinct facts of one session, by kind, in order of first appearance."""

    by_kind: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def add(self, kind: str, text: str) -> None:
        if text and text not in self.by_kind[kind]:
            self.by_kind[kind].append(text)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    id: str
    text: str
    is_error: bool


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        if "content" in content:
            return _text_of(content["content"])
    return ""


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def walk(messages: Iterable[Msg]) -> Iterator[ToolCall | ToolResult | str]:
    """Tool calls, tool results and user texts, in order, from either shape."""
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                args = _arguments(function.get("arguments"))
                yield ToolCall(str(call.get("id")), str(function.get("name")), args)
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    args = _arguments(block.get("input"))
                    yield ToolCall(str(block.get("id")), str(block.get("name")), args)
        elif role == "tool":
            yield ToolResult(str(message.get("tool_call_id")), _text_of(content), False)
        elif role == "user":
            if isinstance(content, str):
                yield content
                continue
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    text = _text_of(block.get("content"))
                    yield ToolResult(
                        str(block.get("tool_use_id")), text, bool(block.get("is_error"))
                    )
                elif block.get("type") == "text":
                    yield str(block.get("text", ""))


def error_line(text: str, flagged: bool, tool: str = "") -> str | None:
    """The key line of an error tool result, or None when the result is not an error."""
    lines = [line for line in text.splitlines() if line.strip() and not _NOTHING.match(line)]
    if not flagged and _READS.search(tool):
        lines = lines[:READ_STATUS_LINES]  # the rest is the file's (or the hits') own text
    if any(_TRACEBACK in line for line in lines):
        start = max(i for i, line in enumerate(lines) if _TRACEBACK in line)
        named = [line for line in lines[start:] if _NAMED_ERROR.match(line)]
        if named:
            return _cut(named[-1])
    opens = bool(lines) and _OPENS_WITH_FAILURE.match(lines[0]) is not None
    if flagged and opens:
        return _cut(lines[0])
    for line in lines:
        if _NAMED_ERROR.match(line) or _ERROR_LINE.search(line):
            # An error all the same when no flag says so (the OpenAI shape has none): one
            # that opens by saying what failed is named by that line.
            return _cut(lines[0] if opens else line)
    if flagged and lines:
        return _cut(lines[0])
    return None


def request_line(text: str) -> str | None:
    """The first line of what the user said, harness-injected blocks removed and the tags
    of the wrappers that hold the user's words (`<task>`, `<user_query>`, ...) dropped."""
    stripped = _NOTICE.sub("", _NOTICE_LINE.sub("", _HARNESS.sub("", text)))
    stripped = _REFLECTED.sub("", stripped)
    stripped = _WRAPPER_TAG.sub("", stripped)
    for line in stripped.splitlines():
        if line.strip():
            return _cut(line)
    return None


def extract(messages: Iterable[Msg]) -> Facts:
    facts = Facts()
    tools: dict[str, str] = {}
    for item in walk(messages):
        if isinstance(item, ToolCall):
            tools[item.id] = item.name
            for key in PATH_KEYS:
                value = item.input.get(key)
                if isinstance(value, str) and value.strip():
                    facts.add("path", normal(value))
            for key in COMMAND_KEYS:
                value = item.input.get(key)
                if isinstance(value, str) and value.strip():
                    facts.add("command", normal(value))
        elif isinstance(item, ToolResult):
            line = error_line(item.text, item.is_error, tools.get(item.id, ""))
            if line:
                facts.add("error" if item.is_error else "output_error", line)
        else:
            line = request_line(item)
            if line:
                first = not facts.by_kind["first_request"]
                if first or line != facts.by_kind["first_request"][0]:
                    facts.add("first_request" if first else "request", line)
    return facts


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
        parsed = _arguments(value) if value.startswith("{") else {}
        for inner in parsed.values():
            yield from _strings(inner)
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def context_text(messages: Iterable[Msg]) -> str:
    """Every string of the messages (tool call arguments decoded), whitespace collapsed."""
    text = "\n".join(s for m in messages for s in _strings(m))
    grouped = (
        f"{program} {rest}"
        for program, rests in _GROUP_LINE.findall(text)
        for rest in rests.split(" · ")
    )
    return normal("\n".join([text, *grouped]))


def kept(facts: Facts, messages: Iterable[Msg]) -> dict[str, tuple[int, int]]:
    """Per kind: (facts found in `messages`, facts in all)."""
    text = context_text(messages)
    return {
        kind: (sum(1 for f in found if f in text), len(found))
        for kind, found in facts.by_kind.items()
    }
