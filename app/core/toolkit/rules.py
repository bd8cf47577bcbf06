"""The rule of each kind of tool result: what of it history keeps (`ToolResultLimits`).

`RULES` maps a rule (`app.core.toolkit.results.rule_for` picks it by the tool's name) to the
function that compresses a result's body; each keeps the facts that matter for its kind
(the file and the lines read, the matches found, the command's exit and last lines) and
sets `truncated` when it cuts something.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from app.core.toolkit.limits import ToolResultLimits

Rule = Literal["ls", "glob", "grep", "read", "edit", "write", "bash", "todo", "fallback"]
Body = str | list[Any] | dict[str, Any] | int | float | bool | None


def to_content(value: Any) -> str:
    """The JSON text written as the tool message (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, default=str)


PATH_FIELDS = ("file_path", "path", "filename", "file", "target_file", "absolute_path")
_NUMBERED = re.compile(r"^\s*(\d+)(?:\t|→)")
_GREP_LINE = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+)[:-](?P<text>.*)$")
_MAX_PREAMBLE = 3
_MIN_FIELD_CHARS = 200  # a long object's field keeps at least this much (fallback rule)
_NOTHING_FOUND = re.compile(r"^no (files|matches|results) found", re.IGNORECASE)
_FOUND_HEADER = re.compile(r"^found \d+ (files?|matches?|results?)", re.IGNORECASE)


