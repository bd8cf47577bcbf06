"""A summary without an LLM, built deterministically from the messages' structure.

`extract_facts` (`app.core.history.facts`) reads what the history shows (requests, file
operations, tool calls, the last step, errors) and `extract_summary` renders it in the
summary prompt's five sections;
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
from collections.abc import Mapping, Sequence
from typing import TypeVar

from app.core.history import (
    COMMANDS_LINE,
    DEFAULT_VOCABULARY,
    FILE_KINDS,
    ExtractedFacts,
    Vocabulary,
    command_item,
    cut_words,
    extract_facts,
    opens_round,
    segment_rounds,
)
from app.core.messages import Message, TextBlock, tool_uses
from app.core.ports import SummaryRequest
from app.core.summary.prompt import ARCHIVED_HEADINGS, DIMENSIONS, MODIFIED_FILES_NOTE

HEADINGS = tuple(f"## {title}" for title, _ in DIMENSIONS)
# Items shown per list and words per quoted text, before the word limit trims them.
DEFAULT_LIMITS: Mapping[str, int] = dict.fromkeys(FILE_KINDS, 20) | dict(
    tools=15, commands=20, errors=10, result=5, request_words=120, text_words=60
)
_WORD = re.compile(r"\"([^\"]*)\"|'([^']*)'|(\S+)")
_T = TypeVar("_T")


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
        render = extract_archived if request.template == "archived" else extract_summary
        return render(
            request.messages, request.max_words, request.instructions, vocabulary, request.facts
        )


def extract_summary(
    messages: Sequence[Message],
    max_words: int,
    instructions: str | None = None,
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    facts: ExtractedFacts | None = None,
) -> str:
    """The five sections within `max_words`, unless even their barest form exceeds it.
    `facts`: the messages' `extract_facts` when already read."""
    facts = extract_facts(messages, vocabulary) if facts is None else facts
    focus = instructions.strip() if instructions else ""
    limits: dict[str, int] | None = dict(DEFAULT_LIMITS)
    while limits is not None:
        text = _render(facts, focus, limits)
        if len(text.split()) <= max_words:
            return text
        limits = _shrink(facts, limits)
    return "\n\n".join(f"{heading}\n- (trimmed)" for heading in HEADINGS)


def _words(command: object) -> list[str]:
    """Shell-like words: quotes group and are dropped."""
    if not isinstance(command, str):
        return []
    return ["".join(parts) for parts in _WORD.findall(command)]


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
    return [f"- {label}: {cut_words(text, words)}" for label, text, words in texts if text]


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
        # A command cut short cannot be run again or found: the ledger keeps it too
        # (`listed_commands` leaves it out).
        lines.extend(command_item(command) for command in commands)
    return lines


def _task_status(facts: ExtractedFacts, limits: Mapping[str, int]) -> list[str]:
    lines = []
    if facts.last_assistant_text:
        text = cut_words(facts.last_assistant_text, limits["text_words"])
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
    facts: ExtractedFacts | None = None,
) -> str:
    """The archive template's sections (without the title line, which the caller writes) within
    `max_words`: lists and quoted texts halve until they fit, then the bare headings."""
    facts = extract_facts(messages, vocabulary) if facts is None else facts
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
    goal = cut_words(facts.first_request, words * 4) if facts.first_request else NOT_SHOWN
    objectives = [f"* **Original Goal**: {goal}"]
    if facts.latest_request:
        objectives.append(f"* **Latest Request**: {cut_words(facts.latest_request, words)}")
    if focus:
        objectives.append(f"* **Focus requested**: {cut_words(focus, words)}")
    paths = (*facts.files_read, *facts.files_created, *facts.files_edited)
    languages = sorted({LANGUAGES[ext] for ext in map(_extension, paths) if ext in LANGUAGES})
    programs = list(dict.fromkeys(w[0] for w in map(_words, facts.commands) if w))
    technical = [
        f"* **Stack**: {', '.join(languages) + ' (by file extension)' if languages else NOT_SHOWN}",
        f"* **Environment**: {'commands run: ' + ', '.join(programs) if programs else NOT_SHOWN}",
    ]
    kept, earlier = _shown(milestones, limits["milestones"], latest=True)
    done = [f"* ({earlier.strip('()')})"] if earlier else []
    done += [f"* [\u2713] {cut_words(r, words)} - {cut_words(o, words)}" for r, o in kept]
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
