"""Each strategy, session records and their route through the real ASGI stack."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.core.assemble import SUMMARY_ACK, summary_turn
from tests.builders import rounds, system

pytestmark = pytest.mark.anyio

OUTPUT = "line of tool output\n" * 60  # as in `rounds`
MESSAGES = [system("You are a coding agent."), *rounds(1, 3)]

OPENAI_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "Run the build."},
]
for n in (1, 2, 3):
    OPENAI_MESSAGES += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {"name": "bash", "arguments": f'{{"command": "make {n}"}}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"c{n}", "content": OUTPUT},
    ]
OPENAI_MESSAGES += [
    {"role": "user", "content": "Please continue."},
    {"role": "assistant", "content": "Built."},
]


async def test_tail_over_http_keeps_the_last_round_exactly_as_sent(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": MESSAGES,
        "force": True,
        "options": {"strategy": "tail", "tail_keep_recent_rounds": 1},
    }
    data = (await client.post("/compact", json=body)).json()
    assert data["compacted"] is True
    assert data["strategy"] == "tail"
    assert data["compacted_indexes"] == list(range(1, 9))
    assert data["messages"][0] == MESSAGES[0]
    # the Anthropic shape: the archived summary is a user turn and its acknowledgement
    assert data["messages"][1]["role"] == "user"
    assert data["messages"][1]["content"].startswith(
        summary_turn("## \U0001f4cc Archived Session Summary\n")
    )
    assert "### \U0001f4c2 File System State (Snapshot)" in data["messages"][1]["content"]
    assert data["messages"][2] == {"role": "assistant", "content": SUMMARY_ACK}
    assert data["messages"][3:] == MESSAGES[9:]
    archive = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archive["messages"] == MESSAGES[1:9]


async def test_tail_over_http_in_the_openai_shape_moves_the_tool_run_with_the_older_part(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": OPENAI_MESSAGES,
        "force": True,
        "options": {"strategy": "tail", "tail_keep_recent_rounds": 1},
    }
    data = (await client.post("/compact", json=body)).json()
    assert data["compacted"] is True
    assert data["format"] == "openai"
    assert data["messages"][0] == OPENAI_MESSAGES[0]
    assert data["messages"][1]["role"] == "system"
    assert data["messages"][2:] == OPENAI_MESSAGES[-2:]
    archive = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archive["messages"] == OPENAI_MESSAGES[1:-1]


def _two_call_rounds(stray_after: int) -> list[dict[str, Any]]:
    """Three rounds of two parallel bash calls; a tool message answering no call follows
    the tool run of round `stray_after`."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for n in (1, 2, 3):
        calls = [
            {
                "id": f"r{n}{x}",
                "type": "function",
                "function": {"name": "bash", "arguments": f'{{"command": "make {x}{n}"}}'},
            }
            for x in "ab"
        ]
        out += [
            {"role": "user", "content": f"Task {n}."},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": f"r{n}a", "content": OUTPUT},
            {"role": "tool", "tool_call_id": f"r{n}b", "content": OUTPUT},
        ]
        if n == stray_after:
            out.append({"role": "tool", "tool_call_id": "stray", "content": "?"})
        out.append({"role": "assistant", "content": f"Done {n}."})
    return out


