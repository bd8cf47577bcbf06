"""What the service answers besides a compaction: a count, a threshold decision, a hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.decide import Decision
from app.core.result import RefillingMessage
from app.core.sessions import Hold


@dataclass(frozen=True)
class Held:
    """A hold on a context and, when thrashing, the messages that refill it."""

    hold: Hold
    refilling: tuple[RefillingMessage, ...]


@dataclass(frozen=True)
class HoldCheck:
    """The session's hold on a context (None: none), and the warnings of looking for it."""

    held: Held | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Count:
    """A token count, who made it, and whether it is exact."""

    token_count: int
    tokenizer: str
    exact: bool = True
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judged:
    """A threshold decision, where its count came from, and the count when one was made."""

    decision: Decision
    source: Literal["counted", "last_usage"]
    counted: Count | None