def _arg(args: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _int_arg(args: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _text_of(body: Body, *keys: str) -> str:
    """The text a rule reads: the string itself, a known key of an object, else JSON."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        for key in keys:
            value = body.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, dict | list):
                return _text_of(value, *keys)
    if isinstance(body, list) and all(isinstance(item, str) for item in body):
        return "\n".join(body)
    return to_content(body)


def _entry_name(item: Any) -> str:
    if isinstance(item, dict):
        for key in ("path", "name", "file", "filename"):
            if isinstance(item.get(key), str):
                suffix = "/" if item.get("type") in ("directory", "dir") else ""
                return str(item[key]) + suffix
    return item if isinstance(item, str) else to_content(item)


def _entries(body: Body, *keys: str) -> list[str]:
    """A listing as entries: text lines (bullets stripped) or the items of a list."""
    if isinstance(body, dict):
        for key in keys:
            if isinstance(body.get(key), list | str):
                return _entries(body[key])
        return []
    if isinstance(body, list):
        return [_entry_name(item) for item in body]
    lines = [line.strip() for line in str(body).splitlines()]
    lines = [line.removeprefix("- ").strip() for line in lines]
    return [
        line
        for line in lines
        if line and not _NOTHING_FOUND.match(line) and not _FOUND_HEADER.match(line)
    ]


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _lines(text: str) -> list[str]:
    return text.splitlines()


# --- the rules, one per kind of tool ------------------------------------------------------


def compress_ls(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """LS: directory + counts + the first N entries."""
    entries = _entries(body, "entries", "files", "items", "children")
    directory = _arg(args, "path", "dir", "directory", "dir_path", "target_directory") or "."
    if entries and entries[0].rstrip("/") == directory.rstrip("/"):
        entries = entries[1:]  # a tree listing's first line is the directory itself
    directories = sum(1 for entry in entries if entry.endswith("/"))
    keep = limits.ls_entries
    return {
        "directory": directory,
        "count": len(entries),
        "directories": directories,
        "files": len(entries) - directories,
        "entries": entries[:keep],
        "truncated": len(entries) > keep,
    }


def compress_glob(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """Glob: pattern + hit count + the first N hits."""
    hits = _entries(body, "files", "matches", "paths", "filenames", "results")
    keep = limits.glob_hits
    return {
        "pattern": _arg(args, "pattern", "glob", "glob_pattern", "query", "name"),
        "count": len(hits),
        "matches": hits[:keep],
        "truncated": len(hits) > keep,
    }


def _grep_match(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        match: dict[str, Any] = {}
        file = next((item[k] for k in ("file", "path", "filename") if k in item), None)
        if file is not None:
            match["file"] = file
        number = _int_arg(item, "line_number", "lineNumber", "line")
        if number is not None:
            match["line"] = number
        text = next(
            (item[k] for k in ("text", "content", "match", "line") if isinstance(item.get(k), str)),
            None,
        )
        if text is not None:
            match["text"] = text
        return match
    line = str(item)
    parsed = _GREP_LINE.match(line)
    if parsed is None:
        return {"file": line}
    return {"file": parsed["file"], "line": int(parsed["line"]), "text": parsed["text"].strip()}


def compress_grep(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """Grep: a summary + the first N matches with file and line number."""
    if isinstance(body, dict):
        items: list[Any] = next(
            (body[k] for k in ("matches", "results", "files") if isinstance(body.get(k), list)),
            [],
        )
    elif isinstance(body, list):
        items = body
    else:
        items = [line for line in _entries(body) if line != "--"]
    matches = [_grep_match(item) for item in items]
    files = len({m.get("file") for m in matches if m.get("file") is not None})
    keep = limits.grep_matches
    return {
        "pattern": _arg(args, "pattern", "query", "regex", "search"),
        "summary": f"{_plural(len(matches), 'match', 'matches')} in {_plural(files, 'file')}",
        "count": len(matches),
        "files": files,
        "matches": matches[:keep],
        "truncated": len(matches) > keep,
    }


def _read_meta(body: Body) -> Mapping[str, Any]:
    """Where a structured Read keeps its numbers: top level, or Claude Code's `file`."""
    if not isinstance(body, dict):
        return {}
    nested = body.get("file")
    return nested if isinstance(nested, dict) else body


def _read_start(args: Mapping[str, Any], body: Body) -> int:
    if isinstance(body, dict):
        start = _int_arg(_read_meta(body), "start_line", "startLine")
        if start is not None:
            return start
    view_range = args.get("view_range")
    if isinstance(view_range, list) and view_range and isinstance(view_range[0], int):
        return max(view_range[0], 1)
    return max(_int_arg(args, "offset", "start_line", "line", "from") or 1, 1)


def _numbered_from(lines: Sequence[str]) -> int | None:
    """Where the tool's own numbered lines start (after at most `_MAX_PREAMBLE` lines like
    "Here's the result of running `cat -n` on a.py:"), or None when the text is plain."""
    for start in range(min(len(lines), _MAX_PREAMBLE + 1)):
        if _NUMBERED.match(lines[start]):
            rest = lines[start:]
            return start if all(_NUMBERED.match(x) for x in rest if x.strip()) else None
    return None


def compress_read(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """Read: the range that was read, with line numbers, at most N lines."""
    lines = _lines(_text_of(body, "content", "text", "file"))
    preamble = _numbered_from(lines)
    numbered = preamble is not None
    lines = lines[preamble or 0 :]
    keep = lines[: limits.read_lines]
    data: dict[str, Any] = {"file": _arg(args, *PATH_FIELDS)}
    if numbered:
        numbers = [int(m[1]) for m in map(_NUMBERED.match, keep) if m is not None]
        content = keep
        first, last = numbers[0], numbers[-1]
    else:
        first = _read_start(args, body)
        content = [f"{first + i:>6}\t{line}" for i, line in enumerate(keep)]
        last = first + len(keep) - 1
    if keep:
        data["start_line"] = first
        data["end_line"] = last
    if isinstance(body, dict):
        total = _int_arg(_read_meta(body), "total_lines", "totalLines")
        if total is not None:
            data["total_lines"] = total
    data["content"] = "\n".join(content)
    data["truncated"] = len(lines) > len(keep)
    return data


def _edits(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(old, new) text of each edit in the call."""
    raw = args.get("edits")
    items: list[Mapping[str, Any]] = (
        [item for item in raw if isinstance(item, Mapping)] if isinstance(raw, list) else [args]
    )
    edits = []
    for item in items:
        old = _arg(item, "old_string", "old_str", "oldText", "old_text", "search") or ""
        new = _arg(item, "new_string", "new_str", "newText", "new_text", "replace") or ""
        if old or new:
            edits.append((old, new))
    return edits


def _ranges(numbers: Sequence[int]) -> list[str]:
    """Consecutive line numbers as `a-b` ranges."""
    ranges: list[list[int]] = []
    for number in numbers:
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        elif not ranges or number > ranges[-1][1]:
            ranges.append([number, number])
    return [f"{a}-{b}" if a != b else str(a) for a, b in ranges]


def compress_edit(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """Edit/MultiEdit: file + changed ranges + key lines (the new text, first N lines)."""
    edits = _edits(args)
    new_lines = [line for _, new in edits for line in _lines(new)]
    data: dict[str, Any] = {
        "file": _arg(args, *PATH_FIELDS),
        "edits": len(edits),
        "removed_lines": sum(len(_lines(old)) for old, _ in edits),
        "added_lines": len(new_lines),
    }
    ranges = body.get("ranges") if isinstance(body, dict) else None
    if not isinstance(ranges, list):
        text = _text_of(body, "text", "message", "snippet", "diff")
        numbers = [int(m[1]) for m in map(_NUMBERED.match, _lines(text)) if m is not None]
        ranges = _ranges(numbers) if numbers else None
    if ranges:
        data["ranges"] = ranges
    data["key_lines"] = "\n".join(new_lines[: limits.edit_lines])
    data["truncated"] = len(new_lines) > limits.edit_lines
    return data


def _write_action(args: Mapping[str, Any], body: Body) -> str:
    if isinstance(body, dict):
        kind = body.get("action") or body.get("type")
        if kind in ("create", "created"):
            return "created"
        if kind in ("update", "updated", "overwrite", "overwritten"):
            return "overwritten"
    text = _text_of(body, "text", "message").lower()
    if "creat" in text or args.get("command") == "create":
        return "created"
    if "overwr" in text or "updat" in text:
        return "overwritten"
    return "written"


def compress_write(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """Write: file + created/overwritten + its first N lines."""
    lines = _lines(_arg(args, "content", "file_text", "contents", "text") or "")
    return {
        "file": _arg(args, *PATH_FIELDS),
        "action": _write_action(args, body),
        "lines": len(lines),
        "head": "\n".join(lines[: limits.write_lines]),
        "truncated": len(lines) > limits.write_lines,
    }


def cut_value(value: Any, chars: int) -> Any:
    """`value` as it is when its JSON fits in `chars`, else its first `chars` characters
    (of its JSON when it is not a string) and how many more there were."""
    text = value if isinstance(value, str) else to_content(value)
    if len(to_content(value)) <= chars or len(text) <= chars:
        return value
    return f"{text[:chars]}… [{len(text) - chars} more characters]"


_EXIT_CODES = ("exit_code", "exitCode", "returncode", "return_code", "code")


def compress_bash(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """Bash: the command, exit code, a stdout summary (counts, head, tail) and the stderr
    tail. A string result is all stdout. Other fields of an object (Claude Code's
    `interrupted`, `isImage`) are kept, cut to `fallback_chars`."""
    stderr = ""
    exit_code: int | None = None
    rest: dict[str, Any] = {}
    if isinstance(body, dict):
        stdout = _text_of(body.get("stdout", body.get("output", "")))
        raw_stderr = body.get("stderr")
        stderr = raw_stderr if isinstance(raw_stderr, str) else ""
        exit_code = _int_arg(body, *_EXIT_CODES)
        read = {"stdout", "output", *_EXIT_CODES, *(["stderr"] if raw_stderr == stderr else [])}
        rest = {k: v for k, v in body.items() if k not in read}
    else:
        stdout = _text_of(body)
    data: dict[str, Any] = {"command": _arg(args, "command", "cmd", "script")}
    if exit_code is not None:
        data["exit_code"] = exit_code
    out = _lines(stdout)
    head = out[: limits.bash_stdout_head]
    tail = out[max(len(head), len(out) - limits.bash_stdout_tail) :]
    summary: dict[str, Any] = {"lines": len(out), "chars": len(stdout)}
    if head:
        summary["head"] = "\n".join(head)
    if tail:
        summary["tail"] = "\n".join(tail)
    data["stdout"] = summary
    err = _lines(stderr)
    if err:
        kept = err[len(err) - limits.bash_stderr_lines :] if limits.bash_stderr_lines else []
        data["stderr"] = {"lines": len(err), "tail": "\n".join(kept)}
    cut = False
    for key, value in rest.items():
        if data.get(key) is None:
            data[key] = cut_value(value, limits.fallback_chars)
            cut = cut or data[key] is not value
    data["truncated"] = (
        cut or len(head) + len(tail) < len(out) or len(err) > limits.bash_stderr_lines
    )
    return data


_STATUS_ORDER = ("completed", "in_progress", "pending")


def todo_recap(todos: Sequence[Any], limit: int) -> dict[str, Any]:
    """Counts by status and the items in progress, never the full list."""
    items = [t for t in todos if isinstance(t, Mapping)]
    counts: dict[str, int] = {}
    for item in items:
        status = str(item.get("status") or "pending")
        counts[status] = counts.get(status, 0) + 1
    order = [s for s in _STATUS_ORDER if s in counts] + sorted(set(counts) - set(_STATUS_ORDER))
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in order]
    recap = f"{_plural(len(items), 'todo')}" + (f": {', '.join(parts)}" if parts else "")
    current = [
        str(item.get("content") or item.get("activeForm") or item.get("title") or "")
        for item in items
        if item.get("status") == "in_progress"
    ]
    data: dict[str, Any] = {"recap": recap}
    if current and limit:
        data["in_progress"] = current[:limit]
    return data


def compress_todo(args: Mapping[str, Any], body: Body, limits: ToolResultLimits) -> dict[str, Any]:
    """TodoWrite: only a recap (from the call's todos, else the result's)."""
    todos = args.get("todos")
    if not isinstance(todos, list) and isinstance(body, dict):
        todos = body.get("todos") or body.get("newTodos")
    if not isinstance(todos, list):
        todos = body if isinstance(body, list) else []
    return todo_recap(todos, limits.todo_items)


def compress_fallback(
    args: Mapping[str, Any], body: Body, limits: ToolResultLimits
) -> dict[str, Any]:
    """Any other tool: kept as it is when short; else a summary and the first characters,
    or, for an object, every field, each cut to its share of the characters."""
    text = _text_of(body)
    if len(text) <= limits.fallback_chars:
        return {"result": body}
    summary = f"{_plural(len(_lines(text)), 'line')}, {_plural(len(text), 'character')}"
    if isinstance(body, dict) and body:
        share = max(_MIN_FIELD_CHARS, limits.fallback_chars // len(body))
        cut = {k: cut_value(v, share) for k, v in body.items()}
        return {"summary": summary, "result": cut, "fallback": True, "truncated": True}
    return {
        "summary": summary,
        "head": text[: limits.fallback_chars],
        "fallback": True,
        "truncated": True,
    }


RuleFn = Callable[[Mapping[str, Any], Body, ToolResultLimits], dict[str, Any]]
RULES: dict[Rule, RuleFn] = {
    "ls": compress_ls,
    "glob": compress_glob,
    "grep": compress_grep,
    "read": compress_read,
    "edit": compress_edit,
    "write": compress_write,
    "bash": compress_bash,
    "todo": compress_todo,
    "fallback": compress_fallback,
}
