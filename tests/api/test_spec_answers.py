"""The spec a client generator reads: operation ids chosen by hand, an example per error
status that is what the server really answers, and limits equal to the server's defaults."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from app.api.operations import OPERATION_IDS
from app.api.schemas import ErrorResponse
from app.settings import Settings

pytestmark = pytest.mark.anyio

ERROR_REF = "#/components/schemas/ErrorResponse"
SMALL = {"messages": [{"role": "user", "content": "hi"}]}


async def spec(client: httpx.AsyncClient) -> dict[str, Any]:
    served: dict[str, Any] = (await client.get("/openapi.json")).json()
    return served


async def test_every_operation_has_its_hand_chosen_camel_case_id(
    client: httpx.AsyncClient,
) -> None:
    ids = {
        f"{method.upper()} {path}": operation["operationId"]
        for path, operations in (await spec(client))["paths"].items()
        for method, operation in operations.items()
    }
    assert ids == OPERATION_IDS
    assert (ids["POST /compact"], ids["POST /count"]) == ("compact", "countTokens")
    assert len(set(ids.values())) == len(ids)
    assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)*", name) for name in ids.values())


async def test_every_error_status_but_422_shows_an_example_of_its_own(
    client: httpx.AsyncClient,
) -> None:
    seen: dict[str, set[str]] = {}
    for operations in (await spec(client))["paths"].values():
        for operation in operations.values():
            for status, response in operation["responses"].items():
                media = response.get("content", {}).get("application/json", {})
                if media.get("schema", {}).get("$ref") != ERROR_REF or status == "422":
                    continue
                example = ErrorResponse.model_validate(media["example"])
                seen.setdefault(status, set()).add(example.error)
    assert seen["400"] == {"invalid_json"}
    assert seen["401"] == {"unauthorized"}
    assert seen["413"] == {"request_too_large"}
    assert seen["415"] == {"unsupported_media_type"}
    assert seen["504"] == {"deadline_exceeded"}
    assert {"busy", "queue_full"} <= seen["503"]


async def compact_example(client: httpx.AsyncClient, status: str) -> dict[str, Any]:
    responses = (await spec(client))["paths"]["/compact"]["post"]["responses"]
    example: dict[str, Any] = responses[status]["content"]["application/json"]["example"]
    return example


async def test_the_examples_are_what_the_server_answers(client_for: Any) -> None:
    client = await client_for(api_token="t0ken", max_request_bytes=4096)
    auth = {"authorization": "Bearer t0ken"}
    answers = {
        "400": await client.post(
            "/compact",
            content=b'{"messages": [',
            headers={**auth, "content-type": "application/json"},
        ),
        "401": await client.post("/compact", json=SMALL),
        "413": await client.post(
            "/compact", json={"messages": [], "pad": "x" * 5000}, headers=auth
        ),
        "415": await client.post("/compact", content=b"{}", headers=auth),
    }
    for status, answer in answers.items():
        example = await compact_example(client, status)
        assert str(answer.status_code) == status
        assert answer.json()["error"] == example["error"]
        assert [d["field"] for d in answer.json()["details"]] == [
            d["field"] for d in example["details"]
        ]


async def test_the_message_limit_in_the_spec_is_the_servers_default(
    client: httpx.AsyncClient,
) -> None:
    default = Settings.model_fields["max_messages"].default
    schemas = (await spec(client))["components"]["schemas"]
    limits = {
        name: schema["properties"]["messages"]["maxItems"]
        for name, schema in schemas.items()
        if name.endswith(("Request", "RequestBody")) and "messages" in schema["properties"]
    }
    assert limits
    assert set(limits.values()) == {default}


async def test_a_server_configured_above_the_default_accepts_that_many(client_for: Any) -> None:
    client = await client_for(max_messages=12_000)
    messages = [{"role": ("user", "assistant")[i % 2], "content": "k"} for i in range(11_001)]
    response = await client.post("/count", json={"messages": messages})
    assert response.status_code == 200, response.text
    assert response.json()["message_count"] == 11_001


async def test_the_compact_example_swagger_sends_first_compacts(client: httpx.AsyncClient) -> None:
    """ "Try it out" on `/compact` sends the first example: it shows a compaction."""
    [first, *_] = (await spec(client))["components"]["schemas"]["CompactRequestBody"]["examples"]
    answer = (await client.post("/compact", json=first)).json()
    assert (answer["compacted"], answer["reason"]) == (True, None)
    assert answer["stats"]["compacted_token_count"] < answer["token_count"]
