"""What a history shows, read once from its messages: requests, file operations, tool
calls with their results and errors, commands, what an earlier summary carried.

Both the extractive summary (`app.core.summary.extractive`) and the fact ledger
(`app.core.ledger.extract`) read these facts. A compaction extracts them once and hands
the same `ExtractedFacts` to both (`SummaryRequest.facts`, `guard_summary`): each tool
result is searched for its error line once (`app.core.history.failures`), each call's file
operations are read once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.assemble import CONTINUE, RESTORED_ACK, RESTORED_PREFIX, SUMMARY_ACK, SUMMARY_PREFIX
from app.core.compact_json import compact_json
from app.core.history.failures import KEY_LINE_SEPARATOR, error_line
from app.core.history.file_ops import (
    DEFAULT_VOCABULARY,
    FILE_KINDS,
    PATH_FIELDS,
    FileKind,
    FileOp,
    FileTracker,
    Vocabulary,
    shell_command,
)
from app.core.history.harness import result_words, user_words
from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_tool_result_message,
    tool_result_text,
    tool_uses,
)

ERROR_LINE_CHARS = 200  # an error's key line, kept whole up to this: it says what failed
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
LINE_CHARS = 120

_CARRIED_REQUEST = re.compile(r"^- First request: (.+)$", re.MULTILINE)
COMMANDS_LINE = "- Recent commands, oldest first"
_LISTED_ITEM = "  - `"
_LISTED_MORE = "    "  # a listed command's later lines, indented under its item
# A command is listed whole up to this many characters, on the lines it was written on (a
# script, a quoted text: cut to its first line, it could not be run again or found).
COMMAND_CHARS = 600


@dataclass(frozen=True)
class ToolCall:
    """One tool call and its answer (`result` is None when no tool_result answered it)."""

    name: str
    label: str
    input_json: str
    result: str | None
    is_error: bool
    error: str | None = None  # the line that names the error


@dataclass(frozen=True)
class ErrorNote:
    call: str
    message: str
    resolved: bool


@dataclass(frozen=True)
class ExtractedFacts:
    """What the history shows; files are listed once each, in first-seen order."""

    first_request: str | None = None
    latest_request: str | None = None
    files_read: tuple[str, ...] = ()
    files_created: tuple[str, ...] = ()
    files_edited: tuple[str, ...] = ()
    files_deleted: tuple[str, ...] = ()
    tool_counts: tuple[tuple[str, int], ...] = ()
    commands: tuple[str, ...] = ()
    last_assistant_text: str | None = None
    last_call: ToolCall | None = None
    errors: tuple[ErrorNote, ...] = ()
    # For the ledger: the ids of calls a result reports as failed, and each call's file
    # operations, in the order the calls were made.
    failed_calls: frozenset[str] = frozenset()
    call_operations: tuple[tuple[FileOp, ...], ...] = ()
    # The user's own words in each message ('' where the user said nothing: an assistant
    # message, tool results, an earlier summary, restored files).
    spoken: tuple[str, ...] = ()

    def files(self) -> list[tuple[FileKind, tuple[str, ...]]]:
        """The paths of each file kind, in `FILE_KINDS` order."""
        files = (self.files_read, self.files_created, self.files_edited, self.files_deleted)
        return list(zip(FILE_KINDS, files, strict=True))

    def lists(self) -> dict[str, Sequence[Any]]:
        """Every list the summary shows, by the name of its limit."""
        result = self.last_call.result if self.last_call else None
        result_lines = [one_line(line) for line in (result or "").splitlines() if line.strip()]
        return dict(self.files()) | {
            "tools": self.tool_counts,
            "commands": self.commands,
            "errors": self.errors,
            "result": result_lines,
        }


def extract_facts(
    messages: Sequence[Message], vocabulary: Vocabulary = DEFAULT_VOCABULARY
) -> ExtractedFacts:
    """The facts of `messages`, in the order they happened."""
    blocks = [
        block
        for message in messages
        for block in message.blocks()
        if isinstance(block, ToolResultBlock)
    ]
    results = {block.tool_use_id: block for block in blocks}
    names = {call.id: call.name for message in messages for call in tool_uses(message)}
    errors = _Errors()
    requests: list[str] = []
    carried: str | None = None
    carried_commands: list[str] = []
    last_text: str | None = None
    calls: list[ToolCall] = []
    files = _FileOps(vocabulary)
    spoken = [""] * len(messages)
    for at, message in enumerate(messages):
        text = "\n".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()
        if message.role == "assistant":
            last_text = text or last_text
            for use in tool_uses(message):
                calls.append(_tool_call(use, results.get(use.id), errors))
                files.record(use)
        elif message.role == "user":
            # The user's reply a harness put in a tool result comes before the words typed
            # beside it (`result_words`).
            replied = result_words(message)
            if replied:
                spoken[at] = replied
                requests.append(replied)
            if not text or is_tool_result_message(message):
                continue
            if text.startswith(SUMMARY_PREFIX.strip()):
                found = _CARRIED_REQUEST.search(text)
                carried = carried or (found.group(1) if found else None)
                carried_commands.extend(listed_commands(text))
            elif not text.startswith(RESTORED_PREFIX) and not _seam(messages, at, text):
                words = user_words(message)
                spoken[at] = "\n\n".join(w for w in (replied, words) if w)
                if words:
                    requests.append(words)
    first = carried or (requests[0] if requests else None)
    counts = Counter(call.name for call in calls)
    called = {use.id for message in messages for use in tool_uses(message)}
    # A result whose call is not among these messages (a strategy cut the result and kept
    # its call): its error is a fact all the same.
    orphans = [
        _orphan_result(block, errors, names.get(block.tool_use_id, ""))
        for block in blocks
        if block.tool_use_id not in called
    ]
    return ExtractedFacts(
        first_request=first,
        latest_request=requests[-1] if requests and requests[-1] != first else None,
        files_read=tuple(files.ops["read"]),
        files_created=tuple(files.ops["created"]),
        files_edited=tuple(files.ops["edited"]),
        files_deleted=tuple(files.ops["deleted"]),
        tool_counts=tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
        commands=_distinct([*carried_commands, *files.commands]),
        last_assistant_text=last_text,
        last_call=calls[-1] if calls else None,
        errors=_errors([*calls, *orphans]),
        failed_calls=frozenset(
            block.tool_use_id
            for block in blocks
            if errors.line(block, names.get(block.tool_use_id, "")) is not None
        ),
        call_operations=tuple(files.operations),
        spoken=tuple(spoken),
    )


class _FileOps:
    """Paths by operation (dicts as ordered sets) and command lines."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.ops: dict[str, dict[str, None]] = {kind: {} for kind in FILE_KINDS}
        self.commands: list[str] = []
        self.operations: list[tuple[FileOp, ...]] = []
        self.tracker = FileTracker(vocabulary)

    def record(self, use: ToolUseBlock) -> None:
        ops = tuple(self.tracker.operations(use))
        self.operations.append(ops)
        for op in ops:
            self.ops[op.kind][op.path] = None
        command = shell_command(use.input)
        if command is not None and use.name not in EDITOR_TOOLS:
            self.commands.append(command)