async def test_tail_in_the_openai_shape_summarizes_away_a_break_in_the_older_part(
    client: httpx.AsyncClient,
) -> None:
    # The stray tool message is item 5 of round 1. Its tool run is one canonical message
    # (index 3), so the kept rounds start at canonical index 5 but item 7: compared with
    # the plan by its canonical message, the break is in the summarized part.
    messages = _two_call_rounds(stray_after=1)
    body = {
        "messages": messages,
        "format": "openai",
        "force": True,
        "options": {"strategy": "tail", "tail_keep_recent_rounds": 2},
    }
    answer = await client.post("/compact", json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert (data["compacted"], data["compacted_indexes"]) == (True, [1, 2, 3, 4])
    assert data["messages"][2:] == messages[7:]
    archive = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archive["messages"] == messages[1:7]


async def test_tail_in_the_openai_shape_refuses_a_break_in_a_kept_round_at_the_item_sent(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": _two_call_rounds(stray_after=2),
        "format": "openai",
        "force": True,
        "options": {"strategy": "tail", "tail_keep_recent_rounds": 2},
    }
    answer = await client.post("/compact", json=body)
    assert answer.status_code == 422
    (detail,) = answer.json()["details"]
    assert detail["field"] == "messages[10]"
    assert "tool_message_orphaned" in detail["message"]


async def test_prune_over_http_in_the_openai_shape_clears_the_tool_messages(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": OPENAI_MESSAGES,
        "force": True,
        "options": {"strategy": "prune", "prune_keep_recent": 1},
    }
    data = (await client.post("/compact", json=body)).json()
    assert data["compacted"] is True
    assert data["strategy"] == "prune"
    assert data["summarizer"] is None
    out = data["messages"]
    assert out[3] == {  # no key beyond the ones the provider accepts
        "role": "tool",
        "tool_call_id": "c1",
        "content": "[Old tool result cleared: bash(command=make 1), 300 tokens]",
    }
    assert out[5]["content"] == "[Old tool result cleared: bash(command=make 2), 300 tokens]"
    assert [m for i, m in enumerate(out) if i not in (3, 5)] == [
        m for i, m in enumerate(OPENAI_MESSAGES) if i not in (3, 5)
    ]
    options = body["options"] | {"fallback": False}
    again = (
        await client.post("/compact", json=body | {"messages": out, "options": options})
    ).json()
    assert (again["compacted"], again["reason"]) == (False, "nothing_to_prune")


async def test_full_is_still_the_default_strategy(client: httpx.AsyncClient) -> None:
    data = (await client.post("/compact", json={"messages": MESSAGES, "force": True})).json()
    assert (data["compacted"], data["strategy"]) == (True, "full")
    assert data["compacted_indexes"] == list(range(1, 13))


async def test_a_sessions_compactions_are_listed_with_their_fields(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": MESSAGES,
        "force": True,
        "session_id": "s-1",
        "reason": "tool_execution",
        "options": {"strategy": "tail", "tail_keep_recent_rounds": 1},
    }
    data = (await client.post("/compact", json=body)).json()
    listed = (await client.get("/sessions/s-1/compactions")).json()
    assert listed["session_id"] == "s-1"
    (record,) = listed["records"]
    assert {k: v for k, v in record.items() if k not in ("id", "timestamp")} == {
        "session_id": "s-1",
        "reason": "tool_execution",
        "strategy": "tail",
        "outcome": "compacted",
        "message_count_before": 13,
        "message_count_after": 7,
        "tokens_before": data["token_count"],
        "tokens_after": data["stats"]["compacted_token_count"],
        "compacted_message_ids": record["compacted_message_ids"],
        "summary_message_id": record["summary_message_id"],
        "archive_id": data["archive"]["id"],
        "warnings": [],
        "context_end_id": record["context_end_id"],
        "summarizer_cost": data["summarizer_cost"],
    }
    assert data["summarizer_cost"]["calls"] == 1
    assert len(record["compacted_message_ids"]) == 8
    assert all(i.startswith("sha256:") for i in record["compacted_message_ids"])


async def test_concurrent_compactions_of_one_session_each_leave_a_record(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": MESSAGES,
        "force": True,
        "session_id": "busy",
        "options": {"strategy": "prune", "prune_keep_recent": 1},
    }
    answers = await asyncio.gather(*(client.post("/compact", json=body) for _ in range(8)))
    assert [a.json()["compacted"] for a in answers] == [True] * 8
    records = (await client.get("/sessions/busy/compactions")).json()["records"]
    assert len(records) == 8
    assert sorted(r["archive_id"] for r in records) == sorted(
        a.json()["archive"]["id"] for a in answers
    )


async def test_an_unknown_session_has_no_records_and_a_bad_id_is_a_422(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get("/sessions/nobody/compactions")).json() == {
        "session_id": "nobody",
        "records": [],
    }
    bad = await client.get("/sessions/..x/compactions")
    assert bad.status_code == 422
    assert bad.json()["details"][0]["field"] == "session_id"


async def test_an_unknown_record_reason_is_a_422_naming_the_field(
    client: httpx.AsyncClient,
) -> None:
    answer = await client.post("/compact", json={"messages": MESSAGES, "reason": "boredom"})
    assert answer.status_code == 422
    assert answer.json()["details"][0]["field"] == "reason"


async def test_max_iterations_from_the_server_settings(
    client_for: Callable[..., Any],
) -> None:
    client = await client_for(max_iterations=1)
    body = {
        "messages": MESSAGES,
        "force": True,
        "session_id": "s-2",
        "options": {"strategy": "prune", "prune_keep_recent": 1},
    }
    first = (await client.post("/compact", json=body)).json()
    second = (await client.post("/compact", json=body)).json()
    assert (first["compacted"], second["compacted"], second["reason"]) == (
        True,
        False,
        "max_iterations",
    )
