"""Which files to re-inject after a compaction, and which of them fit.

Which tool calls read a file is configuration: `tool.path_field` specs (with an optional
`[command=value]` for multi-command editors) or the presets of known agents
(`READ_TOOL_PRESETS`). Planning is pure: scan the assistants' tool calls for file reads,
most recent access first, de-duplicated, the first `max_files` of them. Reading happens at
the edge (the work directory adapter); `select_restored` then applies the token limits to
what was read: a file over the per-file limit is skipped, and the first file that would
push the total over the total limit stops restoration (it and every later file are
skipped). Every skip carries its reason; nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.core.assemble import RestoredFile
from app.core.messages import Message, tool_uses
from app.core.ports import FileSkip, FileText, SkipReason

# A restore reads at most this many bytes per allowed token before counting: generous
# enough for any real text (cl100k averages 3-5 bytes a token), small enough that a huge
# file is refused on its size alone.
BYTES_PER_TOKEN_CEILING = 32


_SPEC = re.compile(
    r"^(?P<name>[^\[\]]+)\.(?P<field>[^.\[\]]+)(?:\[command=(?P<command>[^\]]+)\])?$"
)


@dataclass(frozen=True)
class FileReadTool:
    """A tool call that reads a file: its tool name, the input field holding the path, and,
    for multi-command tools, the `command` input value that makes the call a read."""

    name: str
    path_field: str
    command: str | None = None

    @classmethod
    def parse(cls, spec: str) -> FileReadTool:
        """`"read_file.path"` → FileReadTool("read_file", "path");
        `"str_replace_editor.path[command=view]"` adds the command."""
        match = _SPEC.match(spec.strip())
        if match is None or not match["name"].strip():
            raise ValueError(
                "expected 'tool_name.path_field', 'tool_name.path_field[command=value]' or a "
                f"preset ({', '.join(READ_TOOL_PRESETS)}), got {spec!r}"
            )
        return cls(match["name"], match["field"], match["command"])

    def reads(self, call_input: Mapping[str, object]) -> str | None:
        """The path this call reads, or None when it is not a read by this tool."""
        if self.command is not None and call_input.get("command") != self.command:
            return None
        path = call_input.get(self.path_field)
        return path if isinstance(path, str) else None

    def __str__(self) -> str:
        command = f"[command={self.command}]" if self.command else ""
        return f"{self.name}.{self.path_field}{command}"


SEED_000_READ_TOOLS = (FileReadTool("read_file", "path"),)
_EDITOR_VIEW = FileReadTool("str_replace_editor", "path", "view")

READ_TOOL_PRESETS: dict[str, tuple[FileReadTool, ...]] = {
    "seed000": SEED_000_READ_TOOLS,
    "claude_code": (FileReadTool("Read", "file_path"),),
    "swe_agent": (_EDITOR_VIEW,),
    "openhands": (_EDITOR_VIEW,),
    "mcp_filesystem": (FileReadTool("read_text_file", "path"), FileReadTool("read_file", "path")),
}
READ_TOOL_PRESETS["all"] = tuple(
    dict.fromkeys(tool for tools in READ_TOOL_PRESETS.values() for tool in tools)
)


def read_tools_from(specs: Iterable[str]) -> tuple[FileReadTool, ...]:
    """Preset names and `tool.field[command=...]` specs → the tools, in order, each once.
    Raises ValueError naming a spec that is neither."""
    tools: list[FileReadTool] = []
    for spec in specs:
        preset = READ_TOOL_PRESETS.get(spec.strip())
        tools.extend(preset if preset is not None else (FileReadTool.parse(spec),))
    return tuple(dict.fromkeys(tools))


@dataclass(frozen=True)
class RestoreLimits:
    max_files: int
    max_tokens_per_file: int
    max_tokens_total: int

    @property
    def max_bytes_per_file(self) -> int:
        return self.max_tokens_per_file * BYTES_PER_TOKEN_CEILING


@dataclass(frozen=True)
class RestoreSelection:
    restored: tuple[RestoredFile, ...]
    skipped: tuple[FileSkip, ...]

    @property
    def token_count(self) -> int:
        return sum(f.token_count for f in self.restored)


def plan_restore(
    messages: Sequence[Message], tools: Iterable[FileReadTool], max_files: int
) -> list[str]:
    """Paths read by the history, most recently read first, each once, at most max_files."""
    by_name: dict[str, list[FileReadTool]] = {}
    for tool in tools:
        by_name.setdefault(tool.name, []).append(tool)
    last_seen: dict[str, int] = {}
    order = 0
    for message in messages:
        for call in tool_uses(message):
            paths = (tool.reads(call.input) for tool in by_name.get(call.name, ()))
            path = next((p for p in paths if p is not None), None)
            if path is not None:
                last_seen[path] = order
                order += 1
    ranked = sorted(last_seen, key=last_seen.__getitem__, reverse=True)
    return ranked[: max(max_files, 0)]


def select_restored(
    reads: Sequence[FileText | FileSkip],
    token_counts: Mapping[str, int],
    limits: RestoreLimits,
) -> RestoreSelection:
    """Apply the per-file and total token limits, in plan order."""
    restored: list[RestoredFile] = []
    skipped: list[FileSkip] = []
    total = 0
    stopped = False
    for read in reads:
        if isinstance(read, FileSkip):
            skipped.append(read)
            continue
        tokens = token_counts[read.path]
        if stopped:
            skipped.append(FileSkip(read.path, SkipReason.TOTAL_LIMIT_REACHED))
        elif tokens > limits.max_tokens_per_file:
            skipped.append(FileSkip(read.path, SkipReason.TOO_MANY_TOKENS))
        elif total + tokens > limits.max_tokens_total:
            stopped = True
            skipped.append(FileSkip(read.path, SkipReason.TOTAL_LIMIT_REACHED))
        else:
            total += tokens
            restored.append(RestoredFile(read.path, read.text, tokens))
    return RestoreSelection(tuple(restored), tuple(skipped))