def _input_path(data: Mapping[str, Any]) -> str | None:
    for key in PATH_FIELDS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


class _Errors:
    """Each tool result's error line, searched once whoever asks (the call it answers, or
    the ledger's look over every result)."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, str], str | None] = {}

    def line(self, result: ToolResultBlock, tool: str) -> str | None:
        key = (id(result), tool)
        if key not in self._found:
            self._found[key] = error_line(tool_result_text(result), result.is_error, tool)
        return self._found[key]


def _tool_call(use: ToolUseBlock, result: ToolResultBlock | None, errors: _Errors) -> ToolCall:
    command = use.input.get("command")
    path = _input_path(use.input) or ""
    input_json = compact_json(use.input)
    if use.name in EDITOR_TOOLS:
        shown = f"{command} {path}".strip()
    elif isinstance(command, str):
        shown = one_line(command)
    else:
        shown = path or one_line(input_json)
    text = None if result is None else tool_result_text(result)
    error = None if result is None else errors.line(result, use.name)
    return ToolCall(
        name=use.name,
        label=f"{use.name} `{shown}`" if shown else use.name,
        input_json=input_json,
        result=text,
        is_error=error is not None,
        error=error,
    )


ORPHAN_LABEL = "an earlier call"


def _orphan_result(result: ToolResultBlock, errors: _Errors, name: str) -> ToolCall:
    error = errors.line(result, name)
    return ToolCall(
        name=name,
        label=ORPHAN_LABEL,
        input_json=f"result {result.tool_use_id}",
        result=tool_result_text(result),
        is_error=error is not None,
        error=error,
    )


def _errors(calls: Sequence[ToolCall]) -> tuple[ErrorNote, ...]:
    """Each distinct error once, by the line that names it; resolved when the same call
    succeeded after its last failure."""
    last_success: dict[tuple[str, str], int] = {}
    last_error: dict[tuple[str, str], tuple[int, tuple[str, str]]] = {}
    for index, call in enumerate(calls):
        same_call = (call.name, call.input_json)
        if call.result is not None and not call.is_error:
            last_success[same_call] = index
        elif call.is_error:
            message = _key_lines(call.error or "(no error text)")
            last_error[(call.label, message)] = (index, same_call)
    return tuple(
        ErrorNote(label, message, last_success.get(same_call, -1) > index)
        for (label, message), (index, same_call) in last_error.items()
    )


def command_item(command: str) -> str:
    """`command` as a summary in this format lists it under `COMMANDS_LINE`: whole up to
    `COMMAND_CHARS`, its later lines indented under the item; else its first line, cut
    short (`…`)."""
    stripped = command.strip()
    if len(stripped) > COMMAND_CHARS:
        return f"{_LISTED_ITEM}{one_line(stripped, COMMAND_CHARS)}`"
    return _LISTED_ITEM + f"\n{_LISTED_MORE}".join(stripped.splitlines()) + "`"


def _seam(messages: Sequence[Message], at: int, text: str) -> bool:
    """Whether `messages[at]` (of `text`) is the `Continue.` this service puts after its own
    acknowledgement (of a summary, of restored files) where a user turn must follow: not
    the user's words."""
    if text != CONTINUE or at == 0 or messages[at - 1].role != "assistant":
        return False
    said = "".join(b.text for b in messages[at - 1].blocks() if isinstance(b, TextBlock))
    return said.strip() in (SUMMARY_ACK, RESTORED_ACK)


