"""`tail` on the sessions agents send: one request followed by many tool exchanges (the
corpus transcripts), forced at windows the session fits. It used to decline them
(`too_few_rounds`: every round would be kept) and hand them to `full`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.plans.tail import EARLIER_EXCHANGES_NOTE
from tests.corpus import FILES, load

pytestmark = pytest.mark.anyio


def exchanges(messages: list[dict[str, Any]]) -> int:
    """Tool calls made, in either shape."""
    return sum(
        len(m.get("tool_calls") or [])
        + sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use")
        if isinstance(m.get("content"), list)
        else len(m.get("tool_calls") or [])
        for m in messages
        if m["role"] == "assistant"
    )


# A session this short (five exchanges, under 2k tokens) gains nothing from a summary of
# half of it: `tail` answers `no_gain` there, as any strategy would.
SESSIONS = [p for p in FILES if exchanges(load(p)) >= 8]


def test_the_sessions_are_one_request_and_many_exchanges() -> None:
    assert len(SESSIONS) == 18
    for path in SESSIONS:
        messages = load(path)
        texts = [
            m["content"] if isinstance(m["content"], str) else b["text"]
            for m in messages
            if m["role"] == "user"
            for b in (m["content"] if isinstance(m["content"], list) else [{}])
            if isinstance(m["content"], str) or b.get("type") == "text"
        ]
        # The request, then at most the harness's nudge after the last results.
        assert texts[1:] in ([], ["Please continue."]), path.name


@pytest.mark.parametrize("window", [8000, 14000])
@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
async def test_tail_compacts_a_one_request_session_without_falling_back(
    path: Path, window: int, client: httpx.AsyncClient
) -> None:
    messages = load(path)
    body = {
        "messages": messages,
        "force": True,
        "options": {"strategy": "tail", "context_window": window},
    }
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["strategy"], data["fallbacks"]) == (True, "tail", [])
    out = data["messages"]
    # The system prompt, the archived summary (its ledger naming the request as the
    # goal), the request verbatim when it takes at most a quarter of the kept share (else
    # a note in its place), then the latest exchanges exactly as sent.
    assert out[0] == messages[0]
    assert out[1]["role"] == "system"
    request = " ".join(messages[1]["content"].split())[:80]
    assert request in " ".join(out[1]["content"].split())
    assert out[2] in (messages[1], {"role": "user", "content": EARLIER_EXCHANGES_NOTE})
    kept = len(out) - 3
    assert kept >= 2
    assert out[3:] == messages[len(messages) - kept :]
    first = 1 if out[2] == messages[1] else 0
    indexes = list(range(1 + first, len(messages) - kept))
    assert data["compacted_indexes"] == indexes
