"""Ranking recall's candidates and cutting their snippets, from an index's word counts.

A store finds the candidates (messages holding a word of the query) in its index and
hands them here with each word's count and first offset; nothing here needs a message's
text, so a store reads only the snippets of the hits it returns.

Score: per term the message holds (every word of it), ten points plus its occurrences
(at most five; a term of several words counts its rarest word); plus twenty when a query
of several terms has all of them in the message; plus up to thirty as its terms stand in
the message as they were typed (each next term first found after the one before it, about
as far as in the query): the message that holds the query's words as the query has them
(the command, the error line) ranks before one that only mentions them often; plus up to
thirty as the terms make up the message's text (their characters over its length): a
message that is little more than the query (a one-word request, a slash command, the call
that names a path) ranks before long ones that mention its words many times. Originals
come first: a message the service wrote (its digest marked `COPY_MARK`: an earlier
summary, ledger or restored file, archived again by every compaction) ranks after every
original, whatever its score, so copies of one summary cannot crowd out the tool call that
holds the answer. Ties go to the newer archive, then the later message. A message whose
role and text are those of a better hit (the same message archived twice) is not returned
again.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.core.recall.terms import Query, Term, WordStat

ALL_TERMS_BONUS = 20
PHRASE_BONUS = 30
COVER_BONUS = 30
COPY_MARK = "~"  # opens the digest of a message the service wrote
MAX_POSTINGS = 20_000  # (word, message) pairs one recall reads from its index, at most


@dataclass(frozen=True)
class Candidate:
    """A message holding at least one word of the query, as an index found it."""

    order: int  # the archive's place in the session, oldest first
    archive_id: str
    message_index: int
    role: str
    tool_name: str | None
    digest: str  # `message_digest` of the message: equal for the same message
    length: int  # characters of the message's text
    words: Mapping[str, WordStat]  # the query's words it holds


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    score: int
    at: int  # offset of its first matched word: the snippet is cut around it


class PostingBudget:
    """The bound on a recall's reading: each word of the query may bring at most its share
    of `MAX_POSTINGS` messages, newest first, so a word found everywhere cannot crowd out
    a rare one; `cut` says whether some word used its whole share (then its older
    messages may be unread)."""

    def __init__(self, words: Sequence[str], total: int = MAX_POSTINGS) -> None:
        self.share = max(1, total // max(1, len(words)))
        self._left = dict.fromkeys(words, self.share)
        self.cut = False

    def open_words(self) -> list[str]:
        """The words that may still bring messages."""
        return [word for word, left in self._left.items() if left > 0]

    def take(self, word: str) -> bool:
        """Whether one more message of `word` may be read (counting it)."""
        left = self._left.get(word, 0)
        if left <= 0:
            return False
        self._left[word] = left - 1
        self.cut = self.cut or left == 1
        return True


def message_digest(role: str, text: str) -> str:
    """What makes two archived messages the same one for recall."""
    return hashlib.sha256(f"{role}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def rank(found: Iterable[Candidate], query: Query, limit: int) -> list[Ranked]:
    """The best `limit` candidates, best first, each message once."""
    by_word: dict[str, list[Term]] = {}
    for term in query.terms:  # each term looked at only when its first word is there
        by_word.setdefault(term.words[0], []).append(term)
    several = len(query.terms) > 1
    scored = [r for r in (_score(c, by_word, query.terms, several) for c in found) if r]
    scored.sort(
        key=lambda r: (
            r.candidate.digest.startswith(COPY_MARK),
            -r.score,
            -r.candidate.order,
            -r.candidate.message_index,
        )
    )
    kept: list[Ranked] = []
    seen: set[tuple[str, int] | str] = set()
    for ranked in scored:
        if len(kept) >= limit:
            break
        where = (ranked.candidate.archive_id, ranked.candidate.message_index)
        if where in seen or ranked.candidate.digest in seen:
            continue
        seen.update((where, ranked.candidate.digest))
        kept.append(ranked)
    return kept


def _score(
    candidate: Candidate,
    by_word: Mapping[str, list[Term]],
    terms: Sequence[Term],
    several: bool,
) -> Ranked | None:
    score, at = 0, candidate.length
    words = candidate.words
    found: dict[Term, int] = {}  # each term held, where its first word first stands
    for word in words:
        for term in by_word.get(word, ()):
            stats = [words.get(w) for w in term.words]
            held = [s for s in stats if s is not None]
            if len(held) == len(stats):
                score += 10 + min(min(s.times for s in held), 5)
                found[term] = words[term.words[0]].first
                at = min(at, *(s.first for s in held))
    if not found:
        return None
    if several and len(found) == len(terms):
        score += ALL_TERMS_BONUS
    if several:
        score += PHRASE_BONUS * _as_typed(terms, found) // (len(terms) - 1)
    covered = sum(len(term.text) for term in found)
    score += COVER_BONUS * min(covered, candidate.length) // max(candidate.length, 1)
    return Ranked(candidate, score, at)


def _as_typed(terms: Sequence[Term], found: Mapping[Term, int]) -> int:
    """How many of the query's consecutive terms the message holds as typed: the second
    first found after the first, at most about twice as far (and two characters more:
    quotes escaped, a space doubled) as in the query."""
    close = 0
    for before, after in itertools.pairwise(terms):
        if before in found and after in found:
            gap = found[after] - found[before]
            close += 0 < gap <= 2 * (after.at - before.at) + 2
    return close


def snippet_bounds(at: int, length: int, chars: int) -> tuple[int, int]:
    """The slice of a message's text to show: `chars` characters holding offset `at`,
    a quarter of them before it."""
    start = max(0, at - chars // 4)
    end = min(length, start + chars)
    return max(0, min(start, end - chars)), end


def cut_snippet(window: str, start: int, end: int, length: int) -> str:
    """The window's text, whitespace collapsed, with `…` where the message goes on."""
    text = " ".join(window.split())
    return f"{'… ' if start > 0 else ''}{text}{' …' if end < length else ''}"
