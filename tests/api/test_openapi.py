from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

pytestmark = pytest.mark.anyio

OPENAPI_YAML = Path(__file__).resolve().parents[2] / "openapi.yaml"


@pytest.mark.slow
async def test_openapi_yaml_equals_the_served_schema(client: httpx.AsyncClient) -> None:
    served = (await client.get("/openapi.json")).json()
    assert yaml.safe_load(OPENAPI_YAML.read_text(encoding="utf-8")) == served


async def test_every_request_and_response_model_has_a_description_and_example(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    schemas = spec["components"]["schemas"]
    refs = set()
    for path in spec["paths"].values():
        for operation in path.values():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                refs.add(body["schema"]["$ref"])
            for answer in operation["responses"].values():
                content = answer.get("content", {}).get("application/json", {})
                if "$ref" in content.get("schema", {}):
                    refs.add(content["schema"]["$ref"])
    names = {ref.rsplit("/", 1)[-1] for ref in refs}
    assert {"CountRequest", "CompactRequestBody", "CompactResponse", "ErrorResponse"} <= names
    for name in sorted(names):
        assert schemas[name].get("description"), f"{name} has no description"
        assert schemas[name].get("examples"), f"{name} has no example"


async def test_messages_are_documented_in_every_shape_in_requests_and_answers(
    client: httpx.AsyncClient,
) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    any_message = {"$ref": "#/components/schemas/AnyMessage"}
    assert schemas["AnyMessage"]["anyOf"] == [
        {"$ref": "#/components/schemas/Message"},
        {"$ref": "#/components/schemas/OpenAIMessage"},
        {"$ref": "#/components/schemas/ResponsesItem"},
    ]
    for name in ("CountRequest", "ShouldCompactRequest", "CompactRequestBody", "ApplyRequest"):
        assert schemas[name]["properties"]["messages"]["items"] == any_message, name
    assert schemas["CompactResponse"]["properties"]["messages"]["items"] == any_message
