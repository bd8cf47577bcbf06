from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

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


_OWN_STEPS = ("fuzz", "browser")  # collected only when a `-m` expression asks for them


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The schema fuzzer and the browser test run as CI steps of their own (`-m fuzz`,
    `-m browser`); any other run leaves their folders uncollected, since importing the
    fuzzer builds its whole schema coverage (a large share of a plain run's collection)."""
    if collection_path.parent != Path(__file__).parent or collection_path.name not in _OWN_STEPS:
        return None
    expression = str(config.getoption("markexpr") or "")
    return collection_path.name not in expression.replace(f"not {collection_path.name}", "")
