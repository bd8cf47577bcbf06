from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from app.adapters.tokenizer import TiktokenTokenizer


@pytest.fixture(scope="session")
def tokenizer() -> TiktokenTokenizer:
    """Loaded once: the encoding is slow to build."""
    return TiktokenTokenizer()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """For tests that configure logging the way `python -m app` does: puts the root and
    uvicorn loggers back as they were."""
    loggers = [
        logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access")
    ]
    saved = [(list(lg.handlers), lg.level, lg.propagate) for lg in loggers]
    yield
    for logger, (handlers, level, propagate) in zip(loggers, saved, strict=True):
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate
