"""A tokenizer whose counts anyone can check by eye: one token per whitespace-separated word."""

from __future__ import annotations

from collections.abc import Sequence


class WordTokenizer:
    @property
    def name(self) -> str:
        return "words"

    def count(self, text: str) -> int:
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]