def listed_commands(summary: str) -> list[str]:
    """The commands a summary in this format lists whole under `COMMANDS_LINE`
    (`command_item`; whitespace collapsed; those cut short left out). A later compaction
    carries them: the extractive summary lists them again, the ledger reads them as command
    facts."""
    _, heading, after = summary.partition(f"\n{COMMANDS_LINE}")
    if not heading:
        return []
    items: list[list[str]] = []
    for line in after.splitlines()[1:]:
        if line.startswith(_LISTED_ITEM):
            items.append([line.removeprefix(_LISTED_ITEM)])
        elif items and line.startswith(_LISTED_MORE):
            items[-1].append(line.removeprefix(_LISTED_MORE))
        else:
            break
    commands = []
    for item in items:
        text = " ".join(" ".join(item).split())
        if text.endswith("`") and not text.endswith(" …`") and len(text) > 1:
            commands.append(text[:-1].rstrip())
    return commands


def _distinct(commands: Sequence[str]) -> tuple[str, ...]:
    """Each command once whatever its whitespace, where it last ran."""
    found: dict[str, str] = {}
    for command in commands:
        key = " ".join(command.split())
        found.pop(key, None)
        found[key] = command
    return tuple(found.values())


def _key_lines(error: str) -> str:
    """An error's key lines (one or two, `error_line`'s), each cut to one short line."""
    return KEY_LINE_SEPARATOR.join(
        one_line(part, ERROR_LINE_CHARS) for part in error.split(KEY_LINE_SEPARATOR)
    )


def cut_words(text: str, count: int) -> str:
    """`text`'s first `count` words on one line, `…` when some were cut."""
    words = text.split()
    return " ".join(words[:count]) + (" …" if len(words) > count else "")


def one_line(text: str, chars: int = LINE_CHARS) -> str:
    stripped = text.strip()
    cut = stripped.split("\n", 1)[0][:chars].rstrip()
    return cut if cut == stripped else f"{cut} …"
