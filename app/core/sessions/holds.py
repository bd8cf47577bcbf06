"""When a session's context should not be compacted again yet, derived from its records.

Two holds, each read from the session's compaction records (never kept in memory, so
replicas sharing the data directory agree) and applied alike by `/should-compact` and
`/compact` (a forced `/compact` ignores them):

- `no_gain`: the last attempt on this context was refused because no strategy made it
  smaller and under the threshold. The same context plus a few tokens would be refused
  again; it is worth another attempt once it grew by `REFUSAL_GROWTH_SHARE` of the
  threshold tokens, or once it no longer continues the refused context.
- `thrashing`: the context refilled to the threshold within `THRASH_TURNS` turns of the
  previous compaction `THRASH_TIMES` times in a row (Claude Code's own rule). Compacting
  again would only buy another few turns; the hold names the largest messages since the
  last compaction (what refills it) and lasts until the context changes shape (it no
  longer continues the last compaction's output, or the one the hold was recorded for).
  It never holds a context at or over the overflow threshold: a context the model cannot
  take is worse than a compaction that will not last, so it is compacted anyway (the
  hold comes back `overflowing`, for the caller to warn with).

A turn is an assistant message and the answer to it: two canonical messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from app.core.messages import Message, ToolResultBlock, tool_uses
from app.core.sessions.records import CompactionRecord

REFUSAL_GROWTH_SHARE = 0.1
THRASH_TURNS = 3
THRASH_TIMES = 3
MESSAGES_PER_TURN = 2
REFILLING_SHOWN = 3

IdAt = Callable[[int], str | None]
"""The id (`app.core.sessions.records.message_id`) of the request's message at an index, or None
past its end."""


@dataclass(frozen=True)
class Refill:
    index: int
    role: str
    tool_name: str | None
    token_count: int


@dataclass(frozen=True)
class Hold:
    reason: Literal["no_gain", "thrashing"]
    detail: str
    retry_at_tokens: int | None = None
    fresh: bool = False
    """Found now, not read from an earlier refusal: a `/compact` records it."""
    overflowing: bool = False
    """Thrashing, but the context reached the overflow threshold: not a hold, a warning."""


def continues(record: CompactionRecord, message_count: int, id_at: IdAt) -> bool:
    """Whether the request still holds the context the record left, as its prefix."""
    end = record.message_count_after
    if record.context_end_id is None or end < 1 or message_count < end:
        return False
    return id_at(end - 1) == record.context_end_id


def session_hold(
    records: Sequence[CompactionRecord],
    message_count: int,
    token_count: int,
    threshold_tokens: int,
    id_at: IdAt,
    overflow_tokens: int | None = None,
) -> Hold | None:
    """The hold on this context, if any (only asked about a context over the threshold).
    At `overflow_tokens` or more a thrash is reported `overflowing` instead of held."""
    overflowing = overflow_tokens is not None and token_count >= overflow_tokens
    ordered = sorted(records, key=lambda r: r.id)
    if not ordered:
        return None
    last = ordered[-1]
    if last.outcome == "no_gain" and continues(last, message_count, id_at):
        growth = max(1, math.ceil(threshold_tokens * REFUSAL_GROWTH_SHARE))
        retry_at = last.tokens_before + growth
        if token_count < retry_at:
            return Hold(
                "no_gain",
                f"compacting this context was refused at {last.tokens_before} tokens: no "
                f"strategy made it smaller and under the threshold of {threshold_tokens}; "
                f"worth another attempt at {retry_at} tokens or once the context changes",
                retry_at_tokens=retry_at,
            )
    if last.outcome == "thrashing" and continues(last, message_count, id_at):
        return Hold("thrashing", _thrash_detail(last.message_count_before), overflowing=overflowing)
    compacted = [r for r in ordered if r.outcome == "compacted"]
    if not compacted or not continues(compacted[-1], message_count, id_at):
        return None
    gaps = [message_count - compacted[-1].message_count_after]
    for before, after in zip(compacted[-2::-1], compacted[:0:-1], strict=False):
        gaps.append(after.message_count_before - before.message_count_after)
    quick = 0
    for gap in gaps:
        if gap > THRASH_TURNS * MESSAGES_PER_TURN:
            break
        quick += 1
    if quick < THRASH_TIMES:
        return None
    return Hold(
        "thrashing",
        _thrash_detail(compacted[-1].message_count_after),
        fresh=not overflowing,
        overflowing=overflowing,
    )


def overflow_warning(hold: Hold) -> str:
    """What an answer says when a thrash did not hold because the context overflows."""
    return f"thrashing, compacted anyway at the overflow threshold: {hold.detail}"


def _thrash_detail(since: int) -> str:
    return (
        f"the context refilled to the threshold within {THRASH_TURNS} turns of the previous "
        f"compaction {THRASH_TIMES} times in a row: compacting again would not last; the "
        f"largest messages since message {since} are in `refilling`. Compaction resumes once "
        "the context changes (the agent drops or shortens them, or starts over)"
    )


def refilling(
    messages: Sequence[Message], counts: Sequence[int], since: int, shown: int = REFILLING_SHOWN
) -> tuple[Refill, ...]:
    """The largest messages from index `since` on, largest first (ties: most recent)."""
    names: dict[str, str] = {}
    found: list[Refill] = []
    for index in range(min(since, len(messages)), len(messages)):
        message = messages[index]
        calls = list(tool_uses(message))
        for call in calls:
            names[call.id] = call.name
        tool: str | None = calls[0].name if calls else None
        if tool is None and not isinstance(message.content, str):
            results = [b for b in message.content if isinstance(b, ToolResultBlock)]
            tool = names.get(results[0].tool_use_id) if results else None
        found.append(Refill(index, message.role, tool, counts[index]))
    found.sort(key=lambda r: (-r.token_count, -r.index))
    return tuple(found[:shown])
