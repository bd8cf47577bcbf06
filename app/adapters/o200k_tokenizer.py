"""OpenAI's o200k_base (gpt-4o, gpt-4.1, o1, o3, o4, gpt-5), loaded offline and verified.

The encoding file ships with the package (`data/o200k_base.tiktoken.gz`, OpenAI's published
file, gzipped as the `bpe-openai` package ships it; 1.7 MB where that package's wheel is
74 MB); nothing is downloaded. As for cl100k, the adapter hashes the
decompressed file against OpenAI's official sha256 (tiktoken's own `expected_hash`) before
loading it, then checks a known encoding: a swapped or truncated file fails start-up
instead of producing wrong counts. The counting engine is tiktoken itself, the reference,
with o200k's split pattern as tiktoken defines it; `bpe-openai`'s own engine serves the
tests as an independent second implementation that must agree on the corpus.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Callable, Sequence

import tiktoken

from app.adapters.tokenizer import (
    LANES,
    LanedTokenizer,
    TokenizerLoadError,
    check_digest,
    parse_ranks,
)
from app.core.ports import Tokenizer

# The official sha256 of o200k_base.tiktoken (tiktoken's own `expected_hash` for it).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_BUNDLE_FILE = ("data", "o200k_base.tiktoken.gz")
# tiktoken_ext/openai_public.py, `o200k_base`: the pattern and special tokens.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
_PROBE = ("hello world", [24912, 2375])


class O200kTokenizer(LanedTokenizer):
    """Exact o200k_base counts."""

    def __init__(self, lanes: int = LANES, bundle: str | None = None) -> None:
        if lanes < 1:
            raise ValueError("lanes must be at least 1")
        ranks = load_ranks(bundle or bundled_o200k_path())
        encoding = tiktoken.Encoding(
            name="o200k_base",
            pat_str=O200K_PATTERN,
            mergeable_ranks=ranks,
            special_tokens=_SPECIAL_TOKENS,
        )
        super().__init__(encoding, "o200k", _PROBE, lanes)


class LazyTokenizer:
    """A tokenizer loaded on first use: the command line counts with cl100k alone and
    should not pay for loading o200k; the server loads it at start-up (`load`)."""

    def __init__(self, name: str, load: Callable[[], Tokenizer]) -> None:
        self._name = name
        self.load = load

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return self.load().count(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return self.load().count_batch(texts)


def bundled_o200k_path() -> str:
    """Where the package keeps o200k_base.tiktoken.gz."""
    return os.path.join(os.path.dirname(__file__), *_BUNDLE_FILE)


def load_ranks(path: str) -> dict[bytes, int]:
    """The mergeable ranks of the gzipped file at `path`, once its content is verified."""
    try:
        with gzip.open(path, "rb") as file:
            data = file.read()
    except (OSError, EOFError) as exc:
        raise TokenizerLoadError(f"cannot read the bundled encoding {path}: {exc}") from exc
    check_digest(path, hashlib.sha256(data).hexdigest(), O200K_SHA256)
    return parse_ranks(data)
