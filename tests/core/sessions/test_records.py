from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core.messages import Message
from app.core.sessions.records import (
    CompactionRecord,
    cooldown_end,
    message_id,
    successful_compactions,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def record(n: int, outcome: str, at: str, summary: str | None = None) -> CompactionRecord:
    fields: dict[str, Any] = dict(
        id=f"{n:020d}-aa",
        session_id="s1",
        timestamp=at,
        reason="llm_call",
        strategy="tail",
        outcome=outcome,
        message_count_before=10,
        message_count_after=3,
        tokens_before=1000,
        tokens_after=100,
        compacted_message_ids=[],
        summary_message_id=summary,
    )
    return CompactionRecord(**fields)


def test_a_message_id_is_its_own_id_else_a_content_address() -> None:
    assert message_id(Message(role="user", content="hi", id="msg_1")) == "msg_1"
    # sha256 of the canonical JSON `[{"content":"hi","role":"user"}]`, first 16 hex digits
    assert message_id(Message(role="user", content="hi")) == "sha256:4e79873118cd9be7"
    assert message_id(Message(role="user", content="ho")) != "sha256:4e79873118cd9be7"


def test_only_compacted_records_count_toward_the_iterations() -> None:
    records = [
        record(1, "compacted", "2026-11-23T10:00:00+00:00"),
        record(2, "summarization_failed", "2026-11-23T10:05:00+00:00"),
        record(3, "compacted", "2026-11-23T10:10:00+00:00"),
    ]
    assert successful_compactions(records) == 2


def test_the_cooldown_runs_from_the_last_failed_summary() -> None:
    records = [
        record(1, "compacted", "2026-11-23T11:00:00+00:00", summary="sha256:1"),
        record(2, "summarization_failed", "2026-11-23T11:58:00+00:00"),
    ]
    assert cooldown_end(records, 300, NOW) == datetime(2026, 11, 23, 12, 3, tzinfo=UTC)
    assert cooldown_end(records, 60, NOW) is None
    assert cooldown_end(records, 0, NOW) is None


def test_a_later_summary_ends_the_cooldown_but_a_later_prune_does_not() -> None:
    failed = record(1, "summarization_failed", "2026-11-23T11:58:00+00:00")
    pruned = record(2, "compacted", "2026-11-23T11:59:00+00:00")
    summarized = record(3, "compacted", "2026-11-23T11:59:30+00:00", summary="sha256:2")
    assert cooldown_end([failed, pruned], 300, NOW) == datetime(2026, 11, 23, 12, 3, tzinfo=UTC)
    assert cooldown_end([failed, pruned, summarized], 300, NOW) is None
