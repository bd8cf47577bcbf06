"""The context-engineering toolkit: tool-result compression, `@file` mentions,
project rules and layered assembly, each sequenced with the I/O it needs.

Pure rules live in the core (`tool_results`, `mentions`, `layers`, `freshness`); this
module only adds what the work directory and the data directory say: whether a mentioned
file exists, what `CODE_LAW.md` holds, and whether a re-read file changed. Every look at
the work directory goes through the sandbox ports, in a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from anyio import to_thread

from app.core.errors import InvalidConversationError, InvalidOutputError
from app.core.messages import Message
from app.core.ports import FileInfo, FileSkip, WorkdirInspector, WorkdirReader
from app.core.provider import OpenAIForms, violations
from app.core.toolkit import (
    PATH_FIELDS,
    RULES_FILE,
    CompressedResult,
    ContextLayers,
    Layer,
    ToolResult,
    ToolResultLimits,
    append_reminders,
    assemble_layers,
    compress_tool_result,
    find_mentions,
    parse_output,
    pick_rules_file,
    rule_for,
)
from app.core.vocabulary import Format
from app.service.freshness import Freshness
from app.service.overrides import pick

# Mentions checked against the work directory per input; later ones are ignored (bounded I/O).
MAX_CHECKED_MENTIONS = 1000


@dataclass(frozen=True)
class ToolkitDefaults:
    limits: ToolResultLimits
    mention_limit: int = 5
    rules_max_bytes: int = 256 * 1024


@dataclass(frozen=True)
class Compressed:
    compressed: CompressedResult
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class MissingMention:
    path: str
    reason: str


@dataclass(frozen=True)
class Preprocessed:
    text: str
    mentions: tuple[str, ...]
    reminded: tuple[str, ...]
    more_count: int
    missing: tuple[MissingMention, ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProjectRules:
    path: str | None = None
    content: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class AssembleInput:
    history: Sequence[Message]
    format: Format
    system: str = ""
    tools: str = ""
    current_input: str = ""
    todo_recap: str = ""
    rules: str | None = None
    preprocess: bool = True
    # Each message's OpenAI JSON, once (seeded when the history is read).
    forms: OpenAIForms = field(default_factory=OpenAIForms, compare=False, repr=False)


@dataclass(frozen=True)
class Assembled:
    messages: list[Message]
    layers: list[Layer]
    rules_source: Literal["workdir", "request", "none"]
    rules_path: str | None
    preprocessed: Preprocessed | None
    warnings: list[str] = field(default_factory=list)


class ToolkitService:
    """Built once at start-up with the sandbox and the freshness store."""

    def __init__(
        self,
        *,
        reader: WorkdirReader,
        inspector: WorkdirInspector,
        freshness: Freshness,
        defaults: ToolkitDefaults,
    ) -> None:
        self.reader = reader
        self.inspector = inspector
        self.freshness = freshness
        self.defaults = defaults

    async def compress(
        self,
        tool: str,
        args: Mapping[str, Any],
        result: ToolResult,
        *,
        is_error: bool = False,
        session_id: str | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> Compressed:
        """The history form of one result; a successful Read in a session gets a
        "modified externally" note when the file changed since the session's previous read
        of it. The file's time is taken from the work directory now (the agent's Read does
        not send one). Runs in a worker thread: a result may be megabytes of text."""
        merged = self.defaults.limits.model_copy(update=dict(limits or {}))

        def run() -> Compressed:
            note: str | None = None
            warning: str | None = None
            path = _read_path(tool, args)
            failed = is_error or (
                isinstance(result, Mapping) and parse_output(result).status == "error"
            )
            if session_id is not None and path is not None and not failed:
                note, warning = self._freshness(session_id, path)
            compressed = compress_tool_result(
                tool, args, result, merged, is_error=is_error, note=note
            )
            return Compressed(compressed, (warning,) if warning else ())

        return await to_thread.run_sync(run)

    def _freshness(self, session_id: str, path: str) -> tuple[str | None, str | None]:
        info = self.inspector.stat(path)
        if isinstance(info, FileSkip):
            return None, f"freshness of {path} not tracked: {info.reason.value}"
        check = self.freshness.check(session_id, path, info.location, info.mtime_ns)
        return check.note, check.warning

    async def preprocess(
        self, text: str, *, check_exists: bool = True, limit: int | None = None
    ) -> Preprocessed:
        """The input with a reminder per mentioned file that exists."""
        shown = pick(limit, self.defaults.mention_limit)
        return await to_thread.run_sync(self._preprocess, text, check_exists, shown)

    def _preprocess(self, text: str, check_exists: bool, shown: int) -> Preprocessed:
        mentions = find_mentions(text)
        warnings: list[str] = []
        if len(mentions) > MAX_CHECKED_MENTIONS:
            warnings.append(f"only the first {MAX_CHECKED_MENTIONS} mentions were considered")
            mentions = mentions[:MAX_CHECKED_MENTIONS]
        missing: list[MissingMention] = []
        if check_exists:
            found = [self.inspector.stat(path) for path in mentions]
            missing = [m for m in map(_missing, found) if m is not None]
        absent = {m.path for m in missing}
        existing = [path for path in mentions if path not in absent]
        return Preprocessed(
            text=append_reminders(text, existing, shown),
            mentions=tuple(mentions),
            reminded=tuple(existing[:shown]),
            more_count=max(len(existing) - shown, 0),
            missing=tuple(missing),
            warnings=tuple(warnings),
        )

    async def project_rules(self) -> ProjectRules:
        """`CODE_LAW.md` (any case) at the root of the work directory, or nothing."""
        return await to_thread.run_sync(self._read_rules)

    def _read_rules(self) -> ProjectRules:
        names = self.inspector.names(".")
        if isinstance(names, FileSkip):
            return ProjectRules(skipped=names.reason.value)
        name = pick_rules_file(names)
        if name is None:
            return ProjectRules()
        read = self.reader.read_text(name, self.defaults.rules_max_bytes)
        if isinstance(read, FileSkip):
            return ProjectRules(path=name, skipped=read.reason.value)
        return ProjectRules(path=name, content=read.text)

    async def assemble(self, request: AssembleInput) -> Assembled:
        """The message list in the fixed layer order. Raises `InvalidConversationError`
        (indexes of the history as sent) when the history breaks a provider rule; tool calls
        of its last message may be pending only when nothing is appended after them."""
        appends = bool(request.current_input or request.todo_recap)
        broken = violations(
            request.history, request.format, pending_tail_ok=not appends, forms=request.forms
        )
        if broken:
            raise InvalidConversationError(broken)
        warnings: list[str] = []
        if request.rules is not None:
            rules = ProjectRules(path=RULES_FILE, content=request.rules)
            source: Literal["workdir", "request"] = "request"
        else:
            rules = await self.project_rules()
            source = "workdir"
            if rules.skipped is not None:
                warnings.append(f"project rules not read: {rules.path or '.'} {rules.skipped}")
        preprocessed = None
        current = request.current_input
        if request.preprocess and current:
            preprocessed = await self.preprocess(current)
            current = preprocessed.text
        messages, layers = assemble_layers(
            ContextLayers(
                system=request.system,
                tools=request.tools,
                rules=rules.content or "",
                rules_path=rules.path or RULES_FILE,
                history=request.history,
                current_input=current,
                todo_recap=request.todo_recap,
            )
        )
        invalid = violations(
            messages, request.format, pending_tail_ok=not appends, forms=request.forms
        )
        if invalid:  # valid history in, valid list out, by construction: this is a bug
            raise InvalidOutputError(invalid)
        injected = "L2" in layers
        return Assembled(
            messages=messages,
            layers=layers,
            rules_source=source if injected else "none",
            rules_path=rules.path if injected else None,
            preprocessed=preprocessed,
            warnings=warnings,
        )


def _read_path(tool: str, args: Mapping[str, Any]) -> str | None:
    if rule_for(tool, args) != "read":
        return None
    return next((args[k] for k in PATH_FIELDS if isinstance(args.get(k), str) and args[k]), None)


def _missing(info: FileInfo | FileSkip) -> MissingMention | None:
    if isinstance(info, FileSkip):
        return MissingMention(info.path, info.reason.value)
    if info.kind == "other":
        return MissingMention(info.path, "not_regular_file")
    return None
