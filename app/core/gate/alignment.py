"""How much of an answer is the transcript re-typed, found by approximate alignment.

Exact word runs (`app.core.gate.overlap`'s 4-word shingles) miss a copy with a word inserted or
dropped every few words. Here the answer's word pairs are looked up in the transcript and
chained when they occur in the same order close together, a few words inserted or skipped
on either side allowed: a chain of `MIN_CHAIN` pairs or more is copied text. A summary in
its own words shares pairs with its transcript ("the tests", a quoted command) but not long
chains of them; a re-typed transcript is one long chain with small gaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

# Pairs a chain needs to be a copy, answer pairs a chain may skip (a word inserted or
# dropped), transcript words it may skip per step, occurrences of a pair looked at.
MIN_CHAIN = 6
SKIP = 2
GAP = 4
MAX_PLACES = 24


@dataclass(frozen=True)
class PairIndex:
    """Where each word pair of a text occurs (the first `MAX_PLACES` places)."""

    places: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, tokens: Sequence[str]) -> PairIndex:
        places: dict[tuple[str, str], list[int]] = {}
        for at in range(len(tokens) - 1):
            found = places.setdefault((tokens[at], tokens[at + 1]), [])
            if len(found) < MAX_PLACES:
                found.append(at)
        return cls(places)


def copied(tokens: Sequence[str], index: PairIndex, skip: int = SKIP, gap: int = GAP) -> set[int]:
    """The positions of `tokens` inside chains of at least `MIN_CHAIN` aligned pairs (with
    `skip` 0 and `gap` 1: word for word, a quote)."""
    chains: list[dict[int, tuple[int, int]]] = []  # per pair: place → (length, start pair)
    covered: set[int] = set()
    for i in range(len(tokens) - 1):
        here: dict[int, tuple[int, int]] = {}
        for place in index.places.get((tokens[i], tokens[i + 1]), ()):
            best = (1, i)
            for back in range(1, skip + 2):
                j = i - back
                if j < 0:
                    break
                for earlier, (length, start) in chains[j].items():
                    if 0 < place - earlier <= back + gap - 1 and length + 1 > best[0]:
                        best = (length + 1, start)
            here[place] = best
            if best[0] >= MIN_CHAIN:
                covered.update(range(best[1], i + 2))
        chains.append(here)
    return covered


def copied_share(
    tokens: Sequence[str], transcript: PairIndex, quoted: PairIndex | None = None
) -> float:
    """The share of `tokens` aligned with the transcript, less what quotes `quoted` word for
    word (the user's requests, which a summary may quote; re-typed with edits, they are
    a copy)."""
    if not tokens:
        return 0.0
    exact = copied(tokens, quoted, skip=0, gap=1) if quoted else set()
    found = copied(tokens, transcript) - exact
    return len(found) / len(tokens)
