"""What every strategy starts from, and the answers that leave the input unchanged.

Shared by `app.service.compaction` (the front part and the `full` strategy) and the
strategy modules beside it, so that they need not import each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.compaction import CompactResult, NotCompactedReason
from app.core.decide import Thresholds
from app.core.dialects import Format
from app.core.errors import InvalidConversationError
from app.core.messages import Message
from app.core.partition import Partition
from app.core.validate import Violation

if TYPE_CHECKING:
    from app.service.compaction import CompactRequest


@dataclass(frozen=True)
class Prepared:
    """What every strategy starts from: the request, counted, decided and partitioned.
    `broken` are the input's violations; each strategy refuses those in what it keeps."""

    request: CompactRequest
    counts: tuple[int, ...]
    token_count: int
    partition: Partition
    thresholds: Thresholds
    broken: tuple[Violation, ...]

    @property
    def messages(self) -> Sequence[Message]:
        return self.request.messages

    @property
    def format(self) -> Format:
        return self.request.format

    def unchanged(
        self, reason: NotCompactedReason, warnings: Sequence[str] = (), strategy: str = ""
    ) -> CompactResult:
        return unchanged(
            self.messages,
            self.token_count,
            reason,
            warnings,
            fmt=self.format,
            strategy=strategy or self.request.options.strategy,
        )


def refuse(broken: Sequence[Violation]) -> None:
    if broken:
        raise InvalidConversationError(broken)


def refuse_from(prepared: Prepared, index: int) -> None:
    """A 422 for the input's violations at or after `index`: they would come back as sent."""
    refuse([v for v in prepared.broken if v.index >= index])


def unchanged(
    messages: Sequence[Message],
    token_count: int,
    reason: NotCompactedReason,
    warnings: Sequence[str] = (),
    *,
    fmt: Format = "anthropic",
    strategy: str = "full",
) -> CompactResult:
    return CompactResult(
        compacted=False,
        format=fmt,
        reason=reason,
        messages=list(messages),
        token_count=token_count,
        strategy=strategy,
        warnings=list(warnings),
    )
