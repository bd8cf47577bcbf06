"""The words recall indexes and looks up: one definition for the index and the query.

A word is a run of word characters (`\\w+`, with combining marks) of the original text,
folded on its own (case-folded, compatibility-decomposed, accents dropped: `İSTANBUL`,
`ﬁle`, `Straße`, `café` match `istanbul`, `file`, `strasse`, `cafe`), so its offset is the
one in the original text (folding can lengthen a text: `İ` and `ß` fold to two
characters, and offsets taken in a folded copy would point elsewhere).
A query term is a word, a path or a dotted name (`src/tz.py`); it matches a message that
holds every word of it. At most `MAX_QUERY_TERMS` distinct terms are searched, the first
ones of the query; the others are reported dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

MAX_QUERY_TERMS = 64
_WORD = re.compile(r"\w[\w\u0300-\u036f]*")
_TERM = re.compile(r"\w[\w\u0300-\u036f./:-]*")
# NUL and lone surrogates cannot be stored as text (PostgreSQL, SQLite, UTF-8): each
# becomes one U+FFFD, so every offset stays the same.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class WordStat(NamedTuple):
    """How often a word occurs in a message, and where first (a character offset)."""

    times: int
    first: int


@dataclass(frozen=True)
class Term:
    """One term of a query as typed (folded), the words it needs, and where it first
    stands in the query (a character offset: how far apart two terms were typed)."""

    text: str
    words: tuple[str, ...]
    at: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Query:
    """The terms searched, in the query's order, and those over the cap, not searched."""

    terms: tuple[Term, ...]
    dropped: tuple[str, ...]

    @property
    def words(self) -> tuple[str, ...]:
        """Every word the terms need, each once."""
        return tuple(dict.fromkeys(word for term in self.terms for word in term.words))


def storable(text: str) -> str:
    """The text with NUL and lone surrogates replaced one for one (offsets unchanged)."""
    return _UNSTORABLE.sub("\ufffd", text)


def fold(word: str) -> str:
    """The form a word is indexed and looked up under."""
    if word.isascii():
        return word.lower()
    folded = unicodedata.normalize("NFKD", word.casefold())
    if folded.isascii():
        return folded
    return "".join(c for c in folded if not unicodedata.combining(c))


def word_stats(text: str) -> dict[str, WordStat]:
    """Each distinct folded word of `text`: its count and its first offset in `text`."""
    counts = Counter(_WORD.findall(text))
    firsts: dict[str, int] = {}
    first = firsts.setdefault
    for match in _WORD.finditer(text):
        first(match.group(), match.start())
    stats: dict[str, WordStat] = {}
    for original, count in counts.items():
        word = fold(original)
        seen = stats.get(word)
        at = firsts[original]
        stats[word] = (
            WordStat(seen.times + count, min(seen.first, at)) if seen else WordStat(count, at)
        )
    return stats


def parse_query(query: str, max_terms: int = MAX_QUERY_TERMS) -> Query:
    """The query's distinct terms (folded), the first `max_terms` searched."""
    terms: dict[str, Term] = {}
    for match in _TERM.finditer(query):
        original = match.group()
        text = original.casefold()
        if text not in terms:
            words = tuple(dict.fromkeys(fold(w) for w in _WORD.findall(original)))
            terms[text] = Term(text, words, match.start())
    found = list(terms.values())
    return Query(tuple(found[:max_terms]), tuple(t.text for t in found[max_terms:]))
