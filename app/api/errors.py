"""Errors as part of the API: every failure answers `ErrorResponse` JSON, never a bare 500.

Every error the pipeline raises on purpose (`CompactError`, `app.core.errors` draws the
tree) carries its HTTP status, code, field and details; `_on_compact_error` is the one
place they become a response, so a route catches none of them.

Validation errors name the offending field the way a caller writes it
(`messages[3].content[0].text`), not pydantic's internal location with union branch labels
(`body.messages.3.content.list[tagged-union[...]].0.text.text`). A body that is not JSON at
all (malformed, or not UTF-8) is a 400 `invalid_json` naming the problem and where it is:
there is no field to name.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.api.fields import validation_details
from app.api.provider import RequestFieldError
from app.api.responses import JsonResponse
from app.api.schemas import ErrorDetail, ErrorResponse
from app.core.errors import CompactError
from app.core.request_context import REQUEST_ID

log = logging.getLogger("context_compact.api")


class ApiError(CompactError):
    """A refusal of the API's own (a bad id, a body too large, an unknown resource), with
    its HTTP status and stable code given where it is raised."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.field = field


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


async def _on_compact_error(request: Request, exc: Exception) -> Any:
    if not isinstance(exc, CompactError):
        raise exc
    if exc.status is None:  # the service answers it: one reaching a route is a bug
        return await _on_unexpected(request, exc)
    details = [ErrorDetail(field=field, message=message) for field, message in exc.details()]
    retry = exc.retry_after_seconds
    return error_response(
        exc.status,
        ErrorResponse(error=exc.code, message=exc.message, details=details),
        headers={"Retry-After": str(retry)} if retry is not None else None,
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
    app.add_exception_handler(CompactError, _on_compact_error)
    app.add_exception_handler(RequestFieldError, _on_field_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
