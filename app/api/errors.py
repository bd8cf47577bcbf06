"""Errors as part of the API: every failure answers `ErrorResponse` JSON, never a bare 500.

Validation errors name the offending field the way a caller writes it
(`messages[3].content[0].text`), not pydantic's internal location with union branch labels
(`body.messages.3.content.list[tagged-union[...]].0.text.text`). A body that is not JSON at
all (malformed, or not UTF-8) is a 400 `invalid_json` naming the problem and where it is:
there is no field to name.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.api.fields import validation_details
from app.api.provider import RequestFieldError
from app.api.responses import JsonResponse
from app.api.schemas import ErrorDetail, ErrorResponse
from app.core.errors import InvalidConversationError
from app.core.request_context import REQUEST_ID

log = logging.getLogger("context_compact.api")


class ApiError(Exception):
    """An error that carries its own HTTP status and stable code."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str | None = None,
        details: Sequence[ErrorDetail] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.details = list(details)


def invalid_conversation(exc: InvalidConversationError, head: int = 0) -> ApiError:
    """422 `invalid_conversation`: one detail per broken rule, at `messages[i]` of the
    request (`head`: canonical messages read from a top-level `system`, named `system`)."""
    details = [
        ErrorDetail(
            field=f"messages[{v.index - head}]" if v.index >= head else "system", message=str(v)
        )
        for v in exc.violations
    ]
    summary = "; ".join(f"{d.field}: {d.message}" for d in details[:5])
    return ApiError(422, "invalid_conversation", summary, details=details)


def error_response(status: int, body: ErrorResponse, headers: dict[str, str] | None = None) -> Any:
    return JsonResponse(body.model_dump(mode="json"), status_code=status, headers=headers)


async def _on_validation_error(request: Request, exc: Exception) -> Any:
    if not isinstance(exc, RequestValidationError):
        raise exc
    errors = exc.errors()
    malformed = next((e for e in errors if e.get("type") == "json_invalid"), None)
    if malformed is not None:
        return error_response(400, _not_json(malformed))
    details = validation_details(errors)
    summary = "; ".join(f"{d.field}: {d.message}" for d in details[:5])
    return error_response(
        422, ErrorResponse(error="invalid_request", message=summary, details=details)
    )


async def _on_field_error(request: Request, exc: Exception) -> Any:
    if not isinstance(exc, RequestFieldError):
        raise exc
    return await _on_validation_error(request, RequestValidationError(exc.errors))


async def _on_api_error(request: Request, exc: Exception) -> Any:
    if not isinstance(exc, ApiError):
        raise exc
    details = exc.details or (
        [ErrorDetail(field=exc.field, message=exc.message)] if exc.field else []
    )
    return error_response(
        exc.status, ErrorResponse(error=exc.code, message=exc.message, details=details)
    )


async def _on_http_error(request: Request, exc: Exception) -> Any:
    if not isinstance(exc, StarletteHTTPException):
        raise exc
    if isinstance(exc.__cause__, UnicodeDecodeError):
        # FastAPI answers a body that is not UTF-8 with a bare 400; it is bad input like
        # any invalid JSON, so it gets the same answer naming the problem.
        return error_response(400, _not_utf8(exc.__cause__))
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_response(
        exc.status_code,
        ErrorResponse(error=code, message=str(exc.detail)),
        headers=dict(exc.headers or {}),
    )


def _not_utf8(cause: UnicodeDecodeError) -> ErrorResponse:
    return _invalid_json(f"not UTF-8 JSON: {cause.reason} at byte {cause.start}")


def _not_json(error: Any) -> ErrorResponse:
    """FastAPI's `json_invalid` error: the decoder's reason, at its character offset."""
    loc = error.get("loc", ())
    where = f" at character {loc[-1]}" if loc and isinstance(loc[-1], int) else ""
    reason = (error.get("ctx") or {}).get("error") or "malformed"
    return _invalid_json(f"not valid JSON: {reason}{where}")


def _invalid_json(message: str) -> ErrorResponse:
    return ErrorResponse(
        error="invalid_json",
        message=f"body: {message}",
        details=[ErrorDetail(field="body", message=message)],
    )


async def _on_unexpected(request: Request, exc: Exception) -> Any:
    log.exception("unhandled error", extra={"path": request.url.path})
    request_id = REQUEST_ID.get()
    return error_response(
        500,
        ErrorResponse(error="internal_error", message="internal error; see the server log"),
        headers={"X-Request-ID": request_id} if request_id else None,
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(RequestFieldError, _on_field_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
