"""Request JSON goes through orjson, falling back to `json` for what only `json` accepts, and
is validated on parsing without changing what FastAPI answers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.routing import APIRoute

from app.api.count_schemas import CountRequest
from app.api.errors import install_error_handlers
from app.api.routing import FastJsonRequest, FastJsonRoute

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
    ['{"n": 123456789012345678901234567890}', '{"x": NaN}'],
)  # a lone surrogate (`"\\ud800"`) is not: tests/api/test_unencodable_text.py
async def test_what_only_json_accepts_is_still_accepted(
    client: httpx.AsyncClient, raw_input: str
) -> None:
    tool_use = f'{{"type": "tool_use", "id": "t1", "name": "run", "input": {raw_input}}}'
    body = f'{{"messages": [{{"role": "assistant", "content": [{tool_use}]}}]}}'
    response = await post(client, "/count", body)
    assert response.status_code == 200, response.text
    assert response.json()["token_count"] > 0


@pytest.mark.parametrize("body", ['{"messages": [', "{bad", '{"messages": [1,]}', "[1] 2"])
async def test_malformed_json_is_a_400_naming_the_problem_at_the_position_json_reports(
    client: httpx.AsyncClient, body: str
) -> None:
    response = await post(client, "/compact", body)
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(body)
    problem = f"not valid JSON: {expected.value.msg} at character {expected.value.pos}"
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": "invalid_json",
            "message": f"body: {problem}",
            "details": [{"field": "body", "message": problem}],
        },
    )


async def test_fast_json_request_parses_once() -> None:
    sent: list[dict[str, Any]] = [{"type": "http.request", "body": b'{"a": 1}'}]

    async def receive() -> dict[str, Any]:
        return sent.pop()

    request = FastJsonRequest({"type": "http", "method": "POST", "headers": []}, receive)
    assert await request.json() == {"a": 1}
    assert await request.json() == {"a": 1}


def _echo_app(route_class: type[APIRoute]) -> FastAPI:
    """The same endpoint behind FastAPI's own route class or ours, with our error handlers."""
    app = FastAPI()
    install_error_handlers(app)
    router = APIRouter(route_class=route_class)

    @router.post("/echo")
    async def echo(body: CountRequest, request: Request) -> dict[str, Any]:
        return {
            "body": body.model_dump(exclude_unset=True),
            "fields_set": sorted(body.model_fields_set),
            "kept": [name for name in ("_body", "_unparsed") if getattr(request, name, None)],
        }

    app.include_router(router)
    return app


BODIES = [
    ("application/json", b'{"messages": [{"role": "user", "content": "hi"}], "format": "openai"}'),
    ("application/json", b'{"messages": [], "tokenizer": "nope"}'),
    ("application/json", b'{"messages": [], "extra": 1}'),
    ("application/json", b'{"messages": "x"}'),
    ("application/json", b"{}"),
    ("application/json", b"null"),
    ("application/json", b"[1, 2]"),
    ("application/json", b'"text"'),
    ("application/json", b'{"messages": ['),
    ("application/json", b""),
    ("application/json; charset=utf-8", b'{"messages": []}'),
    ("application/vnd.agent+json", b'{"messages": []}'),
    ("application/json", b'{"messages": [{"role": "user", "content": "x", "n": 1e400}]}'),
]


@pytest.mark.parametrize(("content_type", "body"), BODIES)
async def test_a_body_validated_on_parsing_answers_as_fastapi_alone_does(
    content_type: str, body: bytes
) -> None:
    answers = []
    for route_class in (APIRoute, FastJsonRoute):
        transport = httpx.ASGITransport(app=_echo_app(route_class))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            headers = {"content-type": content_type} if content_type else {}
            response = await client.post("/echo", content=body, headers=headers)
        data = response.json()
        if response.status_code == 200:
            data.pop("kept")
        answers.append((response.status_code, data))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("content_type", ["text/plain", ""])
async def test_a_body_not_declared_json_is_415_where_fastapi_alone_gives_a_vague_422(
    content_type: str,
) -> None:
    statuses = []
    for route_class in (APIRoute, FastJsonRoute):
        transport = httpx.ASGITransport(app=_echo_app(route_class))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            headers = {"content-type": content_type} if content_type else {}
            response = await client.post("/echo", content=b'{"messages": []}', headers=headers)
        statuses.append(response.status_code)
    assert statuses == [422, 415]
    assert "content-type" in response.json()["message"]


async def test_a_valid_json_body_is_not_kept_once_validated() -> None:
    transport = httpx.ASGITransport(app=_echo_app(FastJsonRoute))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.post(
            "/echo", json={"messages": [{"role": "user", "content": "hi"}]}
        )
    assert response.json() == {
        "body": {"messages": [{"role": "user", "content": "hi"}]},
        "fields_set": ["messages"],
        "kept": [],
    }


async def test_fast_json_request_gives_the_validated_model_and_a_stand_in_body() -> None:
    sent: list[dict[str, Any]] = [{"type": "http.request", "body": b'{"a": 1}'}]

    async def receive() -> dict[str, Any]:
        return sent.pop()

    scope = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")]}
    request = FastJsonRequest(scope, receive, validate=lambda document: ("model", document))
    assert await request.body() == b"\x00"
    assert await request.json() == ("model", {"a": 1})
    assert await request.body() == b"\x00"
    assert await request.json() == ("model", {"a": 1})
    assert (getattr(request, "_body", None), request._unparsed) == (None, None)
