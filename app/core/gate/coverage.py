"""Does an answer name what this conversation is about? Coverage of its salient facts.

The facts the service extracts (`ExtractedFacts`) give groups a summary of this history
cannot leave all out: what the user asked (the rarer words of their requests), the files
touched (the latest first), the commands run, the errors met. A group is covered when the
answer names one of its items (a path or its file name, a command's first words, an
error's name, two of the request's words). How many groups an answer must cover scales
with how many the history has (`required`): a history of one request and nothing else
asks for one. Content-free prose, a poem, a non-answer in any language, the system
prompt's summary or another session's summary cover none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.gate.overlap import content_words, words
from app.core.history import ExtractedFacts

# Request words that can show the answer read the request: this long at least.
REQUEST_WORD_CHARS = 5
REQUEST_HITS = 2
REQUEST_WORDS_PER_HIT = 80
MAX_REQUEST_HITS = 4
# Items of each list looked at, the latest.
LATEST = 12
# Long words any text uses: they show nothing about the request.
_PLAIN_TEXT = (
    "every which there these those about after before where while being other first still "
    "since might using below above think found lines again thing things right works going "
    "please continue"
)
_PLAIN = frozenset(_PLAIN_TEXT.split())
_IDENTIFIER = re.compile(r"\b(?:[A-Z][a-z]+[A-Z]\w*|[a-z]+_\w+)\b")
_ERROR_NAME = re.compile(r"\b(?:[A-Z]\w*(?:Error|Exception|Warning)|[EFW]\d{3,4}|[45]\d\d)\b")


@dataclass(frozen=True)
class Salient:
    """The groups of a history's salient facts: each a tuple of lower-cased needles."""

    request: frozenset[str]
    files: tuple[str, ...]
    commands: tuple[str, ...]
    errors: tuple[str, ...]  # error names, and the identifiers of the error lines

    def groups(self) -> int:
        return sum(bool(g) for g in (self.request, self.files, self.commands, self.errors))

    def required(self) -> int:
        """Groups an answer must cover: one of up to two, two of three or four."""
        return 1 if self.groups() <= 2 else 2

    def request_hits(self) -> int:
        """Request words an answer must name: more for a long request, where a few of its
        words turn up in any text by chance."""
        wanted = REQUEST_HITS + len(self.request) // REQUEST_WORDS_PER_HIT
        return min(wanted, MAX_REQUEST_HITS, len(self.request))

    def covered(self, text: str) -> int:
        low = text.lower()
        said = {stem(w) for w in words(text)}
        hits = [
            len(self.request & said) >= self.request_hits() if self.request else 0,
            any(_named(f, low) for f in self.files),
            any(c in low for c in self.commands),
            any(e in low for e in self.errors),
        ]
        return sum(bool(h) for h in hits)


def salient(
    facts: ExtractedFacts, instructions: frozenset[str] = frozenset(), carried: str = ""
) -> Salient:
    """The salient facts of `facts`; `instructions`: the prompt's words, which prove nothing;
    `carried`: an earlier summary in the history, whose goals the new one carries on."""
    spoken = " ".join(s for s in facts.spoken if s) or (facts.first_request or "")
    spoken = f"{spoken} {carried}"
    request = {
        w
        for w in content_words(words(spoken))
        if len(w) >= REQUEST_WORD_CHARS
        and w not in instructions
        and w not in _PLAIN
        and not w.isdigit()
    }
    files = [p for _, paths in facts.files() for p in paths[-LATEST:]]
    commands = [_command_key(c) for c in facts.commands[-LATEST:]]
    errors = [
        name.lower()
        for note in facts.errors[-LATEST:]
        for name in _ERROR_NAME.findall(note.message)
    ]
    return Salient(
        frozenset(stem(w) for w in request),
        tuple(dict.fromkeys(p.lower() for p in files)),
        tuple(dict.fromkeys(c for c in commands if c)),
        tuple(dict.fromkeys(errors)),
    )


def stem(word: str) -> str:
    """`engines`, `added`, `parsing` → `engine`, `add`, `pars`: a request and its summary
    inflect the same words differently."""
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _named(path: str, low: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return path in low or (len(name) >= 4 and name in low)


def _command_key(command: str) -> str:
    """A command's first two words (its program and subcommand or argument), lower-cased;
    one word when it has one of four letters or more."""
    parts = command.split()
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0].lower() if len(parts[0]) >= 4 else ""
    return " ".join(parts[:2]).lower()
