"""The fact ledger: key facts of the compacted history that no summary may lose.

An LLM summary is lossy, and each new summary of a summary loses more. The ledger is
extracted deterministically from the messages, appended to every summary as a `## Ledger`
section, parsed back from the previous summary on the next compaction and merged, so its
facts survive any number of compactions whatever the summarizer writes.

Every fact that fits the budget is kept, including those the summary already states: a
later summarizer may drop them, and only the ledger is carried forward verbatim. One
exception: the commands the extractive format lists whole under "Recent commands" are read
back from it (`previous_ledgers`), so the budget is not spent on them twice. The ledger is
dense: a `[kind]` tag on the first fact of each kind only (`render_ledger`). The report
says, for each fact, whether the summarizer's text had it (a case- and
whitespace-insensitive substring check of its key), which shows how lossy a summarizer is.

Budget order (`PRIORITY`): errors, changed files, files read, the goal, every later user
request, instructions, commands, todos, failed approaches, identifiers; recent before old,
with floors (`ledger.fit`); what does not fit is counted, never dropped silently. The budget
follows the window (`ledger.budget`), the lines `ledger.lines`; the facts are read by
`app.core.history` (the user's own words, errors by text and flag, files by vocabulary).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from app.core.assemble import SUMMARY_PREFIX
from app.core.history import (
    DEFAULT_VOCABULARY,
    EDITOR_TOOLS,
    ExtractedFacts,
    FileOp,
    Vocabulary,
    extract_facts,
    listed_commands,
    occurrences,
    request_fact,
    shell_command,
)
from app.core.ledger.fit import fit, fit_budget, left_out_kinds
from app.core.ledger.lines import (
    FAILED_SUFFIX,
    LEDGER_HEADING,
    PRIORITY,
    Fact,
    command_fact,
    command_parts,
    error_fact,
    error_parts,
    parse_ledger,
    render_ledger,
    short_call,
)
from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    is_tool_result_message,
    tool_result_text,
    tool_uses,
)

# The closing line after the ledger (a quote, never a fact line).
CLOSING_MARK = "> Recall: "
# A sentence ends at a newline, or at `.!?` followed by whitespace: the dot of
# `storage.ts` or `v1.2` ends nothing.
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?]+(?=[^\s.!?]))+[.!?]*")
_BOUNDARY = re.compile(r"[.!?]+(?=\s|$)|\n")


@dataclass(frozen=True)
class _Phrases:
    """Lowercase words found case-insensitively, each space in them matching any run of
    whitespace within a line: they then match the raw text exactly where they match its
    sentences with their whitespace collapsed (`_sentences_matching`). `firsts`: a prefix
    of every alternative (its first word or less), searched for as plain text."""

    any_case: re.Pattern[str]
    lowered: re.Pattern[str]  # the same, case-sensitive: for ASCII text, lowercased
    firsts: tuple[str, ...]

    def starts(self, text: str) -> list[int]:
        """Where the pattern matches in `text`, in order (a match inside another included).
        For ASCII text, lowered (the same positions, and no letter folds into an ASCII one),
        the pattern is tried only where one of `firsts` stands, found by plain substring
        search: several times faster than the regex engine trying every position. Other text
        is searched with `re.IGNORECASE`, which also folds letters such as `ſ` and `ı`."""
        if not text.isascii():
            return [m.start() for m in self.any_case.finditer(text)]
        lowered = text.lower()
        found = {at for first in self.firsts for at in occurrences(lowered, first)}
        return [at for at in sorted(found) if self.lowered.match(lowered, at)]


def _phrases(pattern: str, firsts: tuple[str, ...]) -> _Phrases:
    spaced = pattern.replace(" ", r"[^\S\n]+")
    return _Phrases(re.compile(spaced, re.IGNORECASE), re.compile(spaced), firsts)


_INSTRUCTION = _phrases(
    r"\b(always|never|don'?t|do not|must|mustn'?t|should not|shouldn'?t|"
    r"instead of|make sure|avoid|prefer)\b",
    ("always", "never", "do", "must", "should", "instead", "make", "avoid", "prefer"),
)
_ABANDONED = _phrases(
    r"(didn'?t work|did not work|doesn'?t work|does not work|won'?t work|"
    r"not working|\binstead\b|gave up|another approach|different approach)",
    ("did", "does", "won", "not", "instead", "gave", "another", "different"),
)
_BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")
_LINE_LABEL = re.compile(r"^#?L\d+(?:[-:]L?\d+)?$")
_TODO_BOX = re.compile(r"^\s*[-*] \[ \] (.+)$", re.MULTILINE)
MAX_FACT_CHARS = 300
# An error fact: its call, and one or two key lines of `ERROR_LINE_CHARS` each.
ERROR_FACT_CHARS = 480


@dataclass(frozen=True)
class LedgerReport:
    """The guarded summary text and, per fact kept, whether the summary stated it; the
    facts left out (in all and by kind), the budget and the tokens the ledger took."""

    text: str
    facts: tuple[tuple[Fact, bool], ...]
    dropped: int
    dropped_kinds: Mapping[str, int] = field(default_factory=dict)
    budget: int = 0
    token_count: int = 0


def extract_ledger(
    messages: Sequence[Message],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    found: ExtractedFacts | None = None,
    *,
    goal_known: bool = False,
) -> list[Fact]:
    """Every fact of these messages, in the order they happened (de-duplicated). `found`:
    their `extract_facts` when the caller has them already (the summary read them).
    `goal_known`: an earlier ledger holds the goal, so these messages' first request is a
    later request, kept in the user's own words like the others."""
    facts: list[Fact] = []
    found = extract_facts(messages, vocabulary) if found is None else found
    goal = _cut(found.first_request) if found.first_request and not goal_known else None
    if goal:
        facts.append(Fact("goal", goal))
    first = found.first_request
    same_as_goal = request_fact(first, MAX_FACT_CHARS) if goal and first else None
    operations = iter(found.call_operations)
    for message, words in zip(messages, found.spoken, strict=True):
        facts.extend(
            f
            for f in _message_facts(message, words, found.failed_calls, operations)
            if f.kind != "request" or f.text not in (goal, same_as_goal)
        )
    for note in found.errors:
        call = " ".join(short_call(note.call).split())
        said = _cut_collapsed(" ".join(note.message.split()), ERROR_FACT_CHARS - len(call))
        facts.append(Fact("error", error_fact(call, said, resolved=note.resolved)))
    return _unique(facts)


