"""The session's side of a compaction: before it, the strategy the session's records allow;
after it, the record appended.

The state is read from the records (`app.core.sessions.records`) on every compaction of a session,
never kept in memory, so replicas sharing the data directory agree.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from anyio import to_thread

from app.core.decide import Thresholds
from app.core.errors import RecordStoreError
from app.core.messages import Message, message_text
from app.core.options import RunParams
from app.core.result import CompactResult, RefillingMessage
from app.core.sessions import (
    RECORDED_FAILURES,
    CompactionRecord,
    Hold,
    IdAt,
    RecordStore,
    Refill,
    cooldown_end,
    message_id,
    overflow_warning,
    refilling,
    session_hold,
    successful_compactions,
)
from app.core.vocabulary import StrategyName
from app.service.clock import time_sortable_id
from app.service.defaults import Defaults
from app.service.prepared import Prepared
from app.service.registry import STRATEGIES

log = logging.getLogger("context_compact.sessions")


@dataclass(frozen=True)
class Declined:
    """The answer without a compaction; `record`: whether the session records it."""

    result: CompactResult
    record: bool = False


@dataclass
class Admitted:
    """The strategy the session allows, and the warnings that say why it changed."""

    strategy: StrategyName
    warnings: list[str] = field(default_factory=list)
    cooling_down: bool = False


async def session_gate(
    records: RecordStore | None, defaults: Defaults, now: datetime, prepared: Prepared
) -> Admitted | Declined:
    """The strategy to run, per the session's records: none past `max_iterations`, none
    while a hold is on the context (`app.core.sessions.holds`; a forced request ignores it);
    `prune` instead of a summarizing strategy during the cooldown after a failed summary."""
    request = prepared.request
    admitted = Admitted(request.options.strategy)
    limit = prepared.params(RunParams).max_iterations
    cooldown = defaults.summary_cooldown_seconds
    summarizing = STRATEGIES[admitted.strategy].summarizes
    if request.session_id is None or records is None:
        return admitted
    try:
        past = await to_thread.run_sync(records.list, request.session_id)
    except RecordStoreError as exc:
        admitted.warnings.append(f"session records unreadable, limits not applied: {exc}")
        return admitted
    done = successful_compactions(past)
    if limit and done >= limit:
        return Declined(
            prepared.unchanged(
                "max_iterations",
                [
                    f"session {request.session_id} has reached max_iterations: "
                    f"{done} compactions of {limit} allowed"
                ],
            )
        )
    if not request.force:
        hold, notes = context_hold(
            past, prepared.messages, prepared.decided_tokens, prepared.thresholds
        )
        admitted.warnings.extend(notes)
        if hold is not None:
            return Declined(held(prepared, hold, past), record=hold.fresh)
    end = cooldown_end(past, cooldown, now) if summarizing else None
    if end is not None:
        admitted.warnings.append(
            f"summaries are cooling down until {end.isoformat()} after a failed summary "
            f"in this session: ran prune instead of {admitted.strategy}"
        )
        admitted.strategy = "prune"
        admitted.cooling_down = True
    return admitted


def context_hold(
    past: Sequence[CompactionRecord],
    messages: Sequence[Message],
    token_count: int,
    thresholds: Thresholds,
) -> tuple[Hold | None, tuple[str, ...]]:
    """The hold the session's records put on this context, for `/compact` and
    `/should-compact` alike, and its warnings: a thrash at the overflow threshold is a
    warning, not a hold."""
    hold = session_hold(
        past,
        len(messages),
        token_count,
        thresholds.threshold_tokens,
        message_id_at(messages),
        thresholds.overflow_tokens,
    )
    if hold is not None and hold.overflowing:
        return None, (overflow_warning(hold),)
    return hold, ()


def message_id_at(messages: Sequence[Message]) -> IdAt:
    def id_at(index: int) -> str | None:
        return message_id(messages[index]) if 0 <= index < len(messages) else None

    return id_at


def held(prepared: Prepared, hold: Hold, past: Sequence[CompactionRecord]) -> CompactResult:
    """The input unchanged under a hold, with what refills the context when thrashing."""
    result = prepared.unchanged(hold.reason, [hold.detail])
    if hold.reason != "thrashing":
        return result.model_copy(update={"retry_at_tokens": hold.retry_at_tokens})
    since = last_output_end(past)
    refills = refilling(prepared.messages, prepared.counts, since)
    return result.model_copy(update={"refilling": [refill_info(r) for r in refills]})


def last_output_end(past: Sequence[CompactionRecord]) -> int:
    """Where the messages added since the session's last compaction start."""
    compacted = [r for r in sorted(past, key=lambda r: r.id) if r.outcome == "compacted"]
    return compacted[-1].message_count_after if compacted else 0


def refill_info(refill: Refill) -> RefillingMessage:
    return RefillingMessage(
        index=refill.index,
        role=refill.role,
        tool_name=refill.tool_name,
        token_count=refill.token_count,
    )


async def record(
    records: RecordStore | None, now: datetime, prepared: Prepared, result: CompactResult
) -> CompactResult:
    """Appends the session's record of an attempted compaction (see `app.core.sessions.records`).
    A record that cannot be written costs a warning, never the compaction."""
    request = prepared.request
    recorded = result.compacted or result.reason in RECORDED_FAILURES
    if request.session_id is None or records is None or not recorded:
        return result
    messages = prepared.messages
    summary_message = _summary_message(result, len(prepared.partition.head))
    entry = CompactionRecord(
        id=time_sortable_id(),
        session_id=request.session_id,
        timestamp=now.isoformat(),
        reason=request.record_reason,
        strategy=result.strategy,
        outcome="compacted" if result.compacted else str(result.reason),
        message_count_before=len(messages),
        message_count_after=len(result.messages),
        tokens_before=prepared.decided_tokens,
        tokens_after=result.stats.compacted_token_count if result.stats else result.token_count,
        compacted_message_ids=[message_id(messages[i]) for i in result.compacted_indexes],
        summary_message_id=message_id(summary_message) if summary_message else None,
        archive_id=result.archive.id if result.archive else None,
        context_end_id=message_id((result.messages or list(messages))[-1]) if messages else None,
        summarizer_cost=result.summarizer_cost,
        warnings=result.warnings,
    )
    try:
        await to_thread.run_sync(records.append, entry)
    except RecordStoreError as exc:
        log.error("compaction record not written", extra={"error": str(exc)})
        warning = f"compaction record not written: {exc}"
        return result.model_copy(update={"warnings": [*result.warnings, warning]})
    return result


def _summary_message(result: CompactResult, head: int) -> Message | None:
    """The message of the output that carries the summary: right after the head for `full`
    and `tail`, after the kept memory messages for `selective`."""
    if result.summary is None:
        return None
    return next((m for m in result.messages[head:] if result.summary in message_text(m)), None)
