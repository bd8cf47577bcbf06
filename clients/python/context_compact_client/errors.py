"""Every failure is a `ContextCompactError`; the subtype says what kind, by HTTP status,
and `code` is the service's stable error code (`invalid_conversation`, `session_busy`...).

    ContextCompactError                  status, code, message, details
    ├── ServiceError                     the service answered an error (status set)
    │   ├── UnauthorizedError            401 unauthorized
    │   ├── NotFoundError                404 not_found
    │   ├── ConflictError                409 session_busy, job_not_done, prefix_mismatch, ...
    │   ├── RequestTooLargeError         413 request_too_large
    │   ├── InvalidRequestError          422 invalid_request, invalid_conversation, ...;
    │   │                                400 invalid_json
    │   ├── UnavailableError             503 busy, queue_full, ...; `retry_after` in seconds
    │   │   └── RateLimitedError         429 (a proxy's rate limit, say)
    │   └── DeadlineError                504 the request deadline passed
    ├── ConnectionFailedError            no answer: `code` is `timeout` or `unreachable`
    └── UnexpectedResponseError          an answer that is not the documented JSON
"""

from __future__ import annotations

from collections.abc import Sequence

from context_compact_client._options import retry_after_seconds
from context_compact_client.types import ErrorDetail


class ContextCompactError(Exception):
    """A request that did not succeed. `status` is None when no answer came."""

    def __init__(
        self,
        status: int | None,
        code: str,
        message: str,
        details: Sequence[ErrorDetail] = (),
    ) -> None:
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = list(details)


class ServiceError(ContextCompactError):
    """The service answered with an error body (`ErrorResponse`)."""

    status: int


class UnauthorizedError(ServiceError):
    """401: the server wants `Authorization: Bearer <token>` (pass `token=`)."""


class NotFoundError(ServiceError):
    """404: no such job or archive (unknown or expired)."""


class ConflictError(ServiceError):
    """409: the session is busy, the job is not done, or the list does not fit the job."""


class RequestTooLargeError(ServiceError):
    """413: the body is larger than the server accepts."""


class InvalidRequestError(ServiceError):
    """422 (or 400 for a body that is not JSON): input the service refuses; `details` names
    each field at fault."""


class UnavailableError(ServiceError):
    """503: busy, queue full, or storage failing; retry after `retry_after` seconds."""

    retry_after: float | None = None


class RateLimitedError(UnavailableError):
    """429: too many requests (a proxy's, say); retry after `retry_after` seconds."""


class DeadlineError(ServiceError):
    """504: the request took longer than the server's deadline."""


class ConnectionFailedError(ContextCompactError):
    """No answer: the connection failed (`unreachable`) or timed out (`timeout`)."""


class UnexpectedResponseError(ContextCompactError):
    """An answer that is not the JSON the API documents (a proxy's page, say)."""


_BY_STATUS: dict[int, type[ServiceError]] = {
    400: InvalidRequestError,
    401: UnauthorizedError,
    404: NotFoundError,
    409: ConflictError,
    413: RequestTooLargeError,
    422: InvalidRequestError,
    429: RateLimitedError,
    503: UnavailableError,
    504: DeadlineError,
}


def service_error(
    status: int,
    code: str,
    message: str,
    details: Sequence[ErrorDetail] = (),
    retry_after: str | None = None,
) -> ServiceError:
    """The subtype for `status` (`ServiceError` itself for any other)."""
    error = _BY_STATUS.get(status, ServiceError)(status, code, message, details)
    if isinstance(error, UnavailableError):
        error.retry_after = retry_after_seconds(retry_after)
    return error
