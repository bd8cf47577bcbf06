from __future__ import annotations

import gzip
import hashlib
import warnings
from pathlib import Path
from typing import Any

import pytest

from app.adapters.o200k_tokenizer import (
    O200K_SHA256,
    O200kTokenizer,
    bundled_o200k_path,
    load_ranks,
)
from app.adapters.tokenizer import TiktokenTokenizer, TokenizerLoadError
from app.core.provider.dialects import parse_messages
from app.core.tokens import count_text
from tests.corpus import ANTHROPIC_FILES, load


@pytest.fixture(scope="module")
def o200k() -> O200kTokenizer:
    return O200kTokenizer(lanes=1)


def _reference() -> Any:
    """bpe-openai's own o200k engine (its import warns of a deprecated importlib call)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in ANTHROPIC_FILES:
        texts += [count_text(m)[0] for m in parse_messages(load(path), "anthropic")]
    return texts


def test_the_bundled_o200k_file_is_the_official_one() -> None:
    with gzip.open(bundled_o200k_path(), "rb") as file:
        assert hashlib.sha256(file.read()).hexdigest() == O200K_SHA256
    assert len(load_ranks(bundled_o200k_path())) == 199998


@pytest.mark.slow
def test_o200k_counts_equal_an_independent_implementation_on_the_corpus(
    o200k: O200kTokenizer,
) -> None:
    reference = _reference()
    texts = _corpus_texts()
    assert len(texts) > 200
    assert o200k.count_batch(texts) == [len(reference.encode_ordinary(t)) for t in texts]


def test_o200k_is_not_cl100k(o200k: O200kTokenizer, tokenizer: TiktokenTokenizer) -> None:
    texts = _corpus_texts()[:200]
    assert o200k.count_batch(texts) != tokenizer.count_batch(texts)
    assert o200k.name == "o200k"


@pytest.mark.slow  # builds tiktoken's own o200k encoding to compare with
def test_o200k_counts_a_literal_special_token_as_text(o200k: O200kTokenizer) -> None:
    assert o200k.count("a <|endoftext|> b") == len(
        _reference().encode_ordinary("a <|endoftext|> b")
    )


@pytest.mark.slow
def test_a_tampered_o200k_file_fails_start_up(tmp_path: Path) -> None:
    original = gzip.decompress(Path(bundled_o200k_path()).read_bytes())
    tampered = tmp_path / "o200k_base.tiktoken.gz"
    tampered.write_bytes(gzip.compress(original.replace(b"IQ== 0", b"IQ== 1", 1)))
    with pytest.raises(TokenizerLoadError, match="not the official"):
        O200kTokenizer(bundle=str(tampered))


def test_a_missing_o200k_file_fails_start_up(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="cannot read the bundled encoding"):
        O200kTokenizer(bundle=str(tmp_path / "absent.gz"))
