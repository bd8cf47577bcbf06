"""Large archives written at the same time on PostgreSQL: a write that makes progress is
not cut by the per-call bounds sized for small statements (`COMPACT_DATABASE_CALL_TIMEOUT`,
`COMPACT_DATABASE_STATEMENT_TIMEOUT`), here a second and half a second beside archives
whose writes take several. A stalled write is still cut: `test_stall_database.py`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.corpus import ANTHROPIC_FILES, load
from tests.postgres.test_replicas_api import App, app_on, session  # noqa: F401

pytestmark = pytest.mark.anyio


def large_conversation(megabytes: float) -> list[dict[str, Any]]:
    """The corpus's sessions one after another, each text four times over, until the
    conversation is about `megabytes` of JSON."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    size = 0
    while size < megabytes * 1_000_000:
        for path in ANTHROPIC_FILES:
            if messages[-1]["role"] == "user":
                messages.append({"role": "assistant", "content": "Next task."})
            for message in load(path)[1:]:
                messages.append(_four_times(message))
                size += len(str(message["content"])) * 4
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "Done."})
    messages.append({"role": "user", "content": "Go on."})
    return messages


def _four_times(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    if isinstance(content, str):
        return {**message, "content": content * 4}
    blocks = []
    for block in content:
        if block.get("type") == "text":
            block = {**block, "text": block["text"] * 4}
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), str):
            block = {**block, "content": block["content"] * 4}
        blocks.append(block)
    return {**message, "content": blocks}


@pytest.mark.slow
async def test_four_large_compactions_at_once_are_all_archived(
    app_on: App,  # noqa: F811
    database_url: str,
) -> None:
    app = await app_on(
        database_url,
        database_call_timeout=1.0,
        database_statement_timeout=0.5,
        request_timeout=120,
    )
    conversation = large_conversation(3)
    bodies = [{"messages": conversation, "force": True, "session_id": session()} for _ in range(4)]
    answers = await asyncio.gather(*(app.post("/compact", json=b) for b in bodies))
    got = [(a.status_code, a.json()["compacted"], a.json().get("reason")) for a in answers]
    assert got == [(200, True, None)] * 4
