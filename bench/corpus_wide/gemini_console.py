"""Gemini CLI sessions as its terminal shows them (a console transcript copied whole).

Gemini CLI's console marks the user's input with `> ` (continued on lines indented by
two spaces), the model's text with `✦ `, and draws each tool call as a box: `╭─` ... `│
<status> <ToolName> <argument>` and the output on the box's next lines ... `╰─`. The
status is `✔` (done), `-` (cancelled by the user) or `x`/`✕` (failed); anything but `✔`
is flagged `is_error`. The argument is shown as Gemini CLI describes the call: a command
with its description in parentheses, an edit as `path: old… => new…`, a write as
`Writing to path`; the command or path is taken from it. The display names become the
tools and the argument field Gemini CLI's tool schemas document (`Shell` →
`run_shell_command.command`, `ReadFile` → `read_file.absolute_path`, `WriteFile` →
`write_file.file_path`, `Edit` → `replace.file_path`, `ReadManyFiles` →
`read_many_files.paths`, `FindFiles` → `glob.pattern`, `SearchText` →
`search_file_content.pattern`, `ReadFolder` → `list_directory.path`, `WebFetch` →
`web_fetch.prompt`, `GoogleSearch` → `google_web_search.query`). Its notices (`✕ [API
Error ...]`, `ℹ ...`), banner and tips are the console's, never sent to the model: left
out."""

from __future__ import annotations

import re
from typing import Any

from bench.corpus_wide.session import Transcript

_TOOLS = {
    "Shell": ("run_shell_command", "command"),
    "ReadFile": ("read_file", "absolute_path"),
    "WriteFile": ("write_file", "file_path"),
    "Edit": ("replace", "file_path"),
    "ReadManyFiles": ("read_many_files", "paths"),
    "FindFiles": ("glob", "pattern"),
    "SearchText": ("search_file_content", "pattern"),
    "ReadFolder": ("list_directory", "path"),
    "WebFetch": ("web_fetch", "prompt"),
    "GoogleSearch": ("google_web_search", "query"),
}
_HEAD = re.compile(r"^(?P<status>\S{1,2})\s+(?P<tool>[A-Z][A-Za-z]+(?: Memory)?)\s*(?P<arg>.*)$")
_STATUSES = frozenset({"✔", "-", "x", "✕", "✗", "?", "o", "⊷"})
# Gemini CLI shows a command with its description: `cmd (what it does)`.
_DESCRIBED = re.compile(r"^(.*?) \(([^()]*)\)$", re.DOTALL)
_BOX_LINE = re.compile(r"^ │ ?(.*?)\s*│?\s*$")


def convert(text: str) -> Transcript:
    transcript = Transcript()
    kind, body = "", list[str]()
    for line in [*text.splitlines(), "> "]:
        if line.startswith(" ╭"):
            _flush(transcript, kind, body)
            kind, body = "box", []
        elif line.startswith(" ╰"):
            _flush(transcript, kind, body)
            kind, body = "", []
        elif kind == "box":
            found = _BOX_LINE.match(line)
            body.append(found.group(1) if found else line.strip())
        elif line.startswith(("> ", "✦ ", "✕ ", "ℹ ")):
            _flush(transcript, kind, body)
            kind, body = line[:1], [line[2:]]
        elif kind and (line.startswith("  ") or not line.strip()):
            body.append(line[2:] if line.startswith("  ") else "")
        elif line.strip():
            _flush(transcript, kind, body)
            kind, body = "", []
    return transcript


def _flush(transcript: Transcript, kind: str, body: list[str]) -> None:
    text = "\n".join(line.rstrip() for line in body).strip()
    if kind == ">":
        transcript.user(text)
    elif kind == "✦":
        transcript.say(text)
    elif kind == "box" and text:
        _box(transcript, [line for line in body])


def _box(transcript: Transcript, lines: list[str]) -> None:
    """One box: a call per status line (Gemini CLI groups calls made together in one)."""
    heads = [i for i, line in enumerate(lines) if _is_head(line)]
    if not heads:
        transcript.user("\n".join(lines).strip())
        return
    for at, end in zip(heads, [*heads[1:], len(lines)], strict=True):
        head = _HEAD.match(lines[at].strip())
        assert head is not None
        body = lines[at + 1 : end]
        output = "\n".join(line[3:] if line.startswith("   ") else line for line in body)
        tool, field = _TOOLS.get(head.group("tool"), (head.group("tool"), "input"))
        argument: Any = head.group("arg").strip()
        if tool == "run_shell_command":
            described = _DESCRIBED.match(argument)
            argument = described.group(1) if described else argument
        elif tool == "replace":  # `path: old… => new…`
            argument = argument.split(": ", 1)[0]
        elif tool == "write_file":  # `Writing to path`
            argument = argument.removeprefix("Writing to ")
        if field == "paths":
            argument = [argument]
        failed = head.group("status") != "✔"
        transcript.call(tool, {field: argument}, output.strip(), is_error=failed)


def _is_head(line: str) -> bool:
    head = _HEAD.match(line.strip())
    return head is not None and head.group("status") in _STATUSES and head.group("tool") in _TOOLS
