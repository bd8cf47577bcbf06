"""A summary without an LLM, built deterministically from the messages' structure.

`extract_facts` reads what the history shows (requests, file operations, tool calls, the
last step, errors) and `extract_summary` renders it in the summary prompt's five sections;
`extract_archived` renders it in the archive template for the `tail` strategy,
one milestone per round. Nothing is invented (what the history does not show is said to be
missing), and the same messages always give the same text. Over `max_words`, the longest
list shown loses an item at a time, then the quoted texts shorten; the headings always stay.
Commands are listed once each (whitespace aside), and those an earlier summary listed are
carried into the next one: the ledger reads them back too (`listed_commands`), so it need
not repeat them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from app.core.assemble import RESTORED_PREFIX, SUMMARY_PREFIX
from app.core.failures import KEY_LINE_SEPARATOR, error_line
from app.core.file_ops import (
    DEFAULT_VOCABULARY,
    FILE_KINDS,
    PATH_FIELDS,
    FileTracker,
    Vocabulary,
    shell_command,
)
from app.core.harness import user_words
from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_tool_result_message,
    tool_result_text,
    tool_uses,
)
from app.core.ports import SummaryRequest
from app.core.prompt import ARCHIVED_HEADINGS, DIMENSIONS, MODIFIED_FILES_NOTE
from app.core.rounds import opens_round, segment_rounds
from app.core.tokens import compact_json

HEADINGS = tuple(f"## {title}" for title, _ in DIMENSIONS)
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool"})
LINE_CHARS = 120
# Items shown per list and words per quoted text, before the word limit trims them.
DEFAULT_LIMITS: Mapping[str, int] = dict.fromkeys(FILE_KINDS, 20) | dict(
    tools=15, commands=20, errors=10, result=5, request_words=120, text_words=60
)
_WORD = re.compile(r"\"([^\"]*)\"|'([^']*)'|(\S+)")
_CARRIED_REQUEST = re.compile(r"^- First request: (.+)$", re.MULTILINE)
COMMANDS_LINE = "- Recent commands, oldest first"
_LISTED_COMMAND = re.compile(r"^  - `(.+)`$")
# A command is shown whole up to this many characters: a command cut short cannot be run
# again or found, so it is also left in the ledger (`listed_commands`).
COMMAND_CHARS = 300
_T = TypeVar("_T")


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

    def lists(self) -> dict[str, Sequence[Any]]:
        """Every list the summary shows, by the name of its limit."""
        result = self.last_call.result if self.last_call else None
        result_lines = [_one_line(line) for line in (result or "").splitlines() if line.strip()]
        files = (self.files_read, self.files_created, self.files_edited, self.files_deleted)
        return dict(zip(FILE_KINDS, files, strict=True)) | {
            "tools": self.tool_counts,
            "commands": self.commands,
            "errors": self.errors,
            "result": result_lines,
        }


class ExtractiveSummarizer:
    """The built-in `Summarizer`: offline and deterministic; reads `request.messages`."""

    @property
    def name(self) -> str:
        return "extractive"

    @property
    def reads_prompt(self) -> bool:
        """It reads the messages, not the prompt, and has no input window: never chunked."""
        return False

    async def aclose(self) -> None:
        """Nothing to release: no client."""

    async def summarize(self, request: SummaryRequest) -> str:
        vocabulary = Vocabulary.from_specs(request.file_tools)
        if request.template == "archived":
            return extract_archived(
                request.messages, request.max_words, request.instructions, vocabulary
            )
        return extract_summary(
            request.messages, request.max_words, request.instructions, vocabulary
        )


def extract_summary(
    messages: Sequence[Message],
    max_words: int,
    instructions: str | None = None,
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
) -> str:
    """The five sections within `max_words`, unless even their barest form exceeds it."""
    facts = extract_facts(messages, vocabulary)
    focus = instructions.strip() if instructions else ""
    limits: dict[str, int] | None = dict(DEFAULT_LIMITS)
    while limits is not None:
        text = _render(facts, focus, limits)
        if len(text.split()) <= max_words:
            return text
        limits = _shrink(facts, limits)
    return "\n\n".join(f"{heading}\n- (trimmed)" for heading in HEADINGS)


def extract_facts(
    messages: Sequence[Message], vocabulary: Vocabulary = DEFAULT_VOCABULARY
) -> ExtractedFacts:
    results = {
        block.tool_use_id: block
        for message in messages
        for block in message.blocks()
        if isinstance(block, ToolResultBlock)
    }
    requests: list[str] = []
    carried: str | None = None
    carried_commands: list[str] = []
    last_text: str | None = None
    calls: list[ToolCall] = []
    files = _FileOps(vocabulary)
    for message in messages:
        text = "\n".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()
        if message.role == "assistant":
            last_text = text or last_text
            for use in tool_uses(message):
                calls.append(_tool_call(use, results.get(use.id)))
                files.record(use)
        elif message.role == "user" and text and not is_tool_result_message(message):
            if text.startswith(SUMMARY_PREFIX.strip()):
                found = _CARRIED_REQUEST.search(text)
                carried = carried or (found.group(1) if found else None)
                carried_commands.extend(listed_commands(text))
            elif not text.startswith(RESTORED_PREFIX):
                words = user_words(message)
                if words:
                    requests.append(words)
    first = carried or (requests[0] if requests else None)
    counts = Counter(call.name for call in calls)
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
        errors=_errors(calls),
    )


class _FileOps:
    """Paths by operation (dicts as ordered sets) and command lines."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.ops: dict[str, dict[str, None]] = {kind: {} for kind in FILE_KINDS}
        self.commands: list[str] = []
        self.tracker = FileTracker(vocabulary)

    def record(self, use: ToolUseBlock) -> None:
        for op in self.tracker.operations(use):
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


