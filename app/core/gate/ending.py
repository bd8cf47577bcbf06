"""Does the answer end where the session ended? The user's latest request in its goals or
status.

A summary is read to carry on: the agent continues from Goals and Task Status. One that
tells the first request and the work on it, and leaves out what the user asked last,
sends the agent back to a finished task — true sentence by sentence, and misleading as a
whole, so it is refused (`stale`) rather than trimmed. (The archive template's milestones
and insights count too: its Objectives hold the goal and its status.) The latest request
is the user's own words of their last message that is not the first
(`ExtractedFacts.latest_request`); it is found when Goals & Decisions, Task Status or the
archive's Objectives name two of its own words (compared by stem; numbers too: "a test
for cost -1"; an acronym of the request too: "an ICS export", "a CSV report") that the
first request does not have — or name the target of the last tool calls (`last_targets`:
a file the last steps wrote, edited or read that no earlier step touched), which is what
the latest request was about when the answer says it in other words ("Export ICS écrit"
after "Ajoute un export ICS dans src/export_ics.py"). An answer that names neither tells
where the session ended from somewhere else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.gate.coverage import stem
from app.core.gate.evidence import Evidence
from app.core.gate.overlap import content_words, words
from app.core.gate.sections import Section

# Sections that say what the agent is asked to do now.
END_KEYS = frozenset({"goals", "task status", "objectives", "completed milestones", "key insights"})
# A request word that can show the request was read: this long, not a word of any text.
WORD_CHARS = 4
LATEST_HITS = 2
# The last tool calls: this many steps from the end, each target's file name this long.
LAST_STEPS = 3
TARGET_CHARS = 4
_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")
_PLAIN_TEXT = (
    "thanks thank great good please also just make now then next more some this that "
    "with from into have what when they them their there could would should done okay"
)
_PLAIN = frozenset(_PLAIN_TEXT.split())


def request_stems(
    request: str | None, instructions: frozenset[str], earlier: str | None = None
) -> frozenset[str]:
    """The words of `request` an answer naming it would use, and `earlier` (the first
    request) does not: stems, numbers whole; the prompt's own words and courtesy left out.
    A word the first request has shows nothing of the latest."""
    if not request:
        return frozenset()
    before = {stem(w) for w in words(earlier or "")}
    tokens = words(request)
    found = {
        stem(w)
        for w in content_words(tokens)
        if len(w) >= WORD_CHARS and w not in _PLAIN and w not in instructions and not w.isdigit()
    }
    found.update(w for w in tokens if w.isdigit())
    found.update(a.lower() for a in _ACRONYM.findall(request))  # "ICS", "CSV"
    return frozenset(found - before)


def last_targets(evidence: Evidence) -> frozenset[str]:
    """The file names the last tool calls touched first: what the session ended on (not
    the file every step edits, which the first request was about as well)."""
    steps = evidence.steps
    tail = [s for s in steps[-LAST_STEPS:] if s.paths]
    earlier = {p for s in steps[: max(0, len(steps) - LAST_STEPS)] for p in s.paths}
    names = {p.rstrip("/").rsplit("/", 1)[-1] for s in tail for p in s.paths if p not in earlier}
    return frozenset(n for n in names if len(n) >= TARGET_CHARS)


def leaves_out(
    sections: Sequence[Section], latest: frozenset[str], targets: frozenset[str] = frozenset()
) -> bool:
    """Whether the end sections of an answer leave out the latest request and the last
    calls' target (a request of too few words to tell is never left out)."""
    if len(latest) < LATEST_HITS:
        return False
    ends = [s for s in sections if s.key in END_KEYS]
    said = {w if w.isdigit() else stem(w) for s in ends for w in s.words}
    if len(latest & said) >= LATEST_HITS:
        return False
    text = "\n".join(s.body.lower() for s in ends)
    return not any(name in text for name in targets)
