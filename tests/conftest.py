from __future__ import annotations

import pytest

from app.adapters.tokenizer import TiktokenTokenizer


@pytest.fixture(scope="session")
def tokenizer() -> TiktokenTokenizer:
    """Loaded once: the encoding takes ~150 ms to build."""
    return TiktokenTokenizer()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
