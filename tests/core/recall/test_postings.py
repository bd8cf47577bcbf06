"""Postings packed as bytes: what goes in comes out, in a few bytes a posting."""

from __future__ import annotations

import pytest

from app.core.recall.postings import (
    PostingsError,
    decode_postings,
    encode_postings,
    postings_by_word,
)
from app.core.recall.terms import WordStat


def test_postings_come_back_as_written_gaps_and_large_numbers_included() -> None:
    postings = [(0, WordStat(1, 0)), (3, WordStat(200, 127)), (70_000, WordStat(2, 10**9))]
    data = encode_postings(postings)
    assert decode_postings(data) == postings
    assert data[:6] == bytes([0, 1, 0, 3, 0xC8, 0x01])  # gaps, LEB128


def test_a_posting_of_small_numbers_takes_three_bytes() -> None:
    assert len(encode_postings([(n, WordStat(1, 5)) for n in range(100)])) == 300


def test_postings_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="ascending"):
        encode_postings([(2, WordStat(1, 0)), (1, WordStat(1, 0))])


@pytest.mark.parametrize("data", [b"\x80", b"\x01\x01", bytes([0, 1, 0, 0x81])])
def test_bytes_cut_short_are_not_postings(data: bytes) -> None:
    with pytest.raises(PostingsError):
        decode_postings(data)


def test_each_word_gets_the_messages_that_hold_it_with_count_and_first_offset() -> None:
    found = postings_by_word([(0, "Fix the bug"), (2, "the bug, the fix")])
    assert found == {
        "fix": [(0, WordStat(1, 0)), (2, WordStat(1, 13))],
        "the": [(0, WordStat(1, 4)), (2, WordStat(2, 0))],
        "bug": [(0, WordStat(1, 8)), (2, WordStat(1, 4))],
    }
