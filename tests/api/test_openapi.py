from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

pytestmark = pytest.mark.anyio

OPENAPI_YAML = Path(__file__).resolve().parents[2] / "openapi.yaml"


async def test_openapi_yaml_equals_the_served_schema(client: httpx.AsyncClient) -> None:
    served = (await client.get("/openapi.json")).json()
    assert yaml.safe_load(OPENAPI_YAML.read_text(encoding="utf-8")) == served


async def test_every_schema_has_a_description_or_example(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    for name in (
        "CountRequest",
        "CompactRequestBody",
        "ShouldCompactRequest",
        "CountResponse",
        "ShouldCompactResponse",
        "CompactResult",
        "ArchiveResponse",
        "ErrorResponse",
    ):
        schema = schemas[name]
        assert "examples" in schema or "description" in schema, name
