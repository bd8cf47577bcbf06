"""One body, every route: the fields that set the decision are read the same way by
`/should-compact`, `/compact`, a `/compactions` job and the command line, whether at the top
level or in `options`; a field the service does not read is taken by all of them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.builders import assistant, bulk_round, rounds, system, user

pytestmark = pytest.mark.anyio

MESSAGES: list[Any] = [
    system("You are a coding agent."),
    user("Fix it."),
    *bulk_round(),
    assistant("Listed."),
    *rounds(1, 3),
]


async def tokens(client: httpx.AsyncClient) -> int:
    counted: int = (await client.post("/count", json={"messages": MESSAGES})).json()["token_count"]
    return counted


@pytest.mark.parametrize("where", ["top", "options"])
async def test_a_window_given_either_way_decides_both_routes_alike(
    client: httpx.AsyncClient, where: str
) -> None:
    window = int(await tokens(client) / 0.9)  # over the 0.8 threshold, without `force`
    given: dict[str, Any] = (
        {"context_window": window} if where == "top" else {"options": {"context_window": window}}
    )
    body = {"messages": MESSAGES, **given}
    judged = (await client.post("/should-compact", json=body)).json()
    compacted = (await client.post("/compact", json=body)).json()
    assert (judged["should_compact"], judged["context_window"]) == (True, window)
    assert compacted["compacted"] is True, compacted["reason"]


async def test_threshold_and_min_messages_at_the_top_level_reach_compact(
    client: httpx.AsyncClient,
) -> None:
    window = int(await tokens(client) / 0.5)  # under 0.8, over 0.4
    body = {"messages": MESSAGES, "context_window": window}
    assert (await client.post("/compact", json=body)).json()["reason"] == "below_threshold"
    lower = (await client.post("/compact", json={**body, "threshold": 0.4})).json()
    assert lower["compacted"] is True
    many = {**body, "threshold": 0.4, "min_messages": 1000}
    assert (await client.post("/compact", json=many)).json()["reason"] == "below_min_messages"
    judged = (await client.post("/should-compact", json=many)).json()
    assert judged["reason"] == "below_min_messages"


@pytest.mark.parametrize("route", ["/should-compact", "/compact", "/compactions"])
async def test_the_same_field_given_twice_with_two_values_is_named(
    client: httpx.AsyncClient, route: str
) -> None:
    body = {"messages": MESSAGES, "context_window": 1000, "options": {"context_window": 2000}}
    response = await client.post(route, json=body)
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == ["context_window"]


async def test_the_same_value_given_twice_is_one(client: httpx.AsyncClient) -> None:
    body = {"messages": MESSAGES, "context_window": 5000, "options": {"context_window": 5000}}
    assert (await client.post("/compact", json=body)).status_code == 200


async def test_a_should_compact_body_is_a_compact_body_and_a_count_body(
    client: httpx.AsyncClient,
) -> None:
    """Every field of every route's body, sent to each route: taken, and none of the
    service's own handed back to the provider."""
    body = {
        "model": "claude-sonnet-4",
        "max_tokens": 1024,
        "messages": MESSAGES[1:-1],
        "system": "You are a coding agent.",
        "context_window": 3000,
        "threshold": 0.5,
        "overflow_threshold": 0.9,
        "min_messages": 2,
        "session_id": "s-1",
        "force": True,
        "options": {"strategy": "full"},
        "instructions": "Focus on the build.",
        "tokenizer": "tiktoken",
        "reason": "manual",
        "format": "anthropic",
    }
    for route in ("/count", "/should-compact", "/compact"):
        response = await client.post(route, json=body)
        assert response.status_code == 200, (route, response.text)
    answer = (await client.post("/compact", json=body)).json()
    assert list(answer["request"]) == ["model", "max_tokens", "messages", "system"]
