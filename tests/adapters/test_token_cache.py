from __future__ import annotations

from collections.abc import Sequence

import pytest

from app.adapters.token_cache import CachingTokenizer
from app.adapters.tokenizer import TiktokenTokenizer
from app.settings import Settings
from app.wiring.counting import build_tokenizer


class CountingFake:
    """Counts words and records every text it was asked to count."""

    name = "fake"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.seen.extend(texts)
        return [len(t.split()) for t in texts]


WORDS = 64


def long(word: str) -> str:
    return " ".join([word] * WORDS)


def test_cache_counts_the_same_as_the_tokenizer(tokenizer: TiktokenTokenizer) -> None:
    cached = CachingTokenizer(tokenizer, max_entries=10)
    texts = [long("alpha"), "short", long("beta <|endoftext|>"), long("alpha")]
    assert cached.count_batch(texts) == tokenizer.count_batch(texts)
    assert cached.count_batch(texts) == tokenizer.count_batch(texts)
    assert cached.count(texts[0]) == tokenizer.count(texts[0])
    assert cached.name == "tiktoken"


def test_cache_tokenizes_a_repeated_text_once() -> None:
    fake = CountingFake()
    cached = CachingTokenizer(fake, max_entries=10)
    assert cached.count_batch([long("a"), long("b")]) == [WORDS] * 2
    assert cached.count_batch([long("a"), long("b"), long("c")]) == [WORDS] * 3
    assert fake.seen == [long("a"), long("b"), long("c")]
    assert (cached.hits, cached.misses, len(cached)) == (2, 3, 3)


def test_cache_keeps_short_texts_too() -> None:
    fake = CountingFake()
    cached = CachingTokenizer(fake, max_entries=10)
    assert cached.count_batch(["hi there", "ok"]) == [2, 1]
    assert cached.count("hi there") == 2
    assert cached.count_batch(["ok", ""]) == [1, 0]
    assert fake.seen == ["hi there", "ok", ""]
    assert (cached.hits, cached.misses, len(cached)) == (2, 3, 3)


def test_cache_evicts_the_least_recently_used() -> None:
    fake = CountingFake()
    cached = CachingTokenizer(fake, max_entries=2)
    cached.count_batch([long("a"), long("b")])
    cached.count(long("a"))  # a is now more recent than b
    cached.count(long("c"))  # evicts b
    assert len(cached) == 2
    fake.seen.clear()
    cached.count_batch([long("a"), long("b"), long("c")])
    assert fake.seen == [long("b")]


def test_cache_needs_a_positive_size() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        CachingTokenizer(CountingFake(), max_entries=0)


def test_zero_entries_setting_disables_the_cache(tokenizer: TiktokenTokenizer) -> None:
    disabled = Settings(_env_file=None, token_cache_entries=0)  # type: ignore[call-arg]
    assert build_tokenizer(disabled, tokenizer) is tokenizer
    enabled = Settings(_env_file=None, token_cache_entries=7)  # type: ignore[call-arg]
    cached = build_tokenizer(enabled, tokenizer)
    assert isinstance(cached, CachingTokenizer)
    assert cached.max_entries == 7
