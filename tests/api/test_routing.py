"""Request JSON goes through orjson, falling back to `json` for what only `json` accepts."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.api.routing import FastJsonRequest

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}


async def post(client: httpx.AsyncClient, path: str, body: str) -> httpx.Response:
    return await client.post(path, content=body.encode(), headers=JSON)


async def test_count_parses_with_orjson_and_counts_the_same(client: httpx.AsyncClient) -> None:
    body = {"messages": [{"role": "user", "content": "héllo wörld"}]}
    fast = await post(client, "/count", json.dumps(body, ensure_ascii=False))
    slow = await post(client, "/count", json.dumps(body, ensure_ascii=True))
    assert fast.status_code == slow.status_code == 200
    assert fast.json() == slow.json()


@pytest.mark.parametrize(
    "raw_input",
    ['{"n": 123456789012345678901234567890}', '{"x": NaN}', '{"s": "\\ud800"}'],
)
async def test_what_only_json_accepts_is_still_accepted(
    client: httpx.AsyncClient, raw_input: str
) -> None:
    tool_use = f'{{"type": "tool_use", "id": "t1", "name": "run", "input": {raw_input}}}'
    body = f'{{"messages": [{{"role": "assistant", "content": [{tool_use}]}}]}}'
    response = await post(client, "/count", body)
    assert response.status_code == 200, response.text
    assert response.json()["token_count"] > 0


async def test_invalid_json_is_a_422_at_the_position_json_reports(
    client: httpx.AsyncClient,
) -> None:
    response = await post(client, "/compact", '{"messages": [')
    assert response.status_code == 422
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads('{"messages": [')
    assert response.json()["message"] == f"[{expected.value.pos}]: JSON decode error"


async def test_fast_json_request_parses_once() -> None:
    sent: list[dict[str, Any]] = [{"type": "http.request", "body": b'{"a": 1}'}]

    async def receive() -> dict[str, Any]:
        return sent.pop()

    request = FastJsonRequest({"type": "http", "method": "POST", "headers": []}, receive)
    assert await request.json() == {"a": 1}
    assert await request.json() == {"a": 1}
