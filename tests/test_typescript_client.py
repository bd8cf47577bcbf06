"""The generated TypeScript types (clients/typescript/src/schema.d.ts) keep the spec's
optional request fields optional: a generator's defaults would make every field with a
server default required, and callers would have to send all of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.spec import load_spec

# Compiles and runs external tools (tsc, the Kubernetes schemas): CI's slow step runs it.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SPEC: dict[str, Any] = load_spec()
TYPES = (ROOT / "clients" / "typescript" / "src" / "schema.d.ts").read_text(encoding="utf-8")
# Request bodies: every closed schema, and every body a route takes (the counting and
# compacting bodies are open to the provider's own fields).
BODIES = {
    body["content"]["application/json"]["schema"].get("$ref", "").rsplit("/", 1)[-1]
    for route in SPEC["paths"].values()
    for operation in route.values()
    if isinstance(operation, dict) and (body := operation.get("requestBody"))
}
REQUESTS = sorted(
    name
    for name, schema in SPEC["components"]["schemas"].items()
    if "properties" in schema and (schema.get("additionalProperties") is False or name in BODIES)
)


def typed_fields(name: str) -> dict[str, bool]:
    """Each property of `name` in schema.d.ts, and whether it is required (no `?`)."""
    start = TYPES.index(f"\n        {name}: {{\n")
    end = TYPES.index("\n        };\n", start)
    body = TYPES[start:end]
    return {
        m.group(1): m.group(2) == ""
        for m in re.finditer(r"^ {12}([A-Za-z_]\w*)(\??): ", body, re.MULTILINE)
    }


def test_there_are_request_schemas_to_check() -> None:
    assert {"CountRequest", "ShouldCompactRequest", "CompactRequestBody"} <= set(REQUESTS)


@pytest.mark.slow
@pytest.mark.parametrize("name", REQUESTS)
def test_optional_request_fields_are_optional_in_typescript(name: str) -> None:
    schema = SPEC["components"]["schemas"][name]
    required = set(schema.get("required", []))
    assert typed_fields(name) == {field: field in required for field in schema["properties"]}
