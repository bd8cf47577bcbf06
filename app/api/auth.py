"""Optional bearer-token authentication (`COMPACT_API_TOKEN`).

With a token set, every request must carry `Authorization: Bearer <token>` except the
probes and metrics (`OPEN_PATHS`) and the documentation (`/docs`, `/redoc`, their assets
and `/openapi.json`: the published schema, the same for every deployment, which Swagger UI
must load before its Authorize button can take the token). The check runs before the body
is read, so an unauthenticated caller cannot make us parse anything. The comparison is
constant-time (`hmac.compare_digest`) over bytes; the token is never logged, and a refusal
never says which part was wrong.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.deadline import OPEN_PATHS
from app.api.docs import is_documentation
from app.api.errors import error_response
from app.api.schemas import ErrorResponse

SCHEME_NAME = "bearerAuth"
_CHALLENGE = 'Bearer realm="context-compact"'


class BearerAuth:
    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the API token must not be empty")
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in OPEN_PATHS or is_documentation(path):
            await self.app(scope, receive, send)
            return
        presented = _bearer(scope)
        if presented is not None and hmac.compare_digest(presented, self._expected):
            await self.app(scope, receive, send)
            return
        challenge = _CHALLENGE if presented is None else f'{_CHALLENGE}, error="invalid_token"'
        response = error_response(
            401,
            ErrorResponse(
                error="unauthorized",
                message="this server needs an `Authorization: Bearer <token>` header",
            ),
            headers={"WWW-Authenticate": challenge},
        )
        await response(scope, receive, send)


def _bearer(scope: Scope) -> bytes | None:
    """The credentials of the one `Authorization: Bearer` header, or None."""
    values = [value for name, value in scope.get("headers") or [] if name == b"authorization"]
    if len(values) != 1:
        return None
    scheme, _, credentials = values[0].strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return credentials.strip() or None


def document_bearer_auth(app: FastAPI) -> None:
    """Declares the scheme in the OpenAPI schema as optional (`{}` or the token), whatever
    this server's setting, so one exported schema fits every deployment; the open probes
    declare no security."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        schema.setdefault("components", {}).setdefault("securitySchemes", {})[SCHEME_NAME] = {
            "type": "http",
            "scheme": "bearer",
            "description": "Required when the server sets COMPACT_API_TOKEN.",
        }
        schema["security"] = [{}, {SCHEME_NAME: []}]
        for path, operations in schema.get("paths", {}).items():
            if path in OPEN_PATHS:
                for operation in operations.values():
                    operation["security"] = []
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
