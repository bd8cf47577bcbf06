"""Which files a tool call reads, creates, edits or deletes, and the shell command it ran.

Agents name the same operations differently, so the vocabulary is a table of tool names
(`FileTool`) with the path fields their documented schemas use (`PATH_FIELDS`): Claude
Code's `Read`/`Edit`/`MultiEdit`/`Write` (`file_path`), Cline's and Roo Code's
`read_file`/`replace_in_file`/`write_to_file`/`apply_diff` (`path`, Cline's native calls
`absolutePath`), Cursor's `read_file`/`edit_file`/`delete_file` (`target_file`), Gemini
CLI's `read_file` (`absolute_path`), `write_file`/`replace` (`file_path`) and
`read_many_files` (`paths`, a list), opencode's `read`/`write`/`edit` (`filePath`),
Continue's `create_new_file`/`edit_existing_file` (`filepath`), Windsurf's `view_file`/
`replace_file_content` (`AbsolutePath`, `TargetFile`), OpenHands' and Anthropic's
`str_replace_editor` and Goose's `text_editor` (by their `command`), SWE-agent's `open`/
`create`/`edit`/`insert` (the path is the command's second word, an edit changes the file
opened last), Codex's `apply_patch` (paths from the patch text), and shell commands that
read (`cat`, `head`, ...) or write (`sed -i`, `tee`, `>` and `>>`, `mv`, `cp`, `touch`,
`rm`) files. A request may add tools of its own (`file_tools`: `name.field:kind`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.core.messages import ToolUseBlock

FileKind = Literal["read", "created", "edited", "deleted"]
FILE_KINDS: tuple[FileKind, ...] = ("read", "created", "edited", "deleted")
PATH_FIELDS = (
    "path",
    "file_path",
    "target_file",
    "filename",
    "file",
    "absolute_path",
    "notebook_path",
    "absolutePath",
    "filePath",
    "filepath",
    "AbsolutePath",
    "TargetFile",
)


@dataclass(frozen=True)
class FileTool:
    """A tool whose call does `kind` to the file in one of `fields`; for multi-command
    tools, only when its `command` input is `command`."""

    name: str
    kind: FileKind
    fields: tuple[str, ...] = PATH_FIELDS
    command: str | None = None


@dataclass(frozen=True)
class FileOp:
    """What a call did to one file; `label` says it in the ledger (`written`, `moved to
    x`), the kind otherwise."""

    kind: FileKind
    path: str
    label: str = ""

    @property
    def note(self) -> str:
        return self.label or self.kind


def _tools(kind: FileKind, *names: str) -> list[FileTool]:
    return [FileTool(name, kind) for name in names]


_EDITORS = ("str_replace_editor", "str_replace_based_edit_tool", "text_editor")
_EDITOR_COMMANDS: dict[str, FileKind] = {
    "view": "read",
    "create": "created",
    "write": "created",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
}
BUILTIN_TOOLS: tuple[FileTool, ...] = (
    *_tools("read", "Read", "read_file", "read_text_file", "view", "view_file", "open", "read"),
    FileTool("read_many_files", "read", ("paths",)),
    *_tools("created", "Write", "write_to_file", "write_file", "create_file", "create", "write"),
    FileTool("create_new_file", "created"),
    *_tools(
        "edited",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "replace_in_file",
        "edit_file",
        "search_replace",
        "apply_diff",
        "insert_content",
        "search_and_replace",
        "str_replace",
        "edit",
        "insert",
        "replace",
        "edit_existing_file",
        "replace_file_content",
        "multi_edit",
    ),
    *_tools("deleted", "delete_file", "remove_file"),
    *(
        FileTool(name, kind, command=command)
        for name in _EDITORS
        for command, kind in _EDITOR_COMMANDS.items()
    ),
)
# SWE-agent: the tool's name is the command's first word; `edit`/`insert` change the file
# opened or created last.
_SWE_NAMED: dict[str, FileKind] = {"open": "read", "create": "created"}
_SWE_CURRENT = frozenset({"edit", "insert", "str_replace"})
_SPEC = re.compile(
    r"^(?P<name>[^\s.:\[\]]+)\.(?P<field>[^\s.:\[\]]+)"
    r"(?:\[command=(?P<command>[^\]\s]+)\])?:(?P<kind>\w+)$"
)


def parse_file_tool(spec: str) -> FileTool:
    """`"save_note.target:created"` → FileTool("save_note", "created", ("target",));
    `"editor.path[command=write]:edited"` adds the command. Raises ValueError."""
    match = _SPEC.match(spec.strip())
    if match is None or match["kind"] not in FILE_KINDS:
        raise ValueError(
            "expected 'tool_name.path_field:kind' or 'tool_name.path_field[command=value]:kind' "
            f"with kind one of {', '.join(FILE_KINDS)}, got {spec!r}"
        )
    kind: FileKind = match["kind"]
    return FileTool(match["name"], kind, (match["field"],), match["command"])


class Vocabulary:
    """The tools that touch files: the built-in ones, and those a request adds (first)."""

    def __init__(self, extra: Iterable[FileTool] = ()) -> None:
        self.by_name: dict[str, list[FileTool]] = {}
        for tool in (*extra, *BUILTIN_TOOLS):
            self.by_name.setdefault(tool.name, []).append(tool)

    @classmethod
    def from_specs(cls, specs: Iterable[str]) -> Vocabulary:
        return cls(parse_file_tool(spec) for spec in specs)


DEFAULT_VOCABULARY = Vocabulary()


class FileTracker:
    """Reads calls in order: their file operations, remembering SWE-agent's open file."""

    def __init__(self, vocabulary: Vocabulary = DEFAULT_VOCABULARY) -> None:
        self.vocabulary = vocabulary
        self.current: str | None = None

    def operations(self, call: ToolUseBlock) -> list[FileOp]:
        ops = list(self._operations(call))
        for op in ops:
            if op.kind != "deleted":
                self.current = op.path
        return ops

    def _operations(self, call: ToolUseBlock) -> Iterator[FileOp]:
        data = call.input
        command = data.get("command")
        for tool in self.vocabulary.by_name.get(call.name, ()):
            if tool.command is not None and command != tool.command:
                continue
            paths = _paths(data, tool.fields)
            if paths:
                yield from (FileOp(tool.kind, path) for path in paths)
                return
            if tool.command is not None:
                return
        if call.name in _EDITORS:
            return
        words = _words(command) if isinstance(command, str) else []
        if call.name in _SWE_NAMED and len(words) >= 2 and words[0] == call.name:
            yield FileOp(_SWE_NAMED[call.name], words[1])
            return
        if call.name in _SWE_CURRENT and self.current:
            yield FileOp("edited", self.current)
            return
        yield from patch_operations(_patch_text(data))
        shell = shell_command(data)
        if shell is not None:
            yield from shell_operations(shell)


