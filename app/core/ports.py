"""What the core needs from the outside world, as small protocols (seed 001 §2.3).

Adapters in `app.adapters` implement them; tests implement them with plain callables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Protocol

from app.core.messages import Message


class Tokenizer(Protocol):
    """Counts tokens of text. Pure CPU work: callers run it off the event loop."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...


# `sections`: seed 000's five sections (`full`); `archived`: seed 004 A5's template (`tail`).
SummaryTemplate = Literal["sections", "archived"]


@dataclass(frozen=True)
class SummaryRequest:
    """Everything a summarizer may use: LLMs read `prompt`, the extractive one `messages`
    and `template`."""

    messages: tuple[Message, ...]
    system: str
    prompt: str
    max_words: int
    instructions: str | None = None
    template: SummaryTemplate = "sections"


class Summarizer(Protocol):
    """Produces summary text; raises `SummarizerError` on failure (empty text included)."""

    @property
    def name(self) -> str: ...

    async def summarize(self, request: SummaryRequest) -> str: ...


class SkipReason(StrEnum):
    """Why a file named in the history was not restored (every skip is reported)."""

    INVALID_PATH = "invalid_path"
    OUTSIDE_WORKDIR = "outside_workdir"
    NOT_FOUND = "not_found"
    NOT_REGULAR_FILE = "not_regular_file"
    UNREADABLE = "unreadable"
    NOT_UTF8 = "not_utf8"
    TOO_LARGE = "too_large"
    TOO_MANY_TOKENS = "too_many_tokens"
    TOTAL_LIMIT_REACHED = "total_limit_reached"


@dataclass(frozen=True)
class FileText:
    """A file read from the work directory."""

    path: str
    text: str


@dataclass(frozen=True)
class FileSkip:
    """A file that could not be read, and why."""

    path: str
    reason: SkipReason


class WorkdirReader(Protocol):
    """Reads text files beneath the work directory and nowhere else.

    `path` is the path as the agent wrote it. A file larger than `max_bytes` is a
    `TOO_LARGE` skip decided before any content is read.
    """

    def read_text(self, path: str, max_bytes: int) -> FileText | FileSkip: ...

    def readable(self) -> bool: ...


@dataclass(frozen=True)
class ArchiveRef:
    """Where the archived originals of one compaction live."""

    id: str
    session_id: str | None
    message_count: int
    sha256: str


@dataclass(frozen=True)
class Archive:
    """One archive as stored: the reference, when, and the messages as JSON."""

    ref: ArchiveRef
    created_at: str
    messages: list[dict[str, Any]]


class ArchiveStore(Protocol):
    """Durable storage for archived messages. `save` returns only once the archive is on
    disk under its final name (atomic); it raises `ArchiveError` otherwise."""

    def save(self, archive: Archive) -> None: ...

    def load(self, archive_id: str) -> Archive | None: ...

    def writable(self) -> bool: ...


class ProviderCounter(Protocol):
    """A provider's own token count of a conversation (its system prompt included).
    Raises `CountError` on any failure; the caller then counts locally."""

    @property
    def name(self) -> str: ...

    async def count_tokens(self, messages: Sequence[Message]) -> int: ...
