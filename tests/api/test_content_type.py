"""A body route refuses a request that does not declare JSON with a 415 naming the header."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from app.api.routing import CONTENT_TYPE_FIELD

pytestmark = pytest.mark.anyio

BODY = b'{"messages": [{"role": "user", "content": "hi"}]}'
ROUTES = [
    "/count",
    "/should-compact",
    "/compact",
    "/compactions",
    "/compactions/x/apply",
    "/compress-tool-result",
    "/preprocess-input",
    "/assemble",
    "/sessions/x/recall",
]


def refusal(got: str) -> dict[str, object]:
    message = f"the request body must be JSON with a `content-type: application/json` header; {got}"
    return {
        "error": "unsupported_media_type",
        "message": message,
        "details": [{"field": CONTENT_TYPE_FIELD, "message": message}],
    }


@pytest.mark.parametrize("path", ROUTES)
async def test_a_missing_content_type_is_415_naming_the_header(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.post(path, content=BODY)
    assert response.status_code == 415
    assert response.json() == refusal("the header is missing")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/jsonx"]
)
async def test_a_wrong_content_type_is_415_naming_what_was_sent(
    client: httpx.AsyncClient, content_type: str
) -> None:
    response = await client.post("/count", content=BODY, headers={"content-type": content_type})
    assert response.status_code == 415
    assert response.json() == refusal(f"got `{content_type}`")


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
        "application/vnd.x+json",
    ],
)
async def test_json_content_types_are_accepted(
    client: httpx.AsyncClient, content_type: str
) -> None:
    response = await client.post("/count", content=BODY, headers={"content-type": content_type})
    assert response.status_code == 200, response.text
    assert response.json()["token_count"] == 9  # 3, the message's overhead, the priming


async def test_routes_without_a_body_do_not_care(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).status_code == 200
    assert (await client.delete("/compactions/x")).status_code == 404


async def test_the_token_is_checked_before_the_content_type(client_for: Any) -> None:
    locked: httpx.AsyncClient = await client_for(api_token="t0k3n")
    assert (await locked.post("/count", content=BODY)).status_code == 401


async def test_every_operation_with_a_body_documents_the_415_and_no_other_does(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    operations = {
        (method, re.sub(r"\{[^}]+\}", "x", path)): operation
        for path, item in spec["paths"].items()
        for method, operation in item.items()
    }
    with_body = {key for key, operation in operations.items() if "requestBody" in operation}
    with_415 = {key for key, operation in operations.items() if "415" in operation["responses"]}
    # ROUTES are the ones refused above: a new body route must join them.
    assert with_body == {("post", path) for path in ROUTES}
    assert with_415 == with_body
