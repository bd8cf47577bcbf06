"""The fact ledger: key facts of the compacted history that no summary may lose.

An LLM summary is lossy, and each new summary of a summary loses more (seed 003 §7.1).
The ledger is extracted deterministically from the messages, appended to every summary as a
`## Ledger` section, parsed back from the previous summary on the next compaction and
merged, so its facts survive any number of compactions whatever the summarizer writes.

Every fact that fits the token budget is kept in the ledger, including those the summary
already states: a later summarizer may drop what this one stated, and only the ledger is
carried forward verbatim. The report says, for each fact, whether the summarizer's own
text had it (a case- and whitespace-insensitive substring check of the fact's key: a path
for file facts, the text otherwise), which shows how lossy a summarizer is.

Budget order: user instructions, errors, failed approaches, changed files, goal, latest
request, todos, commands, files read, identifiers; within a kind, recent before old. What
does not fit is counted in the last line, never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from app.core.assemble import RESTORED_PREFIX, SUMMARY_PREFIX
from app.core.extractive import extract_facts
from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    is_tool_result_message,
    tool_result_text,
    tool_uses,
)

LEDGER_HEADING = "## Ledger"
DEFAULT_LEDGER_BUDGET = 1500
PRIORITY = (
    "instruction",
    "error",
    "failed_approach",
    "file_changed",
    "goal",
    "latest_request",
    "todo",
    "command",
    "file_read",
    "identifier",
)
_FILE_KINDS = frozenset({"file_changed", "file_read"})
_FACT_LINE = re.compile(r"^- \[([a-z_]+)\] (.+)$")
_DROPPED_LINE = re.compile(r"^- \((\d+) more facts? did not fit the ledger budget\)$")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_BOUNDARY = re.compile(r"[.!?\n]")


@dataclass(frozen=True)
class _Phrases:
    """Lowercase words found case-insensitively, each space in them matching any run of
    whitespace within a line: they then match the raw text exactly where they match its
    sentences with their whitespace collapsed (`_sentences_matching`)."""

    any_case: re.Pattern[str]
    lowered: re.Pattern[str]  # the same, case-sensitive: for ASCII text, lowercased

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """The matches in `text`. Lowercased ASCII text has the same positions and is
        searched case-sensitively, ~1.6x faster than `re.IGNORECASE` (which also folds
        non-ASCII letters such as `ſ` into ASCII ones: used for any other text)."""
        if text.isascii():
            return self.lowered.finditer(text.lower())
        return self.any_case.finditer(text)


def _phrases(pattern: str) -> _Phrases:
    spaced = pattern.replace(" ", r"[^\S\n]+")
    return _Phrases(re.compile(spaced, re.IGNORECASE), re.compile(spaced))


# Each starts with a lookahead for the first letters of its words: it changes no match, and
# lets the engine skip most positions without trying every alternative (~2x faster).
_INSTRUCTION = _phrases(
    r"(?=[adimnps])\b(always|never|don'?t|do not|must|mustn'?t|should not|shouldn'?t|"
    r"instead of|make sure|avoid|prefer)\b"
)
_ABANDONED = _phrases(
    r"(?=[adginw])(didn'?t work|did not work|doesn'?t work|does not work|won'?t work|"
    r"not working|\binstead\b|gave up|another approach|different approach)"
)
_BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")
_TODO_BOX = re.compile(r"^\s*[-*] \[ \] (.+)$", re.MULTILINE)
_REDIRECT = re.compile(r">{1,2}\s*([^\s;&|<>]+)")
MAX_FACT_CHARS = 300


@dataclass(frozen=True)
class Fact:
    kind: str
    text: str

    @property
    def key(self) -> str:
        """What the summary must contain to state this fact."""
        if self.kind in _FILE_KINDS:
            return self.text.rsplit(" (", 1)[0]
        return self.text


@dataclass(frozen=True)
class LedgerReport:
    """The guarded summary text and, per fact kept, whether the summary stated it."""

    text: str
    facts: tuple[tuple[Fact, bool], ...]
    dropped: int


def extract_ledger(messages: Sequence[Message]) -> list[Fact]:
    """Every fact of these messages, in the order they happened (de-duplicated)."""
    facts: list[Fact] = []
    found = extract_facts(messages)
    if found.first_request:
        facts.append(Fact("goal", _cut(found.first_request)))
    failed = {
        block.tool_use_id
        for message in messages
        for block in message.blocks()
        if isinstance(block, ToolResultBlock) and block.is_error
    }
    for message in messages:
        facts.extend(_message_facts(message, failed))
    facts.extend(Fact("file_changed", f"{p} (created)") for p in found.files_created)
    facts.extend(Fact("file_changed", f"{p} (edited)") for p in found.files_edited)
    facts.extend(Fact("file_changed", f"{p} (deleted)") for p in found.files_deleted)
    facts.extend(Fact("file_read", p) for p in found.files_read)
    for note in found.errors:
        resolved = " (resolved later)" if note.resolved else ""
        facts.append(Fact("error", _cut(f"{note.call}: {note.message}{resolved}")))
    if found.latest_request:
        facts.append(Fact("latest_request", _cut(found.latest_request)))
    return _unique(facts)


def _message_facts(message: Message, failed: set[str]) -> Iterable[Fact]:
    if message.role == "user" and not is_tool_result_message(message):
        text = _text(message)
        if text.startswith((SUMMARY_PREFIX.strip(), RESTORED_PREFIX)):
            return
        for sentence in _sentences_matching(text, _INSTRUCTION):
            yield Fact("instruction", sentence)
        yield from _identifiers(text)
    elif message.role == "assistant":
        text = _text(message)
        for sentence in _sentences_matching(text, _ABANDONED):
            yield Fact("failed_approach", sentence)
        for item in _TODO_BOX.findall(text):
            yield Fact("todo", _cut(item))
        for call in tool_uses(message):
            command = call.input.get("command")
            if isinstance(command, str) and command.strip():
                line = command.strip().split("\n", 1)[0]
                outcome = " (failed)" if call.id in failed else ""
                yield Fact("command", _cut(line) + outcome)
                yield from _shell_file_facts(line)
            todos = call.input.get("todos")
            if isinstance(todos, list):
                for todo in todos:
                    if isinstance(todo, dict) and todo.get("status") != "completed":
                        content = todo.get("content")
                        if isinstance(content, str) and content.strip():
                            yield Fact("todo", _cut(content))
    elif message.role == "user":
        for block in message.blocks():
            if isinstance(block, ToolResultBlock):
                yield from (
                    Fact("identifier", m) for m in _BACKTICKED.findall(tool_result_text(block))
                )


def _shell_file_facts(command: str) -> Iterable[Fact]:
    """Files a shell command line touches: cat/head/tail read, sed -i edits, redirections
    write, mv moves (both ends changed). `rm` is already covered by the extractor."""
    for segment in re.split(r"&&|\|\||;|\|", command):
        words = segment.split()
        if not words:
            continue
        tool, args = words[0], [w for w in words[1:] if not w.startswith("-")]
        if tool in ("cat", "head", "tail", "less"):
            yield from (Fact("file_read", a) for a in args if not a.startswith((">", "<")))
        elif tool == "sed" and any(w.startswith("-i") for w in words[1:]) and args:
            yield Fact("file_changed", f"{args[-1]} (edited)")
        elif tool == "mv" and len(args) >= 2:
            yield Fact("file_changed", f"{args[0]} (moved to {args[-1]})")
            yield Fact("file_changed", f"{args[-1]} (created)")
        for target in _REDIRECT.findall(segment):
            if not target.startswith("&") and target != "/dev/null":
                yield Fact("file_changed", f"{target} (written)")


def _identifiers(text: str) -> Iterable[Fact]:
    for name in _BACKTICKED.findall(text):
        yield Fact("identifier", name)
    for path in _paths(text):
        yield Fact("identifier", path)


def _paths(text: str) -> list[str]:
    """`_PATH`'s matches in `text`, searched in its words that hold a `/` only.

    A match holds a `/`, is made of name characters and `/` only (never whitespace), and
    whitespace is neither, so the words joined by spaces have the same matches in the same
    order; the regex engine then skips most of a long text (~4x faster)."""
    return _PATH.findall(" ".join([word for word in text.split() if "/" in word]))


def _text(message: Message) -> str:
    return "\n".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()


def _sentences(text: str) -> Iterable[str]:
    for match in _SENTENCE.finditer(text):
        sentence = " ".join(match.group(0).split())
        if 3 <= len(sentence) <= MAX_FACT_CHARS:
            yield sentence


def _sentences_matching(text: str, pattern: _Phrases) -> Iterable[str]:
    """The sentences of `text` (as `_sentences` gives them) in which `pattern` finds a match.

    `pattern` is made by `_phrases`: its matches never cross a sentence's end (`.!?` or a
    newline), and it matches the raw text where it matches the whitespace-collapsed
    sentences. So one scan of the whole text finds every matching sentence, and only those
    are cut out: splitting every sentence and searching each cost ~4x more
    (bench/RESULTS.md)."""
    end = 0  # where the last sentence cut out ends
    for match in pattern.finditer(text):
        at = match.start()
        if at < end:
            continue  # a second match in the same sentence
        start = max(end, *(text.rfind(mark, end, at) + 1 for mark in ".!?\n"))
        stop = _BOUNDARY.search(text, at)
        # A sentence ends after its `.!?` and before its newline.
        end = len(text) if stop is None else stop.end() - (stop.group() == "\n")
        sentence = " ".join(text[start:end].split())
        if 3 <= len(sentence) <= MAX_FACT_CHARS:
            yield sentence


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_FACT_CHARS else flat[: MAX_FACT_CHARS - 2].rstrip() + " …"


def _unique(facts: Iterable[Fact]) -> list[Fact]:
    return list(dict.fromkeys(facts))


def previous_ledgers(messages: Sequence[Message]) -> list[Fact]:
    """The facts of every earlier ledger found in these messages (earlier summaries)."""
    facts: list[Fact] = []
    for message in messages:
        if message.role == "user" and not is_tool_result_message(message):
            text = _text(message)
            if text.startswith(SUMMARY_PREFIX.strip()):
                facts.extend(parse_ledger(text))
    return facts


def parse_ledger(text: str) -> list[Fact]:
    """The facts of the `## Ledger` section of a summary (none when it has no ledger)."""
    _, heading, section = text.rpartition(f"\n{LEDGER_HEADING}\n")
    if not heading and text.startswith(f"{LEDGER_HEADING}\n"):
        section = text[len(LEDGER_HEADING) + 1 :]
    facts = []
    for line in section.splitlines():
        match = _FACT_LINE.match(line)
        if match and match.group(1) in PRIORITY:
            facts.append(Fact(match.group(1), match.group(2)))
    return facts


def merge(previous: Sequence[Fact], new: Sequence[Fact]) -> list[Fact]:
    """Earlier facts first, then the new ones; each fact once."""
    return _unique([*previous, *new])


def fit_budget(
    facts: Sequence[Fact], budget: int, count: Callable[[str], int]
) -> tuple[list[Fact], int]:
    """The facts that fit `budget` tokens, taken by priority and, within a kind, newest
    first; returned in priority order, oldest first within a kind. Also the number left out."""
    rank = {kind: i for i, kind in enumerate(PRIORITY)}
    order = sorted(range(len(facts)), key=lambda i: (rank.get(facts[i].kind, len(PRIORITY)), -i))
    used = count(LEDGER_HEADING) + count(_dropped_line(len(facts)))
    kept: set[int] = set()
    for i in order:
        cost = count(_fact_line(facts[i])) + 1
        if used + cost <= budget:
            kept.add(i)
            used += cost
    chosen = sorted(kept, key=lambda i: (rank.get(facts[i].kind, len(PRIORITY)), i))
    return [facts[i] for i in chosen], len(facts) - len(kept)


def render_ledger(facts: Sequence[Fact], dropped: int = 0) -> str:
    lines = [LEDGER_HEADING, *(_fact_line(f) for f in facts)]
    if dropped:
        lines.append(_dropped_line(dropped))
    return "\n".join(lines)


def _fact_line(fact: Fact) -> str:
    return f"- [{fact.kind}] {fact.text}"


def _dropped_line(dropped: int) -> str:
    return f"- ({dropped} more {'fact' if dropped == 1 else 'facts'} did not fit the ledger budget)"


def _one_goal(facts: Sequence[Fact]) -> list[Fact]:
    """The first goal stays the goal; a later chunk's first request is a later request."""
    first = next((f for f in facts if f.kind == "goal"), None)
    return _unique(
        Fact("latest_request", f.text) if f.kind == "goal" and f != first else f for f in facts
    )


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def guard_summary(
    summary: str,
    rest: Sequence[Message],
    budget: int,
    count: Callable[[str], int],
) -> LedgerReport:
    """The summary with the ledger of `rest` (merged with earlier ledgers) appended."""
    body = summary.split(f"\n{LEDGER_HEADING}\n", 1)[0].rstrip()
    facts = _one_goal(merge(previous_ledgers(rest), extract_ledger(rest)))
    if budget <= 0 or not facts:
        return LedgerReport(body, (), 0)
    kept, dropped = fit_budget(facts, budget, count)
    # Whether the summary already states each fact: a normalized substring check, with the
    # summary normalized once rather than once per fact.
    normal_body = _normal(body)
    report = tuple((fact, _normal(fact.key) in normal_body) for fact in kept)
    return LedgerReport(f"{body}\n\n{render_ledger(kept, dropped)}", report, dropped)