def _message_facts(
    message: Message,
    words: str,
    failed: frozenset[str],
    operations: Iterator[tuple[FileOp, ...]],
) -> Iterable[Fact]:
    """The facts one message states. `words`: the user's own in it (`ExtractedFacts.spoken`);
    `operations` yields each call's file operations, in the order the calls were made
    (`ExtractedFacts.call_operations`)."""
    if message.role == "user" and not is_tool_result_message(message):
        if words:
            yield Fact("request", request_fact(words, MAX_FACT_CHARS))
        for sentence in _sentences_matching(words, _INSTRUCTION):
            yield Fact("instruction", sentence)
        yield from _identifiers(words)
    elif message.role == "assistant":
        text = _text(message)
        for sentence in _sentences_matching(text, _ABANDONED):
            yield Fact("failed_approach", sentence)
        for item in _TODO_BOX.findall(text):
            yield Fact("todo", _cut(item))
        for call in tool_uses(message):
            command = shell_command(call.input)
            if command is not None and call.name not in EDITOR_TOOLS:
                line = command.split("\n", 1)[0]
                outcome = FAILED_SUFFIX if call.id in failed else ""
                yield Fact("command", _cut(line) + outcome)
            for op in next(operations):
                if op.kind == "read":
                    yield Fact("file_read", op.path)
                else:
                    yield Fact("file_changed", f"{op.path} ({op.note})")
            todos = call.input.get("todos")
            if isinstance(todos, list):
                for todo in todos:
                    if isinstance(todo, dict) and todo.get("status") != "completed":
                        content = todo.get("content")
                        if isinstance(content, str) and content.strip():
                            yield Fact("todo", _cut(content))
    elif message.role == "user":
        if words:  # the user's reply in a tool result (`app.core.history.harness`)
            yield Fact("request", request_fact(words, MAX_FACT_CHARS))
        for block in message.blocks():
            if isinstance(block, ToolResultBlock):
                yield from (
                    Fact("identifier", m)
                    for m in _BACKTICKED.findall(tool_result_text(block))
                    if names_something(m)
                )


def _identifiers(text: str) -> Iterable[Fact]:
    for name in _BACKTICKED.findall(text):
        if names_something(name):
            yield Fact("identifier", name)
    for path in _paths(text):
        yield Fact("identifier", path)


