"""The bodies the Anthropic and OpenAI SDKs put on the wire (captured from their own HTTP
clients by scripts/capture_sdk_bodies.py, not written by hand: tests/data/sdk_bodies),
sent as they are to every counting and compacting route."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.sdk_bodies import body

pytestmark = pytest.mark.anyio


def anthropic_wire_body() -> dict[str, Any]:
    return body("anthropic_messages_tools")


def openai_wire_body() -> dict[str, Any]:
    return body("openai_chat_tools")


@pytest.mark.parametrize("build", [anthropic_wire_body, openai_wire_body])
async def test_an_sdk_s_wire_body_is_taken_by_every_route(
    client: httpx.AsyncClient, build: Any
) -> None:
    body = build()
    counted = await client.post("/count", json=body)
    judged = await client.post("/should-compact", json=body)
    compacted = await client.post("/compact", json={**body, "force": True})
    started = await client.post("/compactions", json={**body, "force": True})
    assert [r.status_code for r in (counted, judged, compacted, started)] == [200, 200, 200, 202]
    parts = counted.json()["parts"]
    assert min(parts.values()) > 0, parts
    assert judged.json()["token_count"] == counted.json()["token_count"]
    answer = compacted.json()
    assert answer["compacted"] is True, answer["reason"]
    request = answer["request"]
    assert {k: v for k, v in request.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    assert len(request["messages"]) < len(body["messages"])


@pytest.mark.parametrize("build", [anthropic_wire_body, openai_wire_body])
async def test_the_request_handed_back_keeps_the_sdk_s_field_order(
    client: httpx.AsyncClient, build: Any
) -> None:
    """The SDKs put `messages` among the other fields (Anthropic's second, after
    `max_tokens`): the request comes back with every field where it was sent, compacted
    or not, so a diff against the sent body shows only the messages."""
    body = build()
    assert list(body)[-1] != "messages"
    compacted = (await client.post("/compact", json={**body, "force": True})).json()
    unchanged = (await client.post("/compact", json=body)).json()
    assert compacted["compacted"] is True
    assert unchanged["compacted"] is False
    assert list(compacted["request"]) == list(body)
    assert list(unchanged["request"]) == list(body)
    assert unchanged["request"] == body


async def test_the_users_new_request_stays_last_so_the_request_is_ready_to_send(
    client: httpx.AsyncClient,
) -> None:
    """An agent sends the request it is about to make: its messages end with the user's
    new request. `full` summarizes the history before it and keeps that request, verbatim,
    last: a request ending with the summary's acknowledgement would be an assistant prefill
    (refused by Anthropic with extended thinking on) and would not ask the question."""
    body = anthropic_wire_body()
    asked = {"role": "user", "content": "Now make the release build, with the flags from Task 2."}
    body["messages"] = [*body["messages"], asked]
    body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    answer = (await client.post("/compact", json={**body, "force": True})).json()
    assert answer["compacted"] is True, answer["reason"]
    sent = answer["request"]["messages"]
    assert sent[-1] == asked
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert answer["compacted_indexes"] == list(range(len(body["messages"]) - 1))
    assert answer["stats"]["retained_message_count"] == 2  # the system prompt and the request


async def test_a_request_sent_mid_tool_loop_comes_back_ending_with_a_user_turn(
    client: httpx.AsyncClient,
) -> None:
    """Mid tool loop the messages end with tool results: all of them are summarized, and
    the compacted list ends with the summary's acknowledgement. The request to send gets a
    user `Continue.` after it (an assistant message last is a prefill, which Anthropic
    refuses with extended thinking on); `messages` stays the compacted list, for an agent
    that appends its own next turn."""
    body = anthropic_wire_body()
    call = {"type": "tool_use", "id": "t-last", "name": "bash", "input": {"command": "make"}}
    result = {"type": "tool_result", "tool_use_id": "t-last", "content": "built\n" * 50}
    body["messages"] = [
        *body["messages"],
        {"role": "user", "content": "Run make."},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    answer = (await client.post("/compact", json={**body, "force": True})).json()
    assert answer["compacted"] is True, answer["reason"]
    assert answer["messages"][-1]["role"] == "assistant"
    sent = answer["request"]["messages"]
    assert sent == [*answer["messages"], {"role": "user", "content": "Continue."}]
    assert [m["role"] for m in sent][-2:] == ["assistant", "user"]
