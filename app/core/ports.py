"""What the core needs from the outside world, as small protocols.

Adapters in `app.adapters` implement them; tests implement them with plain callables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from app.core.history import ExtractedFacts
from app.core.messages import Message
from app.core.recall import Query, RecallResult, TimeLeft


class Tokenizer(Protocol):
    """Counts tokens of text. Pure CPU work: callers run it off the event loop."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...


# `sections`: the five sections of a summary (`full`); `archived`: the archive template (`tail`).
SummaryTemplate = Literal["sections", "archived", "digest"]


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
    file_tools: tuple[str, ...] = ()  # `tool.field:kind` specs beside the built-in ones
    # `messages`' facts (`extract_facts` with `file_tools`) when the service read them
    # already: the extractive summarizer renders them instead of reading them again.
    facts: ExtractedFacts | None = None
    # The digest path asks one question per section: the answer is the body of the section
    # of this title (judged under its heading; the other headings are the service's).
    section: str | None = None


class Summarizer(Protocol):
    """Produces summary text; raises `SummarizerError` on failure (empty text included).

    `reads_prompt` is false for a summarizer that reads `messages` instead of `prompt` (the
    extractive one): the service then builds no prompt and never chunks its input.
    `aclose` releases its HTTP client (a no-op for one without)."""

    @property
    def name(self) -> str: ...

    @property
    def reads_prompt(self) -> bool: ...

    async def summarize(self, request: SummaryRequest) -> str: ...

    async def aclose(self) -> None: ...


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
    """A file read from the work directory. `mtime_ns` comes from `fstat` on the descriptor
    that was read (no race with a rename), `location` is the normalised path beneath the
    root (`src/a.py` for `./src/a.py` or `/workspace/src/a.py`); readers that cannot tell
    leave them None. Neither takes part in equality: a file is its path and text."""

    path: str
    text: str
    mtime_ns: int | None = field(default=None, compare=False)
    location: str | None = field(default=None, compare=False)


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
class FileInfo:
    """What `stat` found beneath the work directory: the normalised location, whether it
    is a regular file or a directory, and its modification time in nanoseconds."""

    path: str
    location: str
    kind: Literal["file", "directory", "other"]
    mtime_ns: int
    size: int


class WorkdirInspector(Protocol):
    """Looks at the work directory without reading file content, through the same sandbox
    as `WorkdirReader` (a path that one refuses, this one refuses with the same reason)."""

    def stat(self, path: str) -> FileInfo | FileSkip: ...

    def names(self, path: str) -> tuple[str, ...] | FileSkip:
        """The entry names of a directory beneath the root, sorted."""
        ...


class SeenStore(Protocol):
    """Per session, the modification time of each file when it was last read, so a
    changed file gets a note. Durable and shared by replicas; raises `SeenStoreError` on
    I/O failure."""

    def last_seen(self, session_id: str, location: str) -> int | None: ...

    def remember(self, session_id: str, location: str, mtime_ns: int) -> None: ...


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

    def delete(self, archive_id: str) -> None:
        """Removes an archive whose compaction was refused; raises `ArchiveError`."""
        ...

    def writable(self) -> bool: ...

    def search(
        self, session_id: str, query: Query, limit: int, time_left: TimeLeft
    ) -> RecallResult:
        """The best `limit` matches of `query` among the archives saved with this
        `session_id` and no other, ranked by `app.core.recall.rank.rank` from the store's
        word index (never by reading whole archives). A session with no archives has none;
        raises `ArchiveError` when the index cannot be read, `RecallDeadlineError` once
        `time_left()` is not positive (checked as the work goes)."""
        ...


@runtime_checkable
class ExplainsReadiness(Protocol):
    """A store that can say why it cannot work (the database store: unreachable, a
    timeout). `/readyz` reports it under `check_name` instead of `data_dir_writable`."""

    check_name: str

    def unavailable_reason(self) -> str | None: ...


class SummarizerProbe(Protocol):
    """Whether the LLM summarizer's server answers (`/readyz`): None when it does, else
    why not. Cheap: an answer is reused for a few seconds."""

    async def unreachable_reason(self) -> str | None: ...

    async def aclose(self) -> None: ...


class WindowSource(Protocol):
    """The LLM server's context window when it reports one (llama.cpp `/props`, vLLM
    `max_model_len`, Ollama's `num_ctx`) or one is configured, else None; and its tokens
    per cl100k token when it can count them (`app.core.summary.server_ratio`), else None.
    Asked once a summary, answered from a cache."""

    async def window(self) -> int | None: ...

    async def ratio(self) -> float | None: ...


class ProviderCounter(Protocol):
    """A provider's own token count of a conversation (its system prompt included).
    Raises `CountError` on any failure; the caller then counts locally."""

    @property
    def name(self) -> str: ...

    async def count_tokens(self, messages: Sequence[Message]) -> int: ...

    async def aclose(self) -> None: ...


class DataDirectory(Protocol):
    """The data directory as a whole: room left on its file system, and crash debris."""

    def has_room(self) -> bool:
        """At least the configured minimum of free bytes."""
        ...

    def sweep_temps(self) -> list[str]:
        """Deletes stale temp files of killed writers beneath it; the paths removed."""
        ...
