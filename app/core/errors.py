"""Errors the core and its ports speak.

    CompactError
    ├── SummarizerError      a summary could not be produced (retryable or not)
    ├── ArchiveError         the archive could not be written, read or removed
    ├── RecordStoreError     a session's compaction records could not be written or read
    ├── InvalidConversationError  the input breaks a provider rule in a part we would return
    ├── CountError           the provider could not count (callers fall back to local)
    ├── InvalidOutputError   a strategy built output that breaks a provider rule (a bug:
    │                        the pipeline refuses that output instead of returning it)
    ├── SeenStoreError       a session's last-seen file times could not be read or written
    ├── RecallDeadlineError  a recall ran past its request's deadline
    ├── InvalidRequestError  a request's values do not fit together (names the field)
    ├── JobStoreError        (app.core.sessions.jobs) a background job could not be stored or read
    ├── BusyError            (app.service.slots) every summary slot stayed busy
    ├── RecallBusyError      (app.service.recall) every recall slot stayed taken
    ├── JobError             (app.service.jobs) a job request cannot be served as asked
    └── ApiError             (app.api.errors) a request the API refuses before the service

Adapters translate library errors (anthropic, httpx, OSError) into these at the boundary,
so the service decides outcomes from our own types, never from a library's message text.

Each error that may reach a route carries its HTTP answer: `status`, `code`, the `field` it
names, its `details` and a `retry_after_seconds`; one handler (`app.api.errors`) turns any
of them into the error body, so routes catch none. `status` None: not meant to reach a
route (the service answers it), so one that does is an internal error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.provider import Violation


class CompactError(Exception):
    """Base of every error the pipeline handles on purpose."""

    status: int | None = None
    code: str = "internal_error"
    field: str | None = None
    retry_after_seconds: int | None = None

    @property
    def message(self) -> str:
        """The error body's `message`."""
        return str(self)

    def details(self) -> list[tuple[str, str]]:
        """The error body's `details`: (field, message) pairs; the field's, if named."""
        return [(self.field, self.message)] if self.field else []


class InvalidRequestError(CompactError):
    """A request's values that each pass their own checks but not together (422)."""

    status = 422
    code = "invalid_request"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class SummarizerError(CompactError):
    """The summarizer failed. `retryable` says whether another attempt may succeed
    (timeouts, 429, 5xx, connection errors); `retry_after` carries the server's hint;
    `reason` is one word of a closed vocabulary (`SUMMARY_FAILURES` in
    `app.core.summary.reasons`) for metrics and the answer's warning, which then reads
    `[reason] message`. Without one (a test's fake) the message is shown alone."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        reason: str | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.reason = reason

    def __str__(self) -> str:
        message = super().__str__()
        return f"[{self.reason}] {message}" if self.reason else message


class ArchiveError(CompactError):
    """The archive store failed; nothing may be compacted without an archive (the service
    answers that itself), and an archive asked for cannot be read (503)."""

    status = 503
    code = "archive_unreadable"


class RecallDeadlineError(CompactError):
    """A recall ran out of time; the store stopped its work where it noticed (504)."""

    status = 504
    code = "deadline_exceeded"


class RecordStoreError(CompactError):
    """The record store failed; the compaction stands, the caller gets a warning; records
    asked for cannot be read (503)."""

    status = 503
    code = "records_unreadable"


class InvalidConversationError(CompactError):
    """The conversation breaks a provider rule (`app.core.provider.rules`) in a part of it that
    would be returned as it is; `violations` name each rule and message index (422, one
    detail per broken rule)."""

    status = 422
    code = "invalid_conversation"

    def __init__(self, violations: Sequence[Violation], head: int = 0) -> None:
        super().__init__("; ".join(f"messages[{v.index}] {v}" for v in violations))
        self.violations = tuple(violations)
        self.head = head

    def sent_with(self, head: int) -> InvalidConversationError:
        """The same error for a request whose first `head` canonical messages were read from
        its top-level `system`: a detail names `messages[i]` as sent, or `system`."""
        return InvalidConversationError(self.violations, head)

    @property
    def message(self) -> str:
        return "; ".join(f"{field}: {text}" for field, text in self.details()[:5])

    def details(self) -> list[tuple[str, str]]:
        head = self.head
        return [
            (f"messages[{v.index - head}]" if v.index >= head else "system", str(v))
            for v in self.violations
        ]


class InvalidOutputError(CompactError):
    """A strategy's output breaks a provider rule. Every strategy builds valid output, so
    this is a bug; the pipeline answers with the input unchanged rather than return it."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        super().__init__("; ".join(f"messages[{v.index}] {v}" for v in violations))
        self.violations = tuple(violations)


class CountError(CompactError):
    """A provider's token counting failed (no key, network, status, unexpected body)."""


class SeenStoreError(CompactError):
    """The freshness store failed; the caller answers without the note, with a warning."""
