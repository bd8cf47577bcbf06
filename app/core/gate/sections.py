"""The sections of a summary: which of its template's headings it has, and what is under each.

A heading is a line naming one of the template's sections (case and emoji ignored) as a
markdown heading (`#` or underlined with `===`/`---`), in bold, numbered, or as `Title:`
(or a short name of it: `Goals:`, `Files:`, `Status:`); its body is the rest of a
`Title: …` or `**Title** — …` line and every line up to the next heading. A body has
content when, without invisible
characters and markup, it holds a word; it is substantive when it holds at least
`SUBSTANTIVE_WORDS` distinct words and is more than a "none" line ("None.", "No errors.",
"Nothing yet", "N/A"): a short conversation's summary may say "None" for a section, but
not for all of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.gate.overlap import words
from app.core.ports import SummaryTemplate
from app.core.summary import ARCHIVED_HEADINGS, DIMENSIONS, MODEL_SECTIONS

SUBSTANTIVE_WORDS = 3
# Sections that must be substantive, at least: the summary of a single request may have
# nothing but "none" to say in the other four, never in all five.
MIN_SUBSTANTIVE_SECTIONS = 1


def _heading_key(title: str) -> str:
    """`Goals & Decisions` → `goals`, `🏗️ Technical Context (Static)` → `technical context`."""
    words_only = re.sub(r"^[^A-Za-z]+", "", title)
    return re.split(r"\s*[&(]", words_only, maxsplit=1)[0].strip().lower()


_TITLES: dict[SummaryTemplate, tuple[str, ...]] = {
    "sections": tuple(title for title, _ in DIMENSIONS),
    "archived": tuple(re.sub(r"^[^A-Za-z]+", "", h) for h in ARCHIVED_HEADINGS),
    # The digest path's model writes three of the five; the service writes the other two.
    "digest": MODEL_SECTIONS,
}
HEADING_KEYS: dict[SummaryTemplate, tuple[str, ...]] = {
    template: tuple(_heading_key(title) for title in titles) for template, titles in _TITLES.items()
}
# Short names models give the five sections (`Status:`), each for the key it stands for.
ALIASES: dict[str, str] = {
    "goal": "goals", "goals": "goals", "files": "file operations",
    "file changes": "file operations",
    "commands": "tool calls", "tools": "tool calls", "status": "task status",
    "errors": "errors", "error": "errors",
}  # fmt: skip
# Each title as a pattern, "&" or "and" alike: a `Title:` line names the whole title.
_TITLE_PATTERNS: dict[SummaryTemplate, tuple[str, ...]] = {
    template: tuple(re.escape(t.lower()).replace("\\ \\&\\ ", r"\s*(?:&|and)\s*") for t in titles)
    for template, titles in _TITLES.items()
}
# A heading line: markdown heading, bold, a numbered or bulleted title, or `Title:`.
_DECORATED = re.compile(r"^\s*(?:#{1,6}|\*\*|__|\d{1,2}[.)]|[-*]\s+\*\*)")
_LEAD = re.compile(r"^[^A-Za-z]+")
# A markdown heading of any title: it ends the section before it.
_ANY_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_INLINE_BODY = re.compile(r"^[^:]*?:(?:\*\*|__)?\s*(.*)$")
# `**Title** — text`, `**Title**: text`: the text after the closing bold.
_BOLD_BODY = re.compile(r"^\W*(?:\*\*|__)[^*_]+(?:\*\*|__)\s*(?:[:\u2014\u2013-]\s*)?(.*)$")
# A setext heading's underline.
_UNDERLINE = re.compile(r"^\s{0,3}(?:=+|-{3,})\s*$")
_NONE_WORDS_TEXT = (
    "none no nothing n a na nil not yet so far applicable shown reported relevant errors "
    "error files file tool tools calls call recorded made encountered occurred changes "
    "changed the were was in this segment archived messages"
)
_NONE_WORDS = frozenset(_NONE_WORDS_TEXT.split())


@dataclass(frozen=True)
class Section:
    """One heading of the template found in the answer, and the text under it."""

    key: str
    body: str

    @property
    def words(self) -> list[str]:
        return words(self.body)

    def has_content(self) -> bool:
        return bool(self.words)

    def is_substantive(self) -> bool:
        distinct = set(self.words)
        if self.key == "task status" and terse_status(self.body):
            return True  # "Done." is the whole status of a finished task
        return len(distinct) >= SUBSTANTIVE_WORDS and not distinct <= _NONE_WORDS


SUBJECT_MAX = 6
# A terse status that states the task's state in a word or two ("Done.", "Fixed and
# submitted.", "Answered."): a status, not an empty section.
_TERSE_STATUS = re.compile(
    r"^\W*(?:all\s+)?(?:done|finished|complete|completed|fixed|resolved|submitted|merged"
    r"|answered|shipped|deployed)(?:\s+and\s+(?:submitted|merged|tested|verified|pushed))?"
    r"\W*$"
    # the same word in German, French, Spanish, Portuguese, Italian
    r"|^\W*(?:alles\s+|tout\s+|todo\s+)?(?:erledigt|fertig|abgeschlossen|behoben|erfüllt"
    r"|terminée?|finie?|fait|corrigée?|hecho|terminad[oa]|list[oa]|completad[oa]|resuelt[oa]"
    r"|feito|concluíd[oa]|fatto|completato|risolto)\W*$",
    re.IGNORECASE,
)


# "Both tasks are done", "Las dos tareas están hechas": a subject of these words and a
# word of completion.
_DONE_WORD = re.compile(
    r"^(?:done|finished|complete|completed|erledigt|fertig|abgeschlossen|terminée?s?|finie?s?"
    r"|faite?s?|hech[oa]s?|terminad[oa]s?|completad[oa]s?|list[oa]s?)$"
)
_SUBJECT_TEXT = (
    "both all the two tasks task everything work is are was were now "
    "beide alle die zwei aufgaben aufgabe alles ist sind "
    "les deux tâches tâche tout est sont "
    "las los dos tareas tarea todo está están es son"
)
_SUBJECT_WORDS = frozenset(_SUBJECT_TEXT.split())


def terse_status(body: str) -> bool:
    """Whether `body` is a status said in a word or two ("Done.", "Fixed and submitted.",
    "Both tasks are done.")."""
    if _TERSE_STATUS.match(body.strip()) is not None:
        return True
    tokens = words(body)
    done = [t for t in tokens if _DONE_WORD.match(t)]
    return (
        0 < len(tokens) <= SUBJECT_MAX and bool(done) and set(tokens) - set(done) <= _SUBJECT_WORDS
    )


def heading_of(line: str, template: SummaryTemplate, underlined: bool = False) -> str | None:
    """The key of the template's heading `line` is, if it is one (`underlined`: the next
    line is a setext underline)."""
    rest = _LEAD.sub("", line).lower()
    for key, title in zip(HEADING_KEYS[template], _TITLE_PATTERNS[template], strict=True):
        if not rest.startswith(key):
            continue
        if (
            _DECORATED.match(line)
            or re.match(rf"(?:{title}|{re.escape(key)})\W{{0,4}}:", rest)
            or (underlined and re.fullmatch(rf"(?:{title}|{re.escape(key)})\W*", rest))
        ):
            return key
    return _alias_of(rest, template)


def _alias_of(rest: str, template: SummaryTemplate) -> str | None:
    """The key a short `Name:` line stands for (`Status:` for Task Status)."""
    if template == "archived":
        return None
    match = re.match(r"([a-z][a-z ]{2,14}?)\s*(?:\*\*|__)?\s*:", rest)
    key = ALIASES.get(match.group(1)) if match else None
    return key if key in HEADING_KEYS[template] else None


def without_title(line: str, template: SummaryTemplate) -> str | None:
    """What `line` says besides a heading's title: the line itself when it is no heading,
    the text after the title of a `Title: text` heading, None for a bare heading."""
    if heading_of(line, template) is None:
        return line
    inline = inline_body(line)
    return inline if inline.strip() else None


def inline_body(line: str) -> str:
    """The text a heading line carries after its title (`Title: text`, `**Title** — text`)."""
    bold = _BOLD_BODY.match(line.strip())
    if bold is not None:
        return bold.group(1)
    inline = _INLINE_BODY.match(line.strip()) if ":" in line else None
    return inline.group(1) if inline else ""


def split_sections(text: str, template: SummaryTemplate) -> list[Section]:
    """The template's sections found in `text`, in order, each with its body (a heading
    written twice has both bodies)."""
    found: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    for at, line in enumerate(lines):
        underlined = at + 1 < len(lines) and bool(_UNDERLINE.match(lines[at + 1]))
        key = heading_of(line, template, underlined)
        if key is not None:
            inline = inline_body(line)
            found.append((key, [inline] if inline else []))
        elif _UNDERLINE.match(line) and at > 0 and heading_of(lines[at - 1], template, True):
            continue
        elif _ANY_HEADING.match(line) and found:
            found.append(("", []))  # a heading of another name ends the section
        elif found:
            found[-1][1].append(line)
    merged: dict[str, list[str]] = {}
    for key, body in found:
        if key:
            merged.setdefault(key, []).extend(body)
    return [Section(key, "\n".join(body)) for key, body in merged.items()]


def title_of(key: str, template: SummaryTemplate) -> str:
    """The heading's title as the prompt writes it (without emoji)."""
    return dict(zip(HEADING_KEYS[template], _TITLES[template], strict=True))[key]


def missing_sections(
    sections: list[Section], template: SummaryTemplate, required: Sequence[str] | None = None
) -> list[str]:
    """The titles of the template's headings (or of those `required`) not among `sections`."""
    present = {s.key for s in sections}
    titles = [title_of(key, template) for key in HEADING_KEYS[template] if key not in present]
    return titles if required is None else [t for t in titles if t in required]
