"""The ledger as text: a fact a line, commands grouped by program, and back.

The ledger is written densely so that more fits its budget: a `[kind]` tag on the first
line of each kind only, and the commands of one program on one line, the words they all
share written once, tagged `[commands]` (`- [commands] gcloud: auth login · projects
create demo`, `- [commands] python -m pytest: tests/a.py · tests/b.py -x`), the runs that
share more among themselves on a line of their own. A command run more than once says how
often (`make test (×3)`), one whose last run failed says so (`(failed)`); an error is its
call, shortened (`short_call`), and its message, with how many calls met it (`(×N)`).
Both forms parse back to the same facts, so a later compaction merges them
whatever it reads: no fact text reads as a tagged line unless written with its own tag, so
a group line is never a command's own. What was left out is said in the last line, by
kind, and that recall has it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

LEDGER_HEADING = "## Ledger"
# Paths and errors first, then what the user asked, then commands, then the rest.
PRIORITY = (
    "error",
    "file_changed",
    "file_read",
    "goal",
    "request",
    "latest_request",  # written by earlier versions; still read and carried
    "instruction",
    "command",
    "todo",
    "failed_approach",
    "identifier",
)
FAILED_SUFFIX = " (failed)"
_REPEATS = re.compile(r" \(×(\d+)\)$")
FILE_KINDS = frozenset({"file_changed", "file_read"})
GROUP_TAG = "commands"
GROUP_SEPARATOR = " · "
_FACT_LINE = re.compile(r"^- \[([a-z_]+)\] (.+)$")
# A fact text that would read as a tagged line: always written with its own tag.
_TAGGED = re.compile(r"^\[[a-z_]+\] ")
# What a line of its own costs beyond its prefix, in characters: `- [commands] ` and `: `.
_LINE_CHARS = 16
_DROPPED_LINE = re.compile(r"^- \((\d+) more facts? did not fit the ledger budget(?:: [^()]*)?\)$")
# A command's program, with the `cd DIR &&` steps, variables and `sudo` before it: what the
# commands of one group share. The rest (its arguments) follows one space.
_PROGRAM = re.compile(
    r"^((?:cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*)*(?:\w+=\S*\s+)*(?:sudo\s+)?"
    r"[^\s;&|()]+) (\S.*)$"
)


@dataclass(frozen=True)
class Fact:
    kind: str
    text: str

    @property
    def key(self) -> str:
        """What the summary must contain to state this fact."""
        if self.kind in FILE_KINDS:
            return self.text.rsplit(" (", 1)[0]
        return self.text


def command_parts(text: str) -> tuple[str, int, bool]:
    """A command fact as (command, times run, whether its last run failed)."""
    failed = text.endswith(FAILED_SUFFIX)
    text = text.removesuffix(FAILED_SUFFIX)
    repeats = _REPEATS.search(text)
    times = int(repeats.group(1)) if repeats else 1
    return (text[: repeats.start()] if repeats else text), max(times, 1), failed


def command_fact(command: str, times: int = 1, failed: bool = False) -> str:
    """The text of a command fact: the command, `(×N)` when run N > 1 times, `(failed)`
    when its last run failed."""
    return f"{command}{f' (×{times})' if times > 1 else ''}{FAILED_SUFFIX if failed else ''}"


RESOLVED_SUFFIX = " (resolved later)"
ERROR_CALL_CHARS = 60
_LEADING_CD = re.compile(r"^(?:cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*)+")
# An error fact's call: a tool's name and what it was shown with (`Bash `pwd``), then `: `.
_ERROR_CALL = re.compile(r"^[^\s`]+(?: `.*?`)?: ")


def error_parts(text: str) -> tuple[str, str, int, bool]:
    """An error fact as (its call, the message, how many calls met it, whether it was
    resolved later): `call: message (×N) (resolved later)` (`error_fact`)."""
    resolved = text.endswith(RESOLVED_SUFFIX)
    text = text.removesuffix(RESOLVED_SUFFIX)
    repeats = _REPEATS.search(text)
    times = int(repeats.group(1)) if repeats else 1
    text = text[: repeats.start()] if repeats else text
    call = _ERROR_CALL.match(text)
    if call is None:
        return "", text, max(times, 1), resolved
    return text[: call.end() - 2], text[call.end() :], max(times, 1), resolved


def error_fact(call: str, message: str, times: int = 1, resolved: bool = False) -> str:
    """The text of an error fact: its (latest) call and the message, `(×N)` when N calls
    met the same message, `(resolved later)` when the latest one was."""
    head = f"{call}: {message}" if call else message
    return f"{head}{f' (×{times})' if times > 1 else ''}{RESOLVED_SUFFIX if resolved else ''}"


def short_call(label: str) -> str:
    """An error's call as tool `command`, the command without its leading `cd DIR &&`
    steps and cut to `ERROR_CALL_CHARS`: it says which call failed; the command itself is
    a command fact of its own, in full."""
    name, tick, shown = label.partition(" `")
    if not tick or not shown.endswith("`"):
        return label
    whole = shown[:-1].removesuffix(" …")
    cut = whole != shown[:-1]
    command = _LEADING_CD.sub("", whole) or whole
    if len(command) > ERROR_CALL_CHARS:
        command, cut = command[: ERROR_CALL_CHARS - 2].rstrip(), True
    return f"{name} `{command}{' …' if cut else ''}`"


def program_of(command: str) -> tuple[str, str] | None:
    """A command as (program, arguments) when it can share a group line: its text is
    exactly `program arguments`, and neither holds what the group line uses to split it
    (`: ` in the program or at its end, where the group line's own `: ` follows it; `·`
    anywhere)."""
    if GROUP_SEPARATOR.strip() in command:
        return None
    match = _PROGRAM.match(command)
    if match is None or ": " in f"{match.group(1)} ":
        return None
    return match.group(1), match.group(2)


def render_ledger(
    facts: Sequence[Fact], dropped: int = 0, kinds: Mapping[str, int] | None = None
) -> str:
    """One line a fact, the commands of one program on one line; the first line of each
    kind tagged `- [kind] `, the next ones only `- ` (the tag costs tokens on every line
    and says nothing new). Then what was left out, by kind (`kinds`), and that recall
    has it."""
    lines = [LEDGER_HEADING]
    kind = None
    for fact_kind, text in _lines(facts):
        continues = fact_kind == kind and not _TAGGED.match(text)
        lines.append(f"- {text}" if continues else f"- [{fact_kind}] {text}")
        kind = "command" if fact_kind == GROUP_TAG else fact_kind
    if dropped:
        lines.append(dropped_line(dropped, kinds))
    return "\n".join(lines)


def _lines(facts: Sequence[Fact]) -> Iterator[tuple[str, str]]:
    """(kind, text) of each line: a fact's own, or a program's commands as one group."""
    at = 0
    while at < len(facts):
        if facts[at].kind != "command":
            yield facts[at].kind, facts[at].text
            at += 1
            continue
        end = at
        while end < len(facts) and facts[end].kind == "command":
            end += 1
        yield from _command_lines(facts[at:end])
        at = end


def _command_lines(commands: Sequence[Fact]) -> Iterable[tuple[str, str]]:
    """The commands grouped by program, each group where its first command stands."""
    groups: dict[str, list[str]] = {}
    for fact in commands:
        parts = program_of(fact.text)
        if parts is None:
            groups[f"\0{fact.text}"] = [fact.text]  # alone: never a group
        else:
            groups.setdefault(parts[0], []).append(parts[1])
    for program, rests in groups.items():
        if program.startswith("\0"):
            yield "command", rests[0]
            continue
        for _, prefix, line in sorted(_subgroups(program, list(enumerate(rests)))):
            if len(line) == 1:
                yield "command", f"{prefix} {line[0]}"
            else:
                yield GROUP_TAG, f"{prefix}: {GROUP_SEPARATOR.join(line)}"


def _subgroups(
    prefix: str, rests: Sequence[tuple[int, str]]
) -> Iterator[tuple[int, str, list[str]]]:
    """A program's commands as lines (where the line's first command stands, its prefix,
    the arguments after it): the words they all share join the prefix; then the commands
    that share more words among themselves (runs of one script, one database, one
    subcommand) get a line of their own with those words written once, when that is
    shorter than writing them on every command (`_LINE_CHARS`, a line's own cost)."""
    shared, texts = _shared_words([rest for _, rest in rests])
    if shared:
        prefix = f"{prefix} {shared}"
    items = [(at, text) for (at, _), text in zip(rests, texts, strict=True)]
    buckets: dict[str, list[tuple[int, str]]] = {}
    for at, text in items:
        first, space, _ = text.partition(" ")
        if space and first and ":" not in first:
            buckets.setdefault(first, []).append((at, text))
    apart: set[int] = set()
    for members in buckets.values():
        if len(members) < 2 or len(members) == len(items):
            continue
        words, _ = _shared_words([text for _, text in members])
        saved = (len(members) - 1) * (len(words) + 1)
        if saved > len(prefix) + _LINE_CHARS:
            apart.update(at for at, _ in members)
            yield from _subgroups(prefix, members)
    left = [(at, text) for at, text in items if at not in apart]
    if left:
        yield left[0][0], prefix, [text for _, text in left]


def _shared_words(rests: Sequence[str]) -> tuple[str, list[str]]:
    """The leading words all `rests` share (each keeping at least one word of its own),
    and the rests without them. A group line splits at its first `: `: none in them."""
    split = [rest.split(" ") for rest in rests]
    shared: list[str] = []
    for words in zip(*(w[:-1] for w in split), strict=False):
        if len(set(words)) != 1 or ":" in words[0] or not words[0]:
            break
        shared.append(words[0])
    if not shared:
        return "", list(rests)
    return " ".join(shared), [" ".join(w[len(shared) :]) for w in split]


def dropped_line(dropped: int, kinds: Mapping[str, int] | None = None) -> str:
    facts = "fact" if dropped == 1 else "facts"
    by_kind = ", ".join(f"{n} {kind}" for kind, n in _in_priority(kinds or {}) if n)
    said = f": {by_kind}; recall has {'it' if dropped == 1 else 'them'}" if by_kind else ""
    return f"- ({dropped} more {facts} did not fit the ledger budget{said})"


def _in_priority(kinds: Mapping[str, int]) -> list[tuple[str, int]]:
    rank = {kind: i for i, kind in enumerate(PRIORITY)}
    return sorted(kinds.items(), key=lambda item: (rank.get(item[0], len(PRIORITY)), item[0]))


def parse_ledger(text: str) -> list[Fact]:
    """The facts of the `## Ledger` section of a summary (none when it has no ledger).

    A `- text` line without a `[kind]` tag continues the kind of the line above it
    (`render_ledger`); a command group line gives each of its commands; the section ends
    at its first blank line."""
    _, heading, section = text.rpartition(f"\n{LEDGER_HEADING}\n")
    if not heading and text.startswith(f"{LEDGER_HEADING}\n"):
        section = text[len(LEDGER_HEADING) + 1 :]
    facts: list[Fact] = []
    kind: str | None = None
    for line in section.splitlines():
        if not line.strip():
            break
        if _DROPPED_LINE.match(line):
            continue
        match = _FACT_LINE.match(line)
        if match and match.group(1) == GROUP_TAG:
            kind = "command"
            facts.extend(_group_facts(match.group(2)))
        elif match:
            kind = match.group(1) if match.group(1) in PRIORITY else None
            if kind is not None:
                facts.append(Fact(kind, match.group(2)))
        elif kind is not None and line.startswith("- ") and line[2:].strip():
            facts.append(Fact(kind, line[2:]))
    return facts


def _group_facts(text: str) -> list[Fact]:
    """The commands of a group line: its program, then each of its argument lists."""
    program, _, rests = text.partition(": ")
    return [Fact("command", f"{program} {rest}") for rest in rests.split(GROUP_SEPARATOR)]
