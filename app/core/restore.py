"""F-005: which files to re-inject after a compaction, and which of them fit.

Planning is pure: scan the assistants' tool calls for file reads, most recent access first,
de-duplicated, the first `max_files` of them. Reading happens at the edge (the work
directory adapter); `select_restored` then applies the token limits to what was read:
a file over the per-file limit is skipped, and the first file that would push the total
over the total limit stops restoration (it and every later file are skipped). Every skip
carries its reason; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.core.assemble import RestoredFile
from app.core.messages import Message, tool_uses
from app.core.ports import FileSkip, FileText, SkipReason

# A restore reads at most this many bytes per allowed token before counting: generous
# enough for any real text (cl100k averages 3-5 bytes a token), small enough that a huge
# file is refused on its size alone.
BYTES_PER_TOKEN_CEILING = 32


@dataclass(frozen=True)
class FileReadTool:
    """A tool call that reads a file: its tool name and the input field holding the path."""

    name: str
    path_field: str

    @classmethod
    def parse(cls, spec: str) -> FileReadTool:
        """`"read_file.path"` → FileReadTool("read_file", "path")."""
        name, sep, field = spec.strip().rpartition(".")
        if not sep or not name or not field:
            raise ValueError(f"expected 'tool_name.path_field', got {spec!r}")
        return cls(name, field)

    def __str__(self) -> str:
        return f"{self.name}.{self.path_field}"


SEED_000_READ_TOOLS = (FileReadTool("read_file", "path"),)


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
    fields = {tool.name: tool.path_field for tool in tools}
    last_seen: dict[str, int] = {}
    order = 0
    for message in messages:
        for call in tool_uses(message):
            field = fields.get(call.name)
            path = call.input.get(field) if field is not None else None
            if isinstance(path, str):
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
