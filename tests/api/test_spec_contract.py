"""openapi.yaml is a contract that tools can trust: its examples validate against their own
schemas, real answers validate against the response schemas, known content blocks match
exactly one schema, and every operation documents the errors it can give."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from app.api.deadline import OPEN_PATHS
from tests.builders import assistant, read_round, rounds, system, tool_use, user
from tests.spec import load_spec

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SPEC: dict[str, Any] = load_spec()
CORPUS = ROOT / "tests" / "data" / "corpus"
_REGISTRY = Registry().with_resource("urn:spec", Resource(SPEC, DRAFT202012))


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of `schema`, its `#/components/...` refs resolved in openapi.yaml."""
    return Draft202012Validator(_rebase(schema), registry=_REGISTRY)


def _rebase(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (f"urn:spec{v}" if k == "$ref" and isinstance(v, str) else _rebase(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_rebase(v) for v in value]
    return value


def component(name: str) -> Draft202012Validator:
    return validator({"$ref": f"#/components/schemas/{name}"})


def _schema_examples(where: str, schema: Any) -> Iterator[tuple[str, Any, Any]]:
    """(where, schema, example) for every `examples` list in a schema and its subschemas."""
    if isinstance(schema, dict):
        for example in (
            schema.get("examples", []) if isinstance(schema.get("examples"), list) else []
        ):
            yield where, schema, example
        for key, sub in schema.items():
            if key != "examples":
                yield from _schema_examples(f"{where}/{key}", sub)
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            yield from _schema_examples(f"{where}/{i}", sub)


def every_example() -> Iterator[tuple[str, Any, Any]]:
    for name, schema in SPEC["components"]["schemas"].items():
        yield from _schema_examples(f"#/components/schemas/{name}", schema)
    for path, operations in SPEC["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                yield from _schema_examples(f"{where} {parameter['name']}", parameter["schema"])
            bodies = [operation.get("requestBody", {}), *list(operation["responses"].values())]
            for body in bodies:
                for media in body.get("content", {}).values():
                    if "example" in media:
                        yield where, media["schema"], media["example"]
                    for example in media.get("examples", {}).values():
                        yield where, media["schema"], example["value"]


EXAMPLES = list(every_example())


def test_the_document_has_examples_to_check() -> None:
    assert len(EXAMPLES) > 30


@pytest.mark.parametrize(("where", "schema", "example"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_example_is_valid_against_its_own_schema(
    where: str, schema: dict[str, Any], example: Any
) -> None:
    errors = [e.message for e in validator(schema).iter_errors(example)]
    assert errors == [], f"{where}: {errors[:3]}"


BLOCKS = [
    {"type": "text", "text": "hi"},
    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.py"}},
    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "x"}]},
    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
    {"type": "redacted_thinking", "data": "opaque"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}},
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
]


@pytest.mark.parametrize("block", BLOCKS, ids=[b["type"] for b in BLOCKS])
def test_each_block_matches_exactly_one_schema_of_the_union(block: dict[str, Any]) -> None:
    items = SPEC["components"]["schemas"]["Message"]["properties"]["content"]["anyOf"][1]
    branches = items["items"]["oneOf"]
    matching = [b["$ref"] for b in branches if validator(b).is_valid(block)]
    expected = "UnknownBlock" if block["type"] == "server_tool_use" else None
    assert len(matching) == 1, matching
    if expected:
        assert matching[0].endswith(expected)
    assert component("Message").is_valid({"role": "assistant", "content": [block]})


def test_the_unknown_block_schema_excludes_every_known_type() -> None:
    unknown = SPEC["components"]["schemas"]["UnknownBlock"]["properties"]["type"]
    assert unknown["not"] == {
        "enum": [
            "document",
            "image",
            "redacted_thinking",
            "text",
            "thinking",
            "tool_result",
            "tool_use",
        ]
    }


def test_every_operation_documents_401_413_and_422_where_they_can_happen() -> None:
    for path, operations in SPEC["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert "413" in codes, (method, path)
            assert ("401" in codes) == (path not in OPEN_PATHS), (method, path)
            takes_input = "requestBody" in operation or operation.get("parameters")
            if takes_input:
                assert "422" in codes, (method, path)


def test_every_success_answer_has_a_schema() -> None:
    for path, operations in SPEC["paths"].items():
        for method, operation in operations.items():
            for code, answer in operation["responses"].items():
                if code.startswith("2"):
                    content = answer["content"]
                    assert all("schema" in media for media in content.values()), (method, path)
    assemble = SPEC["paths"]["/assemble"]["post"]["responses"]["200"]["content"]
    assert assemble["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AssembleResponse"
    }


def test_the_document_names_servers_a_license_and_both_message_shapes() -> None:
    assert SPEC["servers"][0]["url"] == "/"
    assert SPEC["info"]["license"] == {"name": "MIT", "identifier": "MIT"}
    assert "Anthropic Messages" in SPEC["info"]["description"]
    assert "OpenAI Chat Completions" in SPEC["info"]["description"]


def conversations() -> list[tuple[str, list[dict[str, Any]]]]:
    """A few built conversations in both shapes, and the in-repo corpus when present."""
    call = tool_use("read_file", "toolu_9", path="src/app.py")
    built: list[tuple[str, list[dict[str, Any]]]] = [
        ("short", [system("You are a coding agent."), user("Hi."), assistant("Hello.")]),
        ("rounds", [system("You are a coding agent."), *rounds(1, 6)]),
        (
            "reads",
            [
                system("You are a coding agent."),
                user("Fix src/app.py."),
                *read_round("src/app.py", "def f(:\n    pass\n"),
                assistant({"type": "thinking", "thinking": "ok", "signature": "s"}, call),
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}],
                },
                assistant("Fixed it."),
            ],
        ),
        (
            "openai",
            [
                {"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": "Read it."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "def f(): ..."},
                {"role": "assistant", "content": "Done."},
            ],
        ),
    ]
    for path in sorted(CORPUS.rglob("*.json")) if CORPUS.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        messages = data.get("messages") if isinstance(data, dict) else data
        if isinstance(messages, list):
            built.append((str(path.relative_to(CORPUS)), messages))
    return built


CONVERSATIONS = conversations()


def response_schema(path: str, status: str = "200") -> Draft202012Validator:
    content = SPEC["paths"][path]["post"]["responses"][status]["content"]
    return validator(content["application/json"]["schema"])


@pytest.mark.parametrize(
    ("name", "messages"), CONVERSATIONS, ids=[name for name, _ in CONVERSATIONS]
)
async def test_real_answers_are_valid_against_the_response_schemas(
    client: httpx.AsyncClient, name: str, messages: list[dict[str, Any]]
) -> None:
    calls = [
        ("/count", {"messages": messages}),
        ("/should-compact", {"messages": messages}),
        ("/should-compact", {"messages": messages, "context_window": 1000, "threshold": 0.5}),
        ("/compact", {"messages": messages, "force": True}),
        ("/compact", {"messages": messages}),
    ]
    for path, body in calls:
        response = await client.post(path, json=body)
        assert response.status_code == 200, (path, response.text[:300])
        errors = [e.message[:200] for e in response_schema(path).iter_errors(response.json())]
        assert errors == [], (path, errors[:3])
    compacted = (await client.post("/compact", json={"messages": messages, "force": True})).json()
    if compacted["format"] == "anthropic":
        message = component("Message")
        assert all(message.is_valid(m) for m in compacted["messages"])


async def test_an_error_answer_is_valid_against_the_error_schema(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/count", json={"messages": [{"role": "nobody"}]})
    assert response.status_code == 422
    assert response_schema("/count", "422").is_valid(response.json())
