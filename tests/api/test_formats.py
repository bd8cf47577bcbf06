from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from app.core.assemble import SUMMARY_ACK
from tests.builders import BULK_OUTPUT, assistant, bulk_round, system, tool_result, tool_use, user

pytestmark = pytest.mark.anyio

ANTHROPIC_URL = "http://anthropic.test"
OPENAI_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compact-request.openai.json"


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


OPENAI = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix a.py"},
    {
        "role": "assistant",
        "content": "Reading it.",
        "tool_calls": [call("c1", "read_file", '{"path": "a.py"}')],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "def f(:"},
    {"role": "assistant", "content": "Fixed."},
]

OPENAI_BULK = [
    {"role": "assistant", "content": "Testing.", "tool_calls": [call("b1", "bash", "{}")]},
    {"role": "tool", "tool_call_id": "b1", "content": BULK_OUTPUT},
]

ANTHROPIC = [
    system("You are a coding agent."),
    user("Fix a.py"),
    assistant("Reading it.", tool_use("read_file", "c1", path="a.py")),
    tool_result("c1", "def f(:"),
    assistant("Fixed."),
]


async def test_openai_messages_are_detected_and_counted_like_anthropic_ones(
    client: httpx.AsyncClient,
) -> None:
    openai = (await client.post("/count", json={"messages": OPENAI})).json()
    anthropic = (await client.post("/count", json={"messages": ANTHROPIC})).json()
    assert (openai["format"], anthropic["format"]) == ("openai", "anthropic")
    assert openai["token_count"] == anthropic["token_count"]


async def test_below_threshold_openai_comes_back_exactly_as_sent(
    client: httpx.AsyncClient,
) -> None:
    data = (await client.post("/compact", json={"messages": OPENAI})).json()
    assert (data["compacted"], data["format"]) == (False, "openai")
    assert data["messages"] == OPENAI


async def test_compacted_openai_answer_is_openai_and_archive_keeps_the_originals(
    client: httpx.AsyncClient,
) -> None:
    long = [*OPENAI[:2], *OPENAI_BULK, *OPENAI[2:]]
    data = (await client.post("/compact", json={"messages": long, "force": True})).json()
    assert (data["compacted"], data["format"]) == (True, "openai")
    assert data["messages"][0] == OPENAI[0]
    assert data["messages"][2] == {"role": "assistant", "content": SUMMARY_ACK}
    archive = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archive["messages"] == long[1:]


async def test_explicit_format_is_enforced(client: httpx.AsyncClient) -> None:
    response = await client.post("/count", json={"messages": OPENAI, "format": "anthropic"})
    assert response.status_code == 422
    assert response.json()["details"][0]["field"] == "messages[3].role"


async def test_bad_openai_message_names_the_field(client: httpx.AsyncClient) -> None:
    messages = [*OPENAI[:3], {"role": "tool", "content": "x"}]
    response = await client.post("/count", json={"messages": messages})
    assert response.status_code == 422
    detail = response.json()["details"][0]
    assert detail["field"] == "messages[3]"
    assert "tool_call_id" in detail["message"]


async def test_unanswered_tool_call_in_a_returned_conversation_is_a_422(
    client: httpx.AsyncClient,
) -> None:
    messages = [*OPENAI[:3], {"role": "user", "content": "never mind"}]
    response = await client.post("/compact", json={"messages": messages})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_conversation"
    assert body["details"] == [
        {
            "field": "messages[2]",
            "message": "tool_call_unanswered: tool call c1 is not answered by a tool message",
        }
    ]


async def test_a_break_in_the_summarized_part_is_compacted_away(
    client: httpx.AsyncClient,
) -> None:
    messages = [
        system("s"),
        user("a"),
        *bulk_round(),
        user("b"),
        assistant(tool_use("x", "t1")),
        user("never answered"),
        assistant("ok"),
    ]
    data = (await client.post("/compact", json={"messages": messages, "force": True})).json()
    assert data["compacted"] is True
    assert [m["role"] for m in data["messages"]] == ["system", "user", "assistant"]


async def test_an_unanswered_tool_call_at_the_end_is_not_compacted(
    client: httpx.AsyncClient,
) -> None:
    messages = [system("s"), user("a"), assistant(tool_use("x", "t1"))]
    data = (await client.post("/compact", json={"messages": messages, "force": True})).json()
    assert (data["compacted"], data["reason"]) == (False, "pending_tool_calls")
    assert data["messages"] == messages


@respx.mock(base_url=ANTHROPIC_URL)
async def test_anthropic_tokenizer_uses_count_tokens(
    respx_mock: respx.MockRouter, client_for: Any
) -> None:
    route = respx_mock.post("/v1/messages/count_tokens").respond(200, json={"input_tokens": 42})
    client = await client_for(anthropic_api_key="k", anthropic_base_url=ANTHROPIC_URL)
    data = (await client.post("/count", json={"messages": OPENAI, "tokenizer": "anthropic"})).json()
    assert (data["token_count"], data["tokenizer"], data["exact"]) == (42, "anthropic", True)
    sent = route.calls.last.request
    body = httpx.Response(200, content=sent.content).json()
    assert body["system"] == [{"type": "text", "text": "You are a coding agent."}]
    assert "x-openai" not in sent.content.decode()
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "read_file",
        "input": {"path": "a.py"},
    }


@respx.mock(base_url=ANTHROPIC_URL)
async def test_anthropic_tokenizer_failure_falls_back_to_the_local_count(
    respx_mock: respx.MockRouter, client_for: Any, client: httpx.AsyncClient
) -> None:
    respx_mock.post("/v1/messages/count_tokens").respond(500, json={"error": {}})
    keyed = await client_for(anthropic_api_key="k", anthropic_base_url=ANTHROPIC_URL)
    local = (await client.post("/count", json={"messages": ANTHROPIC})).json()
    body = {"messages": ANTHROPIC, "tokenizer": "anthropic"}
    data = (await keyed.post("/count", json=body)).json()
    assert (data["token_count"], data["tokenizer"], data["exact"]) == (
        local["token_count"],
        "tiktoken",
        False,
    )
    assert data["warnings"] == [
        "Anthropic count_tokens failed: InternalServerError (HTTP 500): counted locally"
    ]
    decided = (await keyed.post("/should-compact", json=body)).json()
    assert (decided["token_count"], decided["exact"]) == (local["token_count"], False)


async def test_anthropic_tokenizer_without_a_key_counts_locally(
    client: httpx.AsyncClient,
) -> None:
    body = {"messages": ANTHROPIC, "tokenizer": "anthropic"}
    data = (await client.post("/count", json=body)).json()
    assert (data["exact"], data["warnings"]) == (False, ["no Anthropic API key: counted locally"])


async def test_the_openai_example_request_compacts_in_its_shape(
    client: httpx.AsyncClient,
) -> None:
    body = json.loads(OPENAI_EXAMPLE.read_text(encoding="utf-8"))
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["format"]) == (True, "openai")
    assert data["skipped_files"] == [{"path": "tests/missing_colon.py", "reason": "not_found"}]
