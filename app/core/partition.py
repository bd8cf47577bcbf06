"""Split a message list into head (the leading system messages) and rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.messages import Message


@dataclass(frozen=True)
class Partition:
    head: tuple[Message, ...]
    rest: tuple[Message, ...]


def partition_messages(messages: Sequence[Message]) -> Partition:
    """Head is the leading run of `system` messages; rest is everything after it.

    No system message gives an empty head; only system messages give an empty rest (and
    nothing to compact).
    """
    split = 0
    while split < len(messages) and messages[split].role == "system":
        split += 1
    return Partition(head=tuple(messages[:split]), rest=tuple(messages[split:]))