def names_something(name: str) -> bool:
    """Whether a backticked text can be an identifier worth a ledger line: it holds a letter,
    and it is no table fragment (`| L738 |`, a cell's bar at either end) nor a line-number
    label (`L738`, `#L10-L20`), which say nothing once out of their table or page."""
    stripped = name.strip()
    if not any(c.isalpha() for c in stripped) or _LINE_LABEL.match(stripped):
        return False
    return not (stripped.startswith("|") or stripped.endswith("|") or " | " in stripped)


def _paths(text: str) -> list[str]:
    """`_PATH`'s matches in `text`, searched in its words that hold a `/` only.

    A match holds a `/`, is made of name characters and `/` only (never whitespace), and
    whitespace is neither, so the words joined by spaces have the same matches in the same
    order; the regex engine then skips most of a long text."""
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
    are cut out: splitting every sentence and searching each cost several times more."""
    end = 0  # where the last sentence cut out ends
    for at in pattern.starts(text):
        if at < end:
            continue  # a second match in the same sentence
        start = _sentence_start(text, end, at)
        stop = _BOUNDARY.search(text, at)
        # A sentence ends after its `.!?` and before its newline.
        end = len(text) if stop is None else stop.end() - (stop.group() == "\n")
        sentence = " ".join(text[start:end].split())
        if 3 <= len(sentence) <= MAX_FACT_CHARS:
            yield sentence


def _sentence_start(text: str, lowest: int, at: int) -> int:
    """Where the sentence holding `at` (a letter) starts, at `lowest` or later: after the
    last `_BOUNDARY` before it, a newline or a run of `.!?` followed by whitespace. Found
    backwards from `at`, so a long text's earlier sentences are not walked again."""
    start = text.rfind("\n", lowest, at) + 1 or lowest
    stop = at
    while True:
        mark = max(text.rfind(".", start, stop), text.rfind("!", start, stop))
        mark = max(mark, text.rfind("?", start, stop))
        if mark < start:
            return start
        if text[mark + 1].isspace():
            return mark + 1
        stop = mark


def _cut(text: str) -> str:
    return _cut_collapsed(" ".join(text.split()))


def _cut_collapsed(flat: str, chars: int = MAX_FACT_CHARS) -> str:
    return flat if len(flat) <= chars else flat[: chars - 2].rstrip() + " …"


def _command_key(text: str) -> str:
    return " ".join(command_parts(text)[0].split())


def _unique(facts: Iterable[Fact]) -> list[Fact]:
    """Each fact once, where it first happened; a command once whatever its whitespace and
    outcome, where it last happened, with the times it ran in all (`(×N)`) and the outcome
    of its last run (the latest run is the one that counts). An error message that several
    commands met (a hook that blocks every command, a permission denied) is one error too,
    written once at its latest call with how many met it: each of those commands says
    `(failed)` among the commands, so the message need not be repeated for each. An error
    of another call (a file read or edited: its path is said nowhere else) stays apart."""
    facts = list(facts)
    ran = {short_call(f"_ `{command_parts(f.text)[0]}`")[2:] for f in facts if f.kind == "command"}
    found: dict[tuple[str, str], Fact] = {}
    times: dict[tuple[str, str], int] = {}
    for fact in facts:
        if fact.kind == "command":
            command, runs, failed = command_parts(fact.text)
            key = (fact.kind, " ".join(command.split()))
            times[key] = times.get(key, 0) + runs
            found.pop(key, None)
            found[key] = Fact("command", command_fact(key[1], times[key], failed))
        elif fact.kind == "error":
            call, message, runs, resolved = error_parts(fact.text)
            shown = call.partition(" ")[2]
            apart = "" if shown and shown in ran else f"{call}\0"
            key = (fact.kind, apart + " ".join(message.split()))
            times[key] = times.get(key, 0) + runs
            found.pop(key, None)
            found[key] = Fact("error", error_fact(call, message, times[key], resolved))
        else:
            found.setdefault((fact.kind, fact.text), fact)
    return list(found.values())


def previous_ledgers(messages: Sequence[Message]) -> list[Fact]:
    """The facts of every earlier ledger found in these messages (earlier summaries)."""
    facts: list[Fact] = []
    for message in messages:
        if message.role == "user" and not is_tool_result_message(message):
            text = _text(message)
            if text.startswith(SUMMARY_PREFIX.strip()):
                ledger = parse_ledger(text)
                # A command the ledger holds as failed keeps that mark.
                held = {_command_key(f.text) for f in ledger if f.kind == "command"}
                facts.extend(ledger)
                facts.extend(Fact("command", c) for c in listed_commands(text) if c not in held)
    return facts


