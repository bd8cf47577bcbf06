from __future__ import annotations

from typing import Any

from app.core.sessions.holds import Refill, refilling, session_hold
from app.core.sessions.records import CompactionRecord
from tests.builders import assistant, parse, tool_result, tool_use, user

IDS = [f"m{i}" for i in range(40)]


def id_at(index: int) -> str | None:
    return IDS[index] if 0 <= index < len(IDS) else None


def entry(n: int, outcome: str, before: int, after: int, tokens: int = 1000) -> CompactionRecord:
    fields: dict[str, Any] = {
        "id": f"{n:020d}-r",
        "session_id": "s",
        "timestamp": "2026-11-25T00:00:00+00:00",
        "reason": "llm_call",
        "strategy": "full",
        "outcome": outcome,
        "message_count_before": before,
        "message_count_after": after,
        "tokens_before": tokens,
        "tokens_after": tokens,
        "compacted_message_ids": [],
        "context_end_id": IDS[after - 1],
    }
    return CompactionRecord(**fields)


def test_a_refused_context_is_held_until_it_grew_by_a_tenth_of_the_threshold() -> None:
    records = [entry(1, "no_gain", 10, 10, tokens=900)]
    held = session_hold(records, 12, 979, 800, id_at)
    assert held is not None
    assert (held.reason, held.retry_at_tokens) == ("no_gain", 980)
    assert session_hold(records, 12, 980, 800, id_at) is None


def test_a_refusal_of_another_context_holds_nothing() -> None:
    records = [entry(1, "no_gain", 10, 10, tokens=900)]
    assert session_hold(records, 12, 950, 800, lambda i: "other") is None
    assert session_hold(records, 9, 950, 800, id_at) is None


def test_three_quick_refills_in_a_row_are_thrashing() -> None:
    records = [
        entry(1, "compacted", 30, 5),
        entry(2, "compacted", 9, 5),
        entry(3, "compacted", 11, 5),
    ]
    held = session_hold(records, 11, 2000, 800, id_at)  # 6 messages: 3 turns since the last
    assert held is not None
    assert (held.reason, held.fresh) == ("thrashing", True)
    assert session_hold(records, 13, 2000, 800, id_at) is None  # 4 turns: not quick


def test_two_quick_refills_are_not_thrashing_yet() -> None:
    records = [
        entry(1, "compacted", 30, 5),
        entry(2, "compacted", 20, 5),
        entry(3, "compacted", 11, 5),
    ]
    assert session_hold(records, 11, 2000, 800, id_at) is None


def test_a_recorded_thrash_holds_while_the_context_continues_it() -> None:
    records = [entry(1, "compacted", 30, 5), entry(2, "thrashing", 20, 20)]
    held = session_hold(records, 30, 5000, 800, id_at)
    assert held is not None
    assert (held.reason, held.fresh) == ("thrashing", False)
    assert session_hold(records, 30, 5000, 800, lambda i: "changed") is None


def test_a_thrash_at_the_overflow_threshold_is_reported_not_held() -> None:
    quick = [
        entry(1, "compacted", 30, 5),
        entry(2, "compacted", 9, 5),
        entry(3, "compacted", 11, 5),
    ]
    under = session_hold(quick, 11, 1999, 800, id_at, overflow_tokens=2000)
    assert under is not None
    assert (under.reason, under.fresh, under.overflowing) == ("thrashing", True, False)
    over = session_hold(quick, 11, 2000, 800, id_at, overflow_tokens=2000)
    assert over is not None
    assert (over.reason, over.fresh, over.overflowing) == ("thrashing", False, True)
    recorded = [entry(1, "compacted", 30, 5), entry(2, "thrashing", 20, 20)]
    held = session_hold(recorded, 30, 5000, 800, id_at, overflow_tokens=5000)
    assert held is not None
    assert held.overflowing


def test_refilling_names_the_largest_messages_with_their_tools() -> None:
    call = tool_use("grep", "g1", pattern="x")
    messages = parse(
        [user("go"), assistant("Looking.", call), tool_result("g1", "hits"), assistant("ok")]
    )
    assert refilling(messages, [5, 50, 900, 3], 1, shown=2) == (
        Refill(2, "user", "grep", 900),
        Refill(1, "assistant", "grep", 50),
    )