def _words(command: object) -> list[str]:
    """Shell-like words: quotes group and are dropped."""
    if not isinstance(command, str):
        return []
    return ["".join(parts) for parts in _WORD.findall(command)]


def _tool_call(use: ToolUseBlock, result: ToolResultBlock | None) -> ToolCall:
    command = use.input.get("command")
    path = _input_path(use.input) or ""
    input_json = compact_json(use.input)
    if use.name in EDITOR_TOOLS:
        shown = f"{command} {path}".strip()
    elif isinstance(command, str):
        shown = _one_line(command)
    else:
        shown = path or _one_line(input_json)
    text = None if result is None else tool_result_text(result)
    error = None if result is None else error_line(text or "", result.is_error, use.name)
    return ToolCall(
        name=use.name,
        label=f"{use.name} `{shown}`" if shown else use.name,
        input_json=input_json,
        result=text,
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


def listed_commands(summary: str) -> list[str]:
    """The commands a summary in this format lists whole under `COMMANDS_LINE`
    (whitespace collapsed; those cut short left out). A later compaction carries them: the
    extractive summary lists them again, the ledger reads them as command facts."""
    _, heading, after = summary.partition(f"\n{COMMANDS_LINE}")
    if not heading:
        return []
    commands = []
    for line in after.splitlines()[1:]:
        match = _LISTED_COMMAND.match(line)
        if match is None:
            break
        if not match.group(1).endswith(" …"):
            commands.append(" ".join(match.group(1).split()))
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
    return KEY_LINE_SEPARATOR.join(_one_line(part) for part in error.split(KEY_LINE_SEPARATOR))


def _one_line(text: str, chars: int = LINE_CHARS) -> str:
    stripped = text.strip()
    cut = stripped.split("\n", 1)[0][:chars].rstrip()
    return cut if cut == stripped else f"{cut} …"


def _cut_words(text: str, count: int) -> str:
    words = text.split()
    return " ".join(words[:count]) + (" …" if len(words) > count else "")


def _shown(items: Sequence[_T], limit: int, latest: bool = False) -> tuple[list[_T], str]:
    """The items within the limit (the first ones, or the latest), and a note of the rest."""
    kept = (
        list(items[max(len(items) - limit, 0) :] if latest else items[:limit]) if limit > 0 else []
    )
    hidden = len(items) - len(kept)
    return kept, f"(+{hidden} {'earlier' if latest else 'more'})" if hidden else ""


def _join(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def _render(facts: ExtractedFacts, focus: str, limits: Mapping[str, int]) -> str:
    sections = (
        _goals(facts, focus, limits),
        _file_operations(facts, limits),
        _tool_calls(facts, limits),
        _task_status(facts, limits),
        _error_lines(facts, limits) or ["- None observed."],
    )
    return "\n\n".join(
        "\n".join([heading, *(lines or ["- None."])])
        for heading, lines in zip(HEADINGS, sections, strict=True)
    )


def _goals(facts: ExtractedFacts, focus: str, limits: Mapping[str, int]) -> list[str]:
    texts = (
        ("First request", facts.first_request, limits["request_words"]),
        ("Latest request", facts.latest_request, limits["request_words"]),
        ("Focus requested", focus, limits["text_words"]),
    )
    return [f"- {label}: {_cut_words(text, words)}" for label, text, words in texts if text]


def _file_operations(facts: ExtractedFacts, limits: Mapping[str, int]) -> list[str]:
    lists = facts.lists()
    lines = []
    for kind in FILE_KINDS:
        if lists[kind]:
            kept, note = _shown(lists[kind], limits[kind])
            lines.append(f"- {kind.capitalize()}: {_join(', '.join(kept), note)}")
    return lines


def _tool_calls(facts: ExtractedFacts, limits: Mapping[str, int]) -> list[str]:
    if not facts.tool_counts:
        return []
    total = sum(count for _, count in facts.tool_counts)
    kept, note = _shown([f"{name} {n}" for name, n in facts.tool_counts], limits["tools"])
    lines = [f"- Calls per tool ({total} in all): {_join(', '.join(kept), note)}"]
    if facts.commands:
        commands, earlier = _shown(facts.commands, limits["commands"], latest=True)
        lines.append(_join(COMMANDS_LINE, earlier) + ":" * bool(commands))
        lines.extend(f"  - `{_one_line(command, COMMAND_CHARS)}`" for command in commands)
    return lines


def _task_status(facts: ExtractedFacts, limits: Mapping[str, int]) -> list[str]:
    lines = []
    if facts.last_assistant_text:
        text = _cut_words(facts.last_assistant_text, limits["text_words"])
        lines.append(f"- Last assistant message: {text}")
    call = facts.last_call
    if call is not None:
        outcome = "returned an error" if call.is_error else "succeeded"
        outcome = "no result yet" if call.result is None else outcome
        lines.append(f"- Last tool call: {call.label} ({outcome})")
        kept, note = _shown(facts.lists()["result"], limits["result"])
        if kept:
            lines.append(_join("- Its result begins", note) + ":")
            lines.extend(f"  > {line}" for line in kept)
    return lines


def _error_lines(facts: ExtractedFacts, limits: Mapping[str, int]) -> list[str]:
    kept, _ = _shown(facts.errors, limits["errors"], latest=True)
    hidden = len(facts.errors) - len(kept)
    lines = [f"- ({hidden} earlier errors not shown)"] if hidden else []
    for error in kept:
        resolved = " (resolved later)" if error.resolved else ""
        lines.append(f"- {error.call}: {error.message}{resolved}")
    return lines


def _shrink(facts: ExtractedFacts, limits: dict[str, int]) -> dict[str, int] | None:
    """One item less of the longest list, or halved texts: lists down to 3 items, texts to
    15 words, then lists to none and texts to 3 words; None when nothing is left to trim."""
    shown = {name: min(limits[name], len(items)) for name, items in facts.lists().items()}
    longest = max(shown, key=shown.__getitem__)
    texts = ("request_words", "text_words")
    for list_floor, text_floor in ((3, 15), (0, 4)):
        if shown[longest] > list_floor:
            return limits | {longest: shown[longest] - 1}
        if any(limits[key] > text_floor for key in texts):
            return limits | {key: max(limits[key] // 2, text_floor) for key in texts}
    return None


LANGUAGES = {
    ".py": "Python",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".js": "JavaScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".rb": "Ruby",
    ".c": "C",
    ".cpp": "C++",
    ".cs": "C#",
    ".kt": "Kotlin",
    ".swift": "Swift",
    ".php": "PHP",
}
NOT_SHOWN = "Not shown in the archived messages."
ARCHIVED_LIMITS: Mapping[str, int] = dict(milestones=20, files=20, errors=5, words=30)


def extract_archived(
    messages: Sequence[Message],
    max_words: int,
    instructions: str | None = None,
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
) -> str:
    """The archive template's sections (without the title line, which the caller writes) within
    `max_words`: lists and quoted texts halve until they fit, then the bare headings."""
    facts = extract_facts(messages, vocabulary)
    milestones = _milestones(messages)
    focus = instructions.strip() if instructions else ""
    limits = dict(ARCHIVED_LIMITS)
    while True:
        text = _render_archived(facts, milestones, focus, limits)
        if len(text.split()) <= max_words:
            return text
        if all(limits[key] <= 1 for key in ("milestones", "files", "errors")):
            if limits["words"] <= 4:
                return "\n\n".join(f"{heading}\n* (trimmed)" for heading in ARCHIVED_HEADINGS)
            limits["words"] = max(limits["words"] // 2, 4)
        limits |= {key: max(limits[key] // 2, 1) for key in ("milestones", "files", "errors")}


def _milestones(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """Per round: its request and how it ended (its last assistant text, or its calls)."""
    found = []
    for round_ in segment_rounds(messages):
        part = messages[round_.start : round_.end]
        opening = part[0]
        request = _text_of(opening) if opens_round(opening) else "(earlier context)"
        answers = [_text_of(m) for m in part if m.role == "assistant" and _text_of(m)]
        calls = sum(len(list(tool_uses(m))) for m in part)
        outcome = answers[-1] if answers else f"{calls} tool calls, no answer text"
        outcome = outcome if answers or calls else "no answer yet"
        found.append((request, outcome))
    return found


def _text_of(message: Message) -> str:
    return "\n".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()


def _render_archived(
    facts: ExtractedFacts,
    milestones: Sequence[tuple[str, str]],
    focus: str,
    limits: Mapping[str, int],
) -> str:
    words = limits["words"]
    goal = _cut_words(facts.first_request, words * 4) if facts.first_request else NOT_SHOWN
    objectives = [f"* **Original Goal**: {goal}"]
    if facts.latest_request:
        objectives.append(f"* **Latest Request**: {_cut_words(facts.latest_request, words)}")
    if focus:
        objectives.append(f"* **Focus requested**: {_cut_words(focus, words)}")
    paths = (*facts.files_read, *facts.files_created, *facts.files_edited)
    languages = sorted({LANGUAGES[ext] for ext in map(_extension, paths) if ext in LANGUAGES})
    programs = list(dict.fromkeys(w[0] for w in map(_words, facts.commands) if w))
    technical = [
        f"* **Stack**: {', '.join(languages) + ' (by file extension)' if languages else NOT_SHOWN}",
        f"* **Environment**: {'commands run: ' + ', '.join(programs) if programs else NOT_SHOWN}",
    ]
    kept, earlier = _shown(milestones, limits["milestones"], latest=True)
    done = [f"* ({earlier.strip('()')})"] if earlier else []
    done += [f"* [\u2713] {_cut_words(r, words)} - {_cut_words(o, words)}" for r, o in kept]
    errors, _ = _shown(facts.errors, limits["errors"], latest=True)
    learnings = "; ".join(
        f"{e.call}: {e.message}{' (resolved later)' if e.resolved else ''}" for e in errors
    )
    insights = [
        "* **Decisions**: Not extracted without an LLM; see the milestones.",
        f"* **Learnings**: {learnings or 'No errors observed.'}",
        "* **User Preferences**: Not extracted without an LLM.",
    ]
    changed = [
        *((p, "created") for p in facts.files_created),
        *((p, "edited") for p in facts.files_edited if p not in facts.files_created),
        *((p, "deleted") for p in facts.files_deleted),
    ]
    files, more = _shown(changed, limits["files"])
    state = [MODIFIED_FILES_NOTE, *(f"* `{p}`: {kind}" for p, kind in files)]
    state += [f"* {more}"] if more else []
    state += [] if changed else ["* None modified."]
    sections = (objectives, technical, done or ["* None."], insights, state)
    return "\n\n".join(
        "\n".join([heading, *lines])
        for heading, lines in zip(ARCHIVED_HEADINGS, sections, strict=True)
    )


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind(".") :].lower() if "." in name else ""