def _paths(data: Mapping[str, Any], fields: Sequence[str]) -> list[str]:
    """The paths in the first of `fields` that holds one: a string, or a list of them."""
    for key in fields:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return [value.strip()]
        if isinstance(value, list):
            found = [v.strip() for v in value if isinstance(v, str) and v.strip()]
            if found:
                return found
    return []


def shell_command(data: Mapping[str, Any]) -> str | None:
    """The shell command line of a call: `command` or `cmd` as text, or as an argv list
    (`["bash", "-lc", "..."]` gives its script)."""
    for key in ("command", "cmd"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[-2] in ("-c", "-lc"):
                return str(value[-1]).strip() or None
            return " ".join(value).strip() or None
    return None


_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_DIFF_NEW = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)
_PATCH_KINDS: dict[str, FileKind] = {"Add": "created", "Update": "edited", "Delete": "deleted"}


def _patch_text(data: Mapping[str, Any]) -> str:
    for key in ("input", "patch", "diff"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    command = data.get("command")
    if isinstance(command, list):
        return "\n".join(v for v in command if isinstance(v, str) and "\n" in v)
    return command if isinstance(command, str) and "*** Begin Patch" in command else ""


def patch_operations(text: str) -> Iterator[FileOp]:
    """Codex's `*** Add/Update/Delete File:` headers, else a unified diff's `+++` lines."""
    if not text:
        return
    headers = _PATCH_FILE.findall(text)
    for action, path in headers:
        yield FileOp(_PATCH_KINDS[action], path)
    for path in _PATCH_MOVE.findall(text):
        yield FileOp("created", path, "moved here")
    if not headers and "\n@@" in text:
        for path in _DIFF_NEW.findall(text):
            if path != "/dev/null":
                yield FileOp("edited", path)


_SEGMENT = re.compile(r"&&|\|\||;|\||\n")
_REDIRECT = re.compile(r"(?<![0-9&<>])(>>?)([^\s;&|<>()]*)")
_WORD = re.compile(r"\"([^\"]*)\"|'([^']*)'|(\S+)")
_READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "nl", "wc"})


