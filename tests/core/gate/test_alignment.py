"""Copies found by approximate alignment: a word inserted or dropped every few words still
aligns; a summary in its own words does not."""

from __future__ import annotations

from app.core.gate.alignment import PairIndex, copied_share
from app.core.gate.overlap import words

TRANSCRIPT = words(
    "The parser reads the configuration file first, then it validates every section against "
    "the schema, and when a section is missing it falls back to the defaults that ship with "
    "the package, logging a warning for each one it had to fill in."
)
INDEX = PairIndex.of(TRANSCRIPT)


def test_a_retyped_transcript_with_words_inserted_is_a_copy() -> None:
    retyped = list(TRANSCRIPT)
    for at in range(len(retyped) - 3, 0, -4):
        retyped.insert(at, "really")
    assert copied_share(retyped, INDEX) > 0.9


def test_a_retyped_transcript_with_words_dropped_is_a_copy() -> None:
    dropped = [w for i, w in enumerate(TRANSCRIPT) if i % 4 != 3]
    assert copied_share(dropped, INDEX) > 0.9


def test_a_summary_in_its_own_words_is_no_copy() -> None:
    summary = words("Config loading validates sections and fills missing ones from defaults.")
    assert copied_share(summary, INDEX) == 0.0


def test_a_word_for_word_quote_of_what_may_be_quoted_does_not_count() -> None:
    assert copied_share(TRANSCRIPT, INDEX, quoted=INDEX) == 0.0
