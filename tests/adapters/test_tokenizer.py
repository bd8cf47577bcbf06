from __future__ import annotations

import pytest

from app.adapters.tokenizer import TiktokenTokenizer, _split


def test_large_batches_count_the_same_in_every_lane_and_in_one_call(
    tokenizer: TiktokenTokenizer,
) -> None:
    texts = [f"message {i}: <|endoftext|> déjà vu " * (i % 40 + 1) for i in range(400)]
    assert sum(len(t) for t in texts) > 20_000
    one_lane = TiktokenTokenizer(lanes=1)
    expected = [tokenizer.count(t) for t in texts]
    assert tokenizer.count_batch(texts) == expected
    assert one_lane.count_batch(texts) == expected
    assert tokenizer.count_batch(texts[:3]) == expected[:3]


def test_split_keeps_order_and_balances_characters() -> None:
    texts = ["a" * n for n in (5, 5, 5, 5, 10, 10)]
    runs = _split(texts, 2)
    assert [t for run in runs for t in run] == texts
    assert [sum(map(len, run)) for run in runs] == [20, 20]
    assert _split(["x" * 100], 2) == [["x" * 100], []]
    assert _split(texts, 1) == [texts]


def test_lanes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="lanes"):
        TiktokenTokenizer(lanes=0)
