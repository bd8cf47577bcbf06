"""`POST /sessions/{session_id}/recall` through the real ASGI stack."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.builders import assistant, bulk_round, system, tool_result, tool_use, user

pytestmark = pytest.mark.anyio

ERROR = "Traceback (most recent call last):\nKeyError: 'HASDATA_API_KEY'"


def session(secret: str) -> list[dict[str, Any]]:
    call = tool_use("bash", "t1", command="python run.py")
    return [
        system("You are a coding agent."),
        user(f"Set up the {secret} engine."),
        assistant("Running it.", call),
        tool_result("t1", ERROR),
        *bulk_round(),  # enough history that the summary is smaller than what it replaces
        assistant("The key is missing."),
        user("Go on."),
    ]


async def compact(client: httpx.AsyncClient, session_id: str, secret: str) -> dict[str, Any]:
    body = {"messages": session(secret), "force": True, "session_id": session_id}
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_recall_returns_the_archived_message(client: httpx.AsyncClient) -> None:
    data = await compact(client, "s-1", "hasdata")
    assert "POST /sessions/s-1/recall" in data["summary"]
    response = await client.post("/sessions/s-1/recall", json={"query": "KeyError", "limit": 3})
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert hits[0] == {
        "archive_id": data["archive"]["id"],
        "message_index": 2,
        "role": "user",
        "tool_name": "bash",
        "snippet": "Traceback (most recent call last): KeyError: 'HASDATA_API_KEY'",
        "score": 11,
    }


async def test_recall_never_returns_another_sessions_archive(client: httpx.AsyncClient) -> None:
    await compact(client, "s-1", "alpha-secret")
    await compact(client, "s-2", "beta")
    response = await client.post("/sessions/s-2/recall", json={"query": "alpha-secret"})
    assert response.json() == {
        "session_id": "s-2",
        "query": "alpha-secret",
        "hits": [],
        "dropped_terms": [],
        "complete": True,
    }


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/sessions/s;x/recall", {"query": "x"}, "session_id"),
        ("/sessions/s%20x/recall", {"query": "x"}, "session_id"),
        ("/sessions/s-1/recall", {"query": ""}, "query"),
        ("/sessions/s-1/recall", {"query": "x", "limit": 0}, "limit"),
        ("/sessions/s-1/recall", {"query": "x", "limit": 51}, "limit"),
        ("/sessions/s-1/recall", {"query": "x", "extra": 1}, "extra"),
    ],
)
async def test_bad_input_is_a_422_naming_the_field(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    response = await client.post(path, json=body)
    assert response.status_code == 422
    assert field in response.text


async def test_recall_needs_the_token_when_one_is_set(client_for: Any) -> None:
    locked: httpx.AsyncClient = await client_for(api_token="tok-recall-secret")
    response = await locked.post("/sessions/s-1/recall", json={"query": "x"})
    assert response.status_code == 401
    allowed = await locked.post(
        "/sessions/s-1/recall",
        json={"query": "x"},
        headers={"authorization": "Bearer tok-recall-secret"},
    )
    assert allowed.status_code == 200
