"""How much of a text another text already holds: words, shingles and phrases, measured.

A summary talks about its conversation, so it shares that conversation's rarer words (paths,
identifiers, names); filler shares none. It restates in its own words, so few of its word
runs are copied from the prompt or the transcript; an echo is made of them. These measures
decide both without matching any fixed sentence. Words are lower-cased runs of letters and
digits; in Chinese and Japanese, where words are not spaced, each character is one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SHINGLE = 4  # words per shingle: long enough that common phrasing rarely repeats by chance
# Words too common to show that a text is about its conversation.
_COMMON_TEXT = (
    "the and for with that this from was were are has have had not but you your our its "
    "his her they them their into onto over under then than when what which who how why "
    "all any each some more most other also only just been being will would should could "
    "can may might must does did done use used using via per out off all none yes"
)
_COMMON = frozenset(_COMMON_TEXT.split())


def words(text: str) -> list[str]:
    """`text`'s words, lower-cased; a Chinese or Japanese character is a word of its own."""
    lowered = text.lower()
    if not _CJK.search(lowered):
        return _WORD.findall(lowered)
    found: list[str] = []
    for match in _WORD.finditer(lowered):
        token = match.group()
        if _CJK.search(token):
            found.extend(_split_cjk(token))
        else:
            found.append(token)
    return found


def _split_cjk(token: str) -> list[str]:
    parts: list[str] = []
    latin = ""
    for char in token:
        if _CJK.match(char):
            if latin:
                parts.append(latin)
                latin = ""
            parts.append(char)
        else:
            latin += char
    return [*parts, latin] if latin else parts


def shingles(tokens: list[str]) -> set[tuple[str, ...]]:
    """The runs of `SHINGLE` consecutive words (the whole list when it is shorter)."""
    if len(tokens) < SHINGLE:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def content_words(tokens: Iterable[str]) -> set[str]:
    """The words that can show what a text is about: not common, not one Latin letter."""
    return {t for t in tokens if t not in _COMMON and (len(t) > 2 or _CJK.match(t))}


@dataclass(frozen=True)
class Reference:
    """A text to measure against, read once: its words, shingles and word string."""

    tokens: tuple[str, ...]
    vocabulary: frozenset[str] = field(init=False)
    runs: frozenset[tuple[str, ...]] = field(init=False)
    joined: str = field(init=False)
    has_cjk: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "vocabulary", frozenset(self.tokens))
        object.__setattr__(self, "runs", frozenset(shingles(list(self.tokens))))
        object.__setattr__(self, "joined", f" {' '.join(self.tokens)} ")
        object.__setattr__(self, "has_cjk", any(_CJK.match(t) for t in self.tokens))

    @classmethod
    def of(cls, text: str) -> Reference:
        return cls(tuple(words(text)))

    def holds_phrase(self, tokens: list[str]) -> bool:
        """Whether these words occur here, in order and next to each other."""
        return bool(tokens) and f" {' '.join(tokens)} " in self.joined

    def containment(self, runs: set[tuple[str, ...]]) -> float:
        """The share of `runs` found here (0 for none)."""
        return len(runs & self.runs) / len(runs) if runs else 0.0

    def grounding(self, tokens: Iterable[str]) -> float | None:
        """The share of the content words of `tokens` that occur here, counting only words
        of scripts this text uses (a summary may be written in the user's language about
        an English transcript); None when nothing is left to measure."""
        judged = {t for t in content_words(tokens) if self.has_cjk or not _CJK.match(t)}
        if not judged or not self.vocabulary:
            return None
        return len(judged & self.vocabulary) / len(judged)
