"""Anthropic's API as plain JSON over httpx: one POST, its answer or a typed failure.

The Messages API and `/v1/messages/count_tokens` need no SDK: a JSON body, the key in
`x-api-key`, the API version in `anthropic-version`. Without the SDK the service installs
beside any agent without pinning the agent's own `anthropic` (2.x moved to `httpx2`), and
respx intercepts these calls in the tests.

    AnthropicCallError          one call failed; `kind` says how
        kind "timeout"          the server took longer than the timeout
        kind "connection"       no answer (refused, reset, DNS, protocol error)
        kind "status"           an HTTP status >= 400: `status`, `headers`, the body's start
        kind "bad_response"     a 200 whose body is not JSON

Each failure is named as the SDK named it (`RateLimitError (HTTP 429)`, `APITimeoutError`),
so messages read as they did when the SDK made the call. The key is never in a message.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import httpx

from app.adapters.provider_errors import ERROR_BODY_BYTES

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"

CallFailure = Literal["timeout", "connection", "status", "bad_response"]

_STATUS_NAMES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    413: "RequestTooLargeError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    529: "OverloadedError",
}


def status_name(status: int) -> str:
    """The SDK's name for an error status (any other 5xx is `InternalServerError`)."""
    if status in _STATUS_NAMES:
        return _STATUS_NAMES[status]
    return "InternalServerError" if status >= 500 else "APIStatusError"


class AnthropicCallError(Exception):
    """One failed call; `name` is the SDK's name for it, `body` the error body's start."""

    def __init__(
        self,
        kind: CallFailure,
        name: str,
        status: int | None = None,
        headers: httpx.Headers | None = None,
        body: bytes = b"",
    ) -> None:
        super().__init__(name if status is None else f"{name} (HTTP {status})")
        self.kind = kind
        self.name = name
        self.status = status
        self.headers = headers or httpx.Headers()
        self.body = body


def anthropic_client(api_key: str, base_url: str | None, timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=(base_url or DEFAULT_BASE_URL).rstrip("/"),
        headers={"x-api-key": api_key, "anthropic-version": API_VERSION},
        timeout=httpx.Timeout(timeout),
    )


async def post_json(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> Any:
    """The JSON answer of one POST; any failure is an `AnthropicCallError`."""
    try:
        async with client.stream("POST", path, json=body) as response:
            if response.status_code >= 400:
                raise AnthropicCallError(
                    "status",
                    status_name(response.status_code),
                    response.status_code,
                    response.headers,
                    await _start(response),
                )
            raw = await response.aread()
    except httpx.TimeoutException:
        raise AnthropicCallError("timeout", "APITimeoutError") from None
    except httpx.HTTPError:  # refused, reset, DNS, a broken answer
        raise AnthropicCallError("connection", "APIConnectionError") from None
    try:
        return json.loads(raw)
    except ValueError:  # not JSON, or not UTF-8
        raise AnthropicCallError("bad_response", "APIResponseValidationError") from None


async def _start(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= ERROR_BODY_BYTES:
            break
    return b"".join(chunks)[:ERROR_BODY_BYTES]
