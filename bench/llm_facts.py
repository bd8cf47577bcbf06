"""What a summary's prose states of a history, and whether an answer is a copy.

The prose is the summary without its `## Ledger` (the ledger keeps the facts whatever the
model writes; the question here is what the model itself wrote). Facts of the history
(`app.core.history.facts.extract_facts`): the paths of files read, created, edited or deleted; the
commands; the errors; the user's requests. A path is stated when the path or its file name
occurs; a command when its first two words occur; an error when its first 30 characters
occur; a request when half of its first 12 content words (4+ letters) occur. Lenient on
purpose: a narrative may say `config.py` for `src/pkg/config.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.history.facts import extract_facts
from app.core.ledger.extract import LEDGER_HEADING
from app.core.messages import Message

KINDS = ("paths", "commands", "errors", "requests")
_CONTENT_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{3,}")
# An answer whose lines (20+ characters) are mostly found verbatim in the prompt is a copy.
COPY_SHARE = 0.5


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
