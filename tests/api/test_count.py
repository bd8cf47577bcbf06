from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.tokens import REPLY_PRIMING, count_total
from tests.builders import assistant, parse, read_round, system, tool_use, user

pytestmark = pytest.mark.anyio

CONVERSATION = [system("sys"), user("Fix a.py"), *read_round("a.py", "body"), assistant("ok")]


async def test_count_matches_the_core_count(
    client: httpx.AsyncClient, tokenizer: TiktokenTokenizer
) -> None:
    response = await client.post("/count", json={"messages": CONVERSATION})
    assert response.status_code == 200
    total = count_total(tokenizer, parse(CONVERSATION)) + REPLY_PRIMING
    head = count_total(tokenizer, parse(CONVERSATION[:1]))
    assert response.json() == {
        "token_count": total,
        "message_count": 5,
        "tokenizer": "tiktoken",
        "exact": True,
        "format": "anthropic",
        "parts": {"system": head, "tools": 0, "messages": total - head},
        "warnings": [],
    }


async def test_empty_list_counts_zero(client: httpx.AsyncClient) -> None:
    response = await client.post("/count", json={"messages": []})
    assert response.json()["token_count"] == 0


async def test_unknown_blocks_and_extra_fields_are_accepted(client: httpx.AsyncClient) -> None:
    messages = [
        {
            "role": "assistant",
            "id": "m1",
            "metadata": {"turn": 3},
            "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
            ],
        }
    ]
    response = await client.post("/count", json={"messages": messages})
    assert response.status_code == 200
    assert response.json()["token_count"] > 0


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([user("a"), user("b"), user("c"), {"role": "bot", "content": "x"}], "messages[3].role"),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "user", "content": [{"type": "text"}]}], "messages[0].content[0].text"),
        ([{"role": "user", "content": [{"text": "no type"}]}], "messages[0].content[0]"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": {}, "content": "x"}], "messages[0].role"),  # found by the fuzzer: was a 500
        ([{"role": "user", "content": [{"type": {}}]}], "messages[0].content[0]"),
        (
            [assistant(tool_use("read_file", path="a")) | {"content": [{"type": "tool_use"}]}],
            "messages[0].content[0].id",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t",
                            "content": [{"type": "text", "text": 1}],
                        }
                    ],
                }
            ],
            "messages[0].content[0].content[0].text",
        ),
    ],
)
async def test_bad_messages_get_a_422_naming_the_field(
    client: httpx.AsyncClient, messages: list[dict[str, Any]], field: str
) -> None:
    response = await client.post("/count", json={"messages": messages})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_request"
    assert body["details"][0]["field"] == field
    assert body["message"].startswith(f"{field}: ")


async def test_missing_messages_and_unknown_fields_are_named(client: httpx.AsyncClient) -> None:
    response = await client.post("/count", json={"mesages": []})
    assert response.status_code == 422
    fields = {d["field"] for d in response.json()["details"]}
    assert fields == {"messages", "mesages"}


async def test_malformed_json_is_a_400_not_a_500(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/count", content=b'{"messages": [', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_json"


async def test_a_body_that_is_not_utf8_is_a_400_naming_the_body(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/count", content=b"9\xff", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_json",
        "message": "body: not UTF-8 JSON: invalid start byte at byte 1",
        "details": [{"field": "body", "message": "not UTF-8 JSON: invalid start byte at byte 1"}],
    }


async def test_body_over_the_limit_is_refused_with_413(client_for: Any) -> None:
    client = await client_for(max_request_bytes=1000)
    response = await client.post("/count", json={"messages": [user("x" * 2000)]})
    assert response.status_code == 413
    assert response.json() == {
        "error": "request_too_large",
        "message": "request body exceeds 1000 bytes",
        "details": [],
    }


async def test_should_compact_counts_when_no_usage_is_given(
    client: httpx.AsyncClient, tokenizer: TiktokenTokenizer
) -> None:
    tokens = count_total(tokenizer, parse(CONVERSATION)) + REPLY_PRIMING
    head = count_total(tokenizer, parse(CONVERSATION[:1]))
    response = await client.post(
        "/should-compact", json={"messages": CONVERSATION, "context_window": tokens}
    )
    assert response.json() == {
        "should_compact": True,
        "overflow": True,
        "reason": "overflow",
        "token_count": tokens,
        "token_source": "counted",
        "threshold_tokens": -(-tokens * 8 // 10),
        "overflow_tokens": -(-tokens * 9 // 10),
        "context_window": tokens,
        "limit_tokens": tokens,
        "limited_by": "context_window",
        "output_budget": 0,
        "message_count": 5,
        "format": "anthropic",
        "exact": True,
        "parts": {"system": head, "tools": 0, "messages": tokens - head},
        "warnings": [],
        "detail": None,
        "retry_at_tokens": None,
        "refilling": [],
    }


async def test_should_compact_uses_last_usage_plus_pending_input(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "messages": CONVERSATION,
        "last_usage": {"input_tokens": 150_000, "cache_read_input_tokens": 9_000},
        "pending_input": "x" * 3000,
    }
    response = await client.post("/should-compact", json=body)
    data = response.json()
    assert (data["token_count"], data["token_source"]) == (160_000, "last_usage")
    assert (data["should_compact"], data["overflow"], data["reason"]) == (
        True,
        False,
        "above_threshold",
    )


async def test_should_compact_needs_min_messages(client: httpx.AsyncClient) -> None:
    body = {"messages": [user("hi")], "last_usage": {"prompt_tokens": 199_000}}
    data = (await client.post("/should-compact", json=body)).json()
    assert (data["should_compact"], data["overflow"], data["reason"]) == (
        False,
        True,
        "below_min_messages",
    )


async def test_should_compact_refuses_overflow_below_threshold(client: httpx.AsyncClient) -> None:
    body = {"messages": [], "threshold": 0.9, "overflow_threshold": 0.5}
    response = await client.post("/should-compact", json=body)
    assert response.status_code == 422
    assert response.json()["details"][0]["field"] == "overflow_threshold"
