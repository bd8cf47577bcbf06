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
for cost -1") that the first request does not have.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.gate.coverage import stem
from app.core.gate.overlap import content_words, words
from app.core.gate.sections import Section

# Sections that say what the agent is asked to do now.
END_KEYS = frozenset({"goals", "task status", "objectives", "completed milestones", "key insights"})
# A request word that can show the request was read: this long, not a word of any text.
WORD_CHARS = 4
LATEST_HITS = 2
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
    return frozenset(found - before)


def leaves_out(sections: Sequence[Section], latest: frozenset[str]) -> bool:
    """Whether the end sections of an answer leave out the latest request (one of too few
    words to tell is never left out)."""
    if len(latest) < LATEST_HITS:
        return False
    said = {w if w.isdigit() else stem(w) for s in sections if s.key in END_KEYS for w in s.words}
    return len(latest & said) < LATEST_HITS
