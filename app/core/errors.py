"""Errors the core and its ports speak.

    CompactError
    ├── SummarizerError      a summary could not be produced (retryable or not)
    └── ArchiveError         the archive could not be written or read

Adapters translate library errors (anthropic, httpx, OSError) into these at the boundary,
so the service decides outcomes from our own types, never from a library's message text.
"""

from __future__ import annotations


class CompactError(Exception):
    """Base of every error the pipeline handles on purpose."""


class SummarizerError(CompactError):
    """The summarizer failed. `retryable` says whether another attempt may succeed
    (timeouts, 429, 5xx, connection errors); `retry_after` carries the server's hint."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class ArchiveError(CompactError):
    """The archive store failed; nothing may be compacted without an archive."""
