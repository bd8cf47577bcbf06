"""Operation ids, chosen by hand: generated clients turn them into their method names
(`client.compact(...)`, `countTokens`), so they are part of the API and stay stable when a
route's function is renamed. Every route must have one here; a route without one fails at
start-up, naming it."""

from __future__ import annotations

from fastapi.routing import APIRoute
from fastapi.utils import generate_unique_id

OPERATION_IDS = {
    "POST /count": "countTokens",
    "POST /should-compact": "shouldCompact",
    "POST /compact": "compact",
    "POST /compactions": "startCompaction",
    "GET /compactions/{job_id}": "getCompaction",
    "DELETE /compactions/{job_id}": "cancelCompaction",
    "POST /compactions/{job_id}/apply": "applyCompaction",
    "GET /archives/{archive_id}": "getArchive",
    "GET /sessions/{session_id}/compactions": "listCompactions",
    "POST /sessions/{session_id}/recall": "recall",
    "POST /compress-tool-result": "compressToolResult",
    "POST /preprocess-input": "preprocessInput",
    "GET /project-rules": "getProjectRules",
    "POST /assemble": "assemble",
    "GET /healthz": "healthz",
    "GET /readyz": "readyz",
    "GET /metrics": "metrics",
}


def operation_id(route: APIRoute) -> str:
    """The id of a route's one method (FastAPI's `generate_unique_id_function`); routes
    outside the schema (the documentation pages) keep FastAPI's."""
    if not route.include_in_schema:
        return generate_unique_id(route)
    [method] = sorted(route.methods or ())
    key = f"{method} {route.path_format}"
    try:
        return OPERATION_IDS[key]
    except KeyError:
        raise KeyError(f"no operation id for {key}: add one to OPERATION_IDS") from None
