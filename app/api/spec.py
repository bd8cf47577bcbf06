"""The last touches to the OpenAPI document, so that validators, linters and client
generators can trust it: the error answers every operation can give, and the examples as
they were written.

Every operation can answer 413 (the body limit applies to every request) and, unless it is
an open probe, 401 (with `COMPACT_API_TOKEN` set); every operation that takes a body answers
400 for a body that is not JSON, and every one that takes input 422 for input it refuses.
Those come from middleware and shared handlers, so the routes do not declare them one by one:
they are added here, in one place, each error status with an example of its own.

FastAPI drops every `None` from the document it builds, the `null`s of the examples
included, which makes an example with a nullable required field invalid against its own
schema; the examples are put back from the models, as written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

from app.api.deadline import OPEN_PATHS
from app.api.error_examples import error_example
from app.service.registry import STRATEGIES

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}
_ERROR_REF = "#/components/schemas/ErrorResponse"
_COMMON_ERRORS = {
    "400": "The body is not JSON: malformed, or not UTF-8 (`invalid_json`, naming the problem "
    "and where it is).",
    "401": "Unauthorized: the server sets `COMPACT_API_TOKEN` and the request has no valid "
    "`Authorization: Bearer <token>` header (`unauthorized`).",
    "413": "The body is larger than `COMPACT_MAX_REQUEST_BYTES` (`request_too_large`).",
    "422": "Input this service refuses: `details` names each field at fault.",
}


def _takes_input(operation: dict[str, Any]) -> bool:
    return "requestBody" in operation or bool(operation.get("parameters"))


def _add_errors(schema: dict[str, Any]) -> None:
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            codes = ["413"]
            if path not in OPEN_PATHS:
                codes.insert(0, "401")
            if "requestBody" in operation:
                codes.append("400")
            if _takes_input(operation):
                codes.append("422")
            responses = operation.setdefault("responses", {})
            for code in codes:
                responses.setdefault(code, {"description": _COMMON_ERRORS[code], "content": _ERROR})
            for code, response in responses.items():
                _add_example(operation.get("operationId", ""), code, response)
            operation["responses"] = dict(sorted(responses.items()))


def _add_example(operation_id: str, code: str, response: dict[str, Any]) -> None:
    """Gives an `ErrorResponse` answer the example of its own status (a copy of the shared
    content, which other operations hold too)."""
    media = response.get("content", {}).get("application/json")
    if media is None or media.get("schema", {}).get("$ref") != _ERROR_REF:
        return
    example = error_example(operation_id, code)
    if example is not None and "example" not in media:
        response["content"] = {"application/json": {**media, "example": example}}


def _restore_examples(schema: dict[str, Any], models: Iterable[type[BaseModel]]) -> None:
    components = schema.get("components", {}).get("schemas", {})
    for model in models:
        extra = model.model_config.get("json_schema_extra")
        component = components.get(model.__name__)
        if isinstance(extra, dict) and "examples" in extra and component is not None:
            component["examples"] = extra["examples"]


def _subclasses(base: type[BaseModel]) -> Iterable[type[BaseModel]]:
    for sub in base.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _describe_strategies(schema: dict[str, Any]) -> None:
    """The request's `strategy` field says what each registered strategy does, in the
    registry's order, as each strategy describes itself."""
    field = schema["components"]["schemas"]["CompactOptions"]["properties"]["strategy"]
    field["description"] = " ".join(f"`{n}`: {s.description}" for n, s in STRATEGIES.items())


def finish_openapi(app: FastAPI) -> None:
    """Wraps `app.openapi` (after `document_bearer_auth`) to add the common errors and put
    back the examples' nulls."""
    build: Callable[[], dict[str, Any]] = app.openapi

    finished: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        schema = build()
        if not any(schema is done for done in finished):
            _add_errors(schema)
            _describe_strategies(schema)
            ours = {m for m in _subclasses(BaseModel) if m.__module__.startswith("app.")}
            _restore_examples(schema, ours)
            finished.append(schema)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
