"""Compaction records of a session and the rules read from them.

A record is appended for every compaction a session attempts: compacted, or failed on the
way (`archive_failed`, `summarization_failed`, `selective_failed`: each after work began,
the last two with an archive written), or refused (`no_gain`: no strategy made the context
smaller and under the threshold; `thrashing`: the context keeps refilling right after
each compaction). Requests that were declined before any work
(below the threshold, too few messages or rounds, pending tool calls, `max_iterations`,
too little to prune) leave no record: agents ask on every turn, and those answers carry
no news. The session's state is derived from its records, never kept in memory, so every
replica sharing the data directory agrees: how many compactions succeeded
(`max_iterations`), and whether a failed summary's cooldown is still running.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from app.core.cost import SummarizerCost
from app.core.messages import Message, dump_message
from app.core.sessions.ids import archive_sha256

RecordReason = Literal["llm_call", "tool_execution", "manual"]
RECORDED_FAILURES = frozenset(
    {"archive_failed", "summarization_failed", "selective_failed", "no_gain", "thrashing"}
)


class CompactionRecord(BaseModel):
    """One compaction of a session, as `GET /sessions/{id}/compactions` serves it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(description="Time-sortable record id.")
    session_id: str
    timestamp: str = Field(description="When the compaction finished (ISO 8601, UTC).")
    reason: RecordReason = Field(
        description="What triggered it: an LLM call, a tool execution or a manual request."
    )
    strategy: str = Field(description="The strategy that ran (`prune` during a cooldown).")
    outcome: str = Field(
        description=(
            "`compacted`, or the reason it was not: archive_failed | summarization_failed | "
            "selective_failed | no_gain | thrashing (only a failed summary starts the "
            "cooldown; `no_gain` and `thrashing` hold further compactions of the same context)."
        )
    )
    message_count_before: int
    message_count_after: int
    tokens_before: int = Field(
        description="The count the threshold decision was made on: the provider's, from "
        "`last_usage`, when the request sent it."
    )
    tokens_after: int
    compacted_message_ids: list[str] = Field(
        description="Each compacted message's own `id`, else `sha256:` and the first 16 hex "
        "digits of the sha256 of its canonical JSON."
    )
    summary_message_id: str | None = Field(
        None, description="The summary message's id (same scheme); null without a summary."
    )
    archive_id: str | None = None
    context_end_id: str | None = Field(
        None,
        description=(
            "The id (same scheme) of the last message of the context this attempt left: the "
            "output's when compacted, the input's otherwise. A later request whose message at "
            "`message_count_after - 1` has this id continues that context."
        ),
    )
    summarizer_cost: SummarizerCost = Field(
        default_factory=SummarizerCost,
        description="What this attempt's summaries cost (as the compaction's answer says).",
    )
    warnings: list[str] = Field(default_factory=list)


class RecordStore(Protocol):
    """Durable, append-only records per session. `append` never replaces a record."""

    def append(self, record: CompactionRecord) -> None: ...

    def list(self, session_id: str) -> list[CompactionRecord]: ...


def message_id(message: Message) -> str:
    """A message's own id, else a content address: the same message gets the same id in
    every request that sends it."""
    if message.id:
        return message.id
    return "sha256:" + archive_sha256([dump_message(message)])[:16]


def successful_compactions(records: Sequence[CompactionRecord]) -> int:
    return sum(1 for r in records if r.outcome == "compacted")


def cooldown_end(
    records: Sequence[CompactionRecord], seconds: float, now: datetime
) -> datetime | None:
    """When the cooldown after the session's last failed summary ends, if it is running:
    a later summary that succeeded ends it early."""
    if seconds <= 0:
        return None
    for record in sorted(records, key=lambda r: r.id, reverse=True):
        if record.outcome == "summarization_failed":
            end = datetime.fromisoformat(record.timestamp) + timedelta(seconds=seconds)
            return end if end > now else None
        if record.outcome == "compacted" and record.summary_message_id is not None:
            return None
    return None