def merge(previous: Sequence[Fact], new: Sequence[Fact]) -> list[Fact]:
    """Earlier facts first, then the new ones; each fact once."""
    return _unique([*previous, *new])


def _one_goal(facts: Sequence[Fact]) -> list[Fact]:
    """The first goal stays the goal; a later chunk's first request is a later request."""
    first = next((f for f in facts if f.kind == "goal"), None)
    return _unique(
        Fact("request", f.text) if f.kind == "goal" and f != first else f
        for f in facts
        if first is None or f.kind not in ("request", "latest_request") or f.text != first.text
    )


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def guard_summary(
    summary: str,
    rest: Sequence[Message],
    budget: int,
    count: Callable[[str], int],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    closing: str = "",
    facts: ExtractedFacts | None = None,
    *,
    goal_known: bool = False,
) -> LedgerReport:
    """The summary with the ledger of `rest` (merged with earlier ledgers) appended, and
    `closing` after it (a line that is no fact: the next ledger never carries it).
    `facts`: `rest`'s `extract_facts` with this vocabulary, when already read.
    `goal_known`: an earlier summary kept beside this one (`tail`'s archives) holds the
    session's goal, so `rest`'s first request is a later request, not the goal."""
    body = _without_closing(summary.split(f"\n{LEDGER_HEADING}\n", 1)[0].rstrip())
    report = _guard(body, rest, budget, count, vocabulary, facts, goal_known)
    if not closing:
        return report
    return replace(report, text=f"{report.text}\n\n{CLOSING_MARK}{closing}")


def _said_elsewhere(
    fact: Fact, listed: set[str], requests: Sequence[str], changed: set[str]
) -> bool:
    """A command the summary lists whole, an instruction that is part of a request the
    ledger holds, or a file read that the ledger lists as changed (its path is there, with
    what was done to it): each would be a second copy of the same words."""
    if fact.kind == "command":
        return command_parts(fact.text)[0] in listed
    if fact.kind == "file_read":
        return fact.text in changed
    if fact.kind == "instruction":
        sentence = _normal(fact.text)
        return any(sentence in request for request in requests)
    return False


def _without_closing(text: str) -> str:
    """The text before an earlier closing line (an LLM may copy one)."""
    return text.split(f"\n{CLOSING_MARK}", 1)[0].rstrip()


def _guard(
    body: str,
    rest: Sequence[Message],
    budget: int,
    count: Callable[[str], int],
    vocabulary: Vocabulary,
    extracted: ExtractedFacts | None,
    goal_known: bool = False,
) -> LedgerReport:
    previous = previous_ledgers(rest)
    goal_known = goal_known or any(f.kind == "goal" for f in previous)
    found = _one_goal(
        merge(previous, extract_ledger(rest, vocabulary, extracted, goal_known=goal_known))
    )
    # Commands this summary lists whole are carried by it (`previous_ledgers` reads them
    # back): listing them again would spend the ledger's budget twice on the same facts.
    listed = set(listed_commands(body))
    requests = [_normal(f.text) for f in found if f.kind in ("goal", "request")]
    changed = {f.key for f in found if f.kind == "file_changed"}
    facts = [f for f in found if not _said_elsewhere(f, listed, requests, changed)]
    carried = tuple(
        (f, True) for f in found if f.kind == "command" and command_parts(f.text)[0] in listed
    )
    if budget <= 0 or not facts:
        return LedgerReport(body, carried if budget > 0 else (), 0, budget=max(budget, 0))
    kept, _ = fit(facts, budget, count)
    left_out = left_out_kinds(facts, kept)
    dropped = sum(left_out.values())
    # Whether the summary already states each fact: a normalized substring check, with the
    # summary normalized once rather than once per fact.
    normal_body = _normal(body)
    report = (*((fact, _normal(fact.key) in normal_body) for fact in kept), *carried)
    ledger = render_ledger(kept, dropped, left_out)
    return LedgerReport(
        f"{body}\n\n{ledger}",
        report,
        dropped,
        left_out,
        budget,
        count(ledger),
    )


__all__ = [
    "FAILED_SUFFIX",
    "LEDGER_HEADING",
    "PRIORITY",
    "Fact",
    "fit_budget",
    "parse_ledger",
    "render_ledger",
]
