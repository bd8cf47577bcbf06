"""Claude Code sessions as its terminal shows them (a console transcript copied whole).

Claude Code's console marks the user's input with `> ` (continued on lines indented by two
spaces), the model's text and each tool call with `⏺ `, a tool's result with `  ⎿  `
(continued on lines indented by five), and its thinking with `✻ Thinking…`. A call reads
as the tool's display name and argument (`Bash(cmd)`, `Read(path)`, `Update(path)`,
`Write(path)`, `Search(pattern: "x", path: "y")`, `List(path)`, `Fetch(url)`,
`Task(description)`, `Update Todos`), which become the tool and the input field Claude
Code's tool schema documents (`Bash.command`, `Read.file_path`, `Edit.file_path`,
`Grep.pattern`, `LS.path`, `WebFetch.url`, `TodoWrite.todos`). A result the console shows
as refused, interrupted or failed (`Error: ...`, `No (tell Claude what to do
differently)`, `User rejected ...`, `Interrupted by user`) is flagged `is_error`, as
Claude Code's own transcript flags it. Thinking, the welcome box and tips are left out:
the model is not sent them again.
"""

from __future__ import annotations

import re
from typing import Any

from bench.corpus_wide.session import Transcript

_CALL = re.compile(r"^(?P<name>[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)*)\((?P<arg>.*)\)…?$", re.DOTALL)
_FIELDS = {
    "Bash": ("Bash", "command"),
    "Read": ("Read", "file_path"),
    "Update": ("Edit", "file_path"),
    "Edit": ("Edit", "file_path"),
    "Write": ("Write", "file_path"),
    "List": ("LS", "path"),
    "Fetch": ("WebFetch", "url"),
    "Task": ("Task", "description"),
    "Web Search": ("WebSearch", "query"),
}
_SEARCH = re.compile(r'pattern: "(?P<pattern>.*?)"(?:, path: "(?P<path>.*?)")?')
_TODO = re.compile(r"^\s*([☐☒])\s+(.+)$")
_FAILED = ("Error", "No (tell Claude", "User rejected", "Interrupted by user")


def convert(text: str) -> Transcript:
    transcript = Transcript()
    items = _items(text.splitlines())
    at = 0
    while at < len(items):
        kind, body = items[at]
        if kind == "user":
            transcript.user(body)
        elif kind == "say":
            result = (
                items[at + 1][1] if at + 1 < len(items) and items[at + 1][0] == "result" else None
            )
            call = _call(body, result)
            if call is None:
                transcript.say(body)
                if result is not None:  # a result under plain text: the console's notice
                    transcript.user(result)
            else:
                name, arguments = call
                output = result if result is not None else "(no result shown)"
                transcript.call(name, arguments, output, is_error=output.startswith(_FAILED))
            at += 1 if result is not None else 0
        at += 1
    return transcript


def _items(lines: list[str]) -> list[tuple[str, str]]:
    """(kind, text) of each marked block: `user`, `say` (text or a call), `result`;
    `skip` for thinking and the console's own chrome."""
    items: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("> "):
            items.append(("user", [line[2:]]))
        elif line.startswith("⏺ "):
            items.append(("say", [line[2:]]))
        elif line.startswith("  ⎿  ") or line.startswith("  ⎿ "):
            items.append(("result", [line[5:]]))
        elif line.startswith("✻ "):
            items.append(("skip", []))
        elif items and (line.startswith("  ") or not line.strip()):
            kind, body = items[-1]
            indent = 5 if kind == "result" else 2
            body.append(line[indent:] if line.startswith(" " * indent) else line.strip())
        elif line.strip():
            items.append(("skip", []))
    return [
        (kind, "\n".join(line.rstrip() for line in body).strip())
        for kind, body in items
        if kind != "skip"
    ]


def _call(head: str, result: str | None) -> tuple[str, dict[str, Any]] | None:
    if head.startswith(("Update Todos", "Read Todos")) and "\n" not in head:
        todos = [
            {"content": m.group(2), "status": "completed" if m.group(1) == "☒" else "pending"}
            for m in (_TODO.match(line) for line in (result or "").splitlines())
            if m
        ]
        return ("TodoWrite", {"todos": todos}) if head.startswith("Update") else ("TodoRead", {})
    match = _CALL.match(" ".join(head.split()) if head.count("\n") else head)
    if match is None:
        return None
    name, argument = match.group("name"), match.group("arg").strip()
    if name == "Search":
        found = _SEARCH.search(argument)
        if found is None:
            return ("Grep", {"pattern": argument})
        fields = {"pattern": found.group("pattern")}
        return ("Grep", fields | ({"path": found.group("path")} if found.group("path") else {}))
    tool, field = _FIELDS.get(name, (name, "input"))
    return (tool, {field: argument})
