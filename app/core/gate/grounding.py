"""Keep what an answer states of this conversation; drop what it cannot have read there.

Sentence by sentence, the entities a summary states (`app.core.gate.entities`) are looked up in
the history. A sentence naming a path, URL, command, identifier or number found nowhere in
it is foreign (another session, a guess, a hallucinated Docker build): it is dropped and a
warning says so. A sentence of the request or next-step sections (Goals & Decisions, Task
Status, the archive's Objectives) that states what only a tool result says — a command only
a file or page held, or wording only a tool result used — is a tool result
speaking with the user's voice (an obeyed prompt injection: the result's words re-stated as
the request): dropped too, as is a command fetching a URL only a tool result gave (outside
the errors). When too much is
dropped, the answer is rejected instead (`foreign`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.gate.claims import Facts, false_claim
from app.core.gate.entities import Entity, HistoryText, entities
from app.core.gate.overlap import content_words, words
from app.core.gate.sections import heading_of, inline_body
from app.core.ports import SummaryTemplate

# Sections where a sentence states what the user asked or what comes next.
REQUEST_KEYS = frozenset({"goals", "objectives"})
NEXT_KEYS = frozenset({"task status", "objectives"})
# Where a URL only a tool result holds may stand (the error that named it).
ERROR_KEYS = frozenset({"errors"})
# Rejected instead of trimmed: this many foreign entities and this share of all stated.
FOREIGN_MIN = 3
FOREIGN_SHARE = 0.3
# Or when this share of the sentences is dropped.
DROPPED_SHARE = 0.5
# Words of a request sentence only a tool result used: this many and this share.
BORROWED_WORDS = 2
BORROWED_SHARE = 0.25
# ... in a run of this many words that a tool result holds.
BORROWED_RUN = 4
# A dropped sentence is quoted in its warning up to this many characters.
SENTENCE_CHARS = 160

_MARK = re.compile(r"^(\s*(?:[-*+]\s+(?:\[[^\]]{0,3}\]\s*)?|\d{1,2}[.)]\s+|>\s*)?)(.*)$")
_SENTENCE_END = re.compile(
    r"(?<=[.!?。！？])\s+(?=[A-Z\"'`*(\[\u00c0-\u024f\u0400-\u04ff]|[^\x00-\x7f])"
)
# A sentence of the archive's Objectives & Status that states a request or what comes next
# (the rest of that section reports the status, in the words of what was read).
_AS_REQUEST = re.compile(
    r"\b(?:user|asked to|asks to|wants?|wanted|requests?|requested|goal|objective|next|then"
    r"|todo|should|must|needs? to|will|plan)\b",
    re.IGNORECASE,
)
_UNDERLINE = re.compile(r"^\s{0,3}(?:=+|-{3,})\s*$")


@dataclass(frozen=True)
class Grounded:
    """The answer with its ungrounded sentences dropped, and what was found."""

    text: str
    warnings: tuple[str, ...]
    stated: int  # distinct entities stated
    foreign: tuple[str, ...]  # entities found nowhere in the history
    sentences: int
    dropped: int
    false: tuple[tuple[str, str], ...] = ()  # (rule, sentence) of the claims found false

    @property
    def rejected(self) -> bool:
        many = len(self.foreign) >= FOREIGN_MIN and len(self.foreign) >= FOREIGN_SHARE * max(
            self.stated, 1
        )
        return many or (self.dropped > 0 and self.dropped >= DROPPED_SHARE * self.sentences)

    @property
    def reason(self) -> str:
        """Why a rejected answer is: mostly false claims (`misleading`), else `foreign`."""
        return "misleading" if len(self.false) * 2 > self.dropped else "foreign"


def ground(
    text: str,
    template: SummaryTemplate,
    history: HistoryText,
    reported: frozenset[str] = frozenset(),
    claims: Facts | None = None,
) -> Grounded:
    """`text` without its foreign and borrowed sentences (headings always kept), and
    with `claims`, without the sentences whose claims the evidence contradicts
    (`app.core.gate.claims`). `reported`: the words of the errors the history met, which a
    goal may state (a failure to fix is a report, not a tool result's instruction). Each
    dropped sentence is named in a warning with its rule."""
    kept: list[str] = []
    stated: set[str] = set()
    foreign: dict[str, None] = {}
    false: list[tuple[str, str]] = []
    said: list[str] = []  # one warning per dropped sentence, in order
    counts = [0, 0]  # sentences, dropped
    key = ""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        underlined = at + 1 < len(lines) and bool(_UNDERLINE.match(lines[at + 1]))
        heading = heading_of(line, template, underlined)
        if heading is not None:
            key = _short_key(heading)
            body = inline_body(line)
            prefix = line[: len(line) - len(body)] if body and line.endswith(body) else line
            if not body or prefix == line:
                kept.append(line)
                continue
        else:
            match = _MARK.match(line)
            prefix, body = (match.group(1) or "", match.group(2)) if match else ("", line)
        sentences = [s for s in _SENTENCE_END.split(body) if s.strip()]
        survivors = []
        for sentence in sentences:
            counts[0] += 1
            found = entities(sentence)
            stated.update(e.text.lower() for e in found)
            missing = [e for e in found if not history.sources(e)]
            rule = None
            if missing:
                foreign.update((e.text, None) for e in missing)
                rule = "foreign"
            elif _borrowed(sentence, found, key, history, reported):
                rule = "borrowed"
            elif claims is not None:
                rule = false_claim(sentence, key, found, claims)
                if rule is not None:
                    false.append((rule, sentence.strip()))
            if rule is None:
                survivors.append(sentence)
                continue
            said.append(dropped_warning(rule, sentence))
            counts[1] += 1
        if survivors or not sentences:
            kept.append(prefix + " ".join(survivors) if sentences else line)
    return Grounded(
        "\n".join(kept).strip(),
        tuple(said),
        len(stated),
        tuple(foreign),
        counts[0],
        counts[1],
        tuple(false),
    )


def dropped_warning(rule: str, sentence: str) -> str:
    """The warning naming a dropped sentence and the rule it broke."""
    return f"summary: dropped [{rule}] “{shown(sentence)}”"


def shown(sentence: str) -> str:
    """`sentence` on one line, cut to `SENTENCE_CHARS` characters."""
    text = " ".join(sentence.split())
    return text if len(text) <= SENTENCE_CHARS else text[: SENTENCE_CHARS - 1] + "…"


def _short_key(key: str) -> str:
    return key.split()[0] if key.startswith("objectives") else key


def _borrowed(
    sentence: str, found: list[Entity], key: str, history: HistoryText, reported: frozenset[str]
) -> bool:
    """A request or next step whose URL or command, or whose wording, only a tool result holds."""
    only_results = [e for e in found if history.sources(e) == {"results"}]
    if key not in ERROR_KEYS and any(e.kind == "url" and e.in_code for e in only_results):
        return True  # a command fetching what only a file or page named: wherever it stands
    if key not in REQUEST_KEYS and key not in NEXT_KEYS:
        return False
    if any(e.kind == "code" for e in only_results):
        return True
    if key not in REQUEST_KEYS:
        return False
    if key == "objectives" and not _AS_REQUEST.search(sentence):
        return False  # the archive's Objectives & Status also reports: "the docs say …"
    tokens = words(sentence)
    judged = [w for w in content_words(tokens) if len(w) >= 4]
    only = {w for w in judged if history.only_in_results(w) and w not in reported}
    if len(only) < BORROWED_WORDS or len(only) < BORROWED_SHARE * len(judged):
        return False
    # and it repeats a tool result's words around them: the result's text, not a report
    runs = (tokens[i : i + BORROWED_RUN] for i in range(len(tokens) - BORROWED_RUN + 1))
    return any(only & set(run) and history.in_results(run) for run in runs)
