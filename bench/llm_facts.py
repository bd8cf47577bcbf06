"""What a summary's prose states of a history, and whether an answer is a copy.

The prose is the summary without its `## Ledger` (the ledger keeps the facts whatever the
model writes; the question here is what the model itself wrote). Facts of the history
(`app.core.history.facts.extract_facts`): the paths of files read, created, edited or deleted; the
commands; the errors; the user's requests. A path is stated when the path or its file name
occurs; a command when its first two words occur; an error when its first 30 characters
occur; a request when half of its first 12 content words (4+ letters) occur. Lenient on
purpose: a narrative may say `config.py` for `src/pkg/config.py`.

And what the gate's claim check (`app.core.gate.claims`) still finds false in a summary it
accepted: its sentences held to the evidence once more, in the assembled summary, with the
lines the service wrote into it (`false_claims`); and what the gate dropped on the way, read
from its warnings (`dropped_rules`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.gate.claims import Facts as ClaimFacts
from app.core.gate.coverage import salient
from app.core.gate.entities import HistoryText, entities
from app.core.gate.evidence import Evidence
from app.core.gate.grounding import ground
from app.core.gate.overlap import words
from app.core.history.facts import extract_facts
from app.core.ledger.extract import LEDGER_HEADING
from app.core.messages import Message
from app.core.summary import DIGEST_NOTES_END

KINDS = ("paths", "commands", "errors", "requests")
_CONTENT_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{3,}")
# An answer whose lines (20+ characters) are mostly found verbatim in the prompt is a copy.
COPY_SHARE = 0.5
_DROPPED = re.compile(r"^summary: dropped \[(\w+)\]")
_NOTES_START = "<notes>"


@dataclass(frozen=True)
class Facts:
    paths: tuple[str, ...]
    commands: tuple[str, ...]
    errors: tuple[str, ...]
    requests: tuple[str, ...]


def facts_of(messages: Sequence[Message]) -> Facts:
    facts = extract_facts(messages)
    paths = (*facts.files_read, *facts.files_created, *facts.files_edited, *facts.files_deleted)
    return Facts(
        paths=tuple(dict.fromkeys(paths)),
        commands=facts.commands,
        errors=tuple(dict.fromkeys(e.message for e in facts.errors)),
        requests=tuple(s for s in facts.spoken if s.strip()),
    )


def prose_of(summary: str | None) -> str:
    return (summary or "").split(f"\n{LEDGER_HEADING}", 1)[0]


def stated(facts: Facts, prose: str) -> dict[str, tuple[int, int]]:
    """(stated, total) per kind."""
    low = prose.lower()
    checks = {
        "paths": [_path_stated(p, low) for p in facts.paths],
        "commands": [" ".join(c.split()[:2]).lower() in low for c in facts.commands],
        "errors": [e.strip()[:30].lower() in low for e in facts.errors],
        "requests": [_request_stated(r, low) for r in facts.requests],
    }
    return {kind: (sum(found), len(found)) for kind, found in checks.items()}


def _path_stated(path: str, low: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    return path.lower() in low or (len(name) > 3 and name in low)


def _request_stated(request: str, low: str) -> bool:
    words = list(dict.fromkeys(w.lower() for w in _CONTENT_WORD.findall(request)))[:12]
    if not words:
        return False
    return sum(w in low for w in words) * 2 >= len(words)


def copy_share(answer: str, prompt: str) -> float:
    """The share of the answer's lines (20+ characters, stripped of list marks, headings
    left out) that occur verbatim in the prompt."""
    lines = [
        ln.strip().lstrip("-* ").strip()
        for ln in answer.splitlines()
        if not ln.lstrip().startswith("#")  # the headings asked for are in every prompt
    ]
    long = [ln for ln in lines if len(ln) >= 20]
    if not long:
        return 0.0
    return sum(ln in prompt for ln in long) / len(long)


@dataclass(frozen=True)
class Truth:
    """What a text states against its history: the entities found nowhere in it (paths,
    URLs, commands, identifiers, numbers), and the kinds of salient facts it names."""

    foreign: tuple[str, ...]
    covered: int
    groups: int


def truth_of(messages: Sequence[Message], text: str) -> Truth:
    """`text` (a summary's prose, or an answer) judged as the summary gate judges it."""
    history = HistoryText.of(list(messages))
    found = entities(text)
    foreign = tuple(e.text for e in found if not history.sources(e))
    facts = salient(extract_facts(messages))
    return Truth(foreign, facts.covered(text), facts.groups())


@dataclass(frozen=True)
class FalseClaim:
    """A sentence of an accepted summary that the gate's claim check finds false."""

    rule: str  # `app.core.gate.claims.RULES`
    sentence: str
    model: bool  # the model's answer has it (else a line the service wrote)


def false_claims(
    messages: Sequence[Message], text: str, answer: str = "", notes: str = ""
) -> tuple[FalseClaim, ...]:
    """The sentences of `text` (an accepted summary's prose, five sections) whose claims
    the gate's claim check finds false, each with its rule: `ground` with the claim facts,
    section by section as the gate reads an answer, over the history (and `notes`, the
    digest the model was shown, as the gate reads them). A sentence naming what the history
    does not hold is the foreign rule's, not a claim found false, and is not counted here.
    `answer`: the model's raw answer, to tell its sentences from the lines the service
    wrote into the summary."""
    history = HistoryText.of(list(messages), notes)
    claims = ClaimFacts.of(Evidence.of(messages), history)
    reported = frozenset(w for note in extract_facts(messages).errors for w in words(note.message))
    grounded = ground(text, "sections", history, reported, claims)
    said = " ".join(answer.split())
    return tuple(
        FalseClaim(rule, sentence, " ".join(sentence.split()) in said)
        for rule, sentence in grounded.false
    )


def dropped_rules(warnings: Sequence[str]) -> tuple[str, ...]:
    """The rule of each sentence the gate dropped, from the compaction's warnings
    (`summary: dropped [rule] “sentence”`)."""
    found = (_DROPPED.match(w) for w in warnings)
    return tuple(m.group(1) for m in found if m is not None)


def notes_of(prompt: str) -> str:
    """The digest the model was shown (between `<notes>` and `</notes>`), or ''."""
    start = prompt.find(_NOTES_START)
    end = prompt.find(DIGEST_NOTES_END, start)
    return prompt[start + len(_NOTES_START) : end].strip() if 0 <= start < end else ""