def _words(command: str) -> list[str]:
    """Shell-like words: quotes group and are dropped."""
    return ["".join(parts) for parts in _WORD.findall(command)]


def _redirects(segment: str) -> list[tuple[str, str]]:
    """The `>`/`>>` redirects of a command segment as (operator, target): read from its
    unquoted words only (a `>` inside quotes is a character of an argument, as in
    `pip install 'fire>=0.3'`), the target the rest of the word or the next word."""
    words = [(m.group(3) is None, "".join(m.groups(""))) for m in _WORD.finditer(segment)]
    found = []
    for index, (quoted, word) in enumerate(words):
        for match in () if quoted else _REDIRECT.finditer(word):
            op, target = match.groups()
            if not target and match.end() == len(word) and index + 1 < len(words):
                target = words[index + 1][1]
            if target:
                found.append((op, target))
    return found


def _looks_like_path(word: str) -> bool:
    return bool(word) and not word.startswith(("-", "$", "<", ">", "&")) and "=" not in word


def shell_operations(command: str) -> Iterator[FileOp]:
    """Files a shell command line touches: readers read, `sed -i`/`perl -i` edit, `tee`,
    `>` and `touch` write, `>>` appends (an edit), `cp`/`mv` write their target (and `mv`
    moves its source), `rm` deletes. Heredoc bodies are not commands: only the lines
    before a `<<` body are read."""
    script = command.split("<<", 1)[0] if "<<" in command else command
    for segment in _SEGMENT.split(script):
        words = _words(segment)
        while words and (("=" in words[0] and not words[0].startswith("=")) or words[0] == "sudo"):
            words = words[1:]  # `FOO=1 cmd`, `sudo cmd`
        if not words:
            continue
        tool, rest = words[0].rsplit("/", 1)[-1], words[1:]
        plain = [w for w in rest if _looks_like_path(w)]
        flags = [w for w in rest if w.startswith("-")]
        redirects = _redirects(segment)
        for op, target in redirects:
            if not target.startswith("&") and target != "/dev/null":
                yield FileOp("edited" if op == ">>" else "created", target, "written")
        targets = {target for _, target in redirects}
        plain = [w for w in plain if w not in targets]
        if tool in _READERS:
            yield from (FileOp("read", w) for w in plain if not w.isdigit())
        elif tool in ("sed", "perl") and len(plain) >= 2:
            in_place = any(f.startswith(("-i", "-pi")) for f in flags)
            yield FileOp("edited" if in_place else "read", plain[-1])
        elif tool == "tee":
            yield from (FileOp("created", w, "written") for w in plain)
        elif tool == "touch":
            yield from (FileOp("created", w) for w in plain)
        elif tool == "rm":
            yield from (FileOp("deleted", w) for w in plain)
        elif tool in ("mv", "cp") and len(plain) >= 2:
            if tool == "mv":
                yield FileOp("edited", plain[0], f"moved to {plain[-1]}")
            yield FileOp("created", plain[-1])
