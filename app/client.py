"""A typed Python client for the HTTP API, sync (`ContextCompactClient`) and async
(`AsyncContextCompactClient`), with the same methods and the same answers.

Answers are the API's own response models (`app.api.schemas`, `app.api.job_schemas`),
so client and server cannot drift apart; a compaction answers `CompactResponse`: the
server's `CompactResult` with `messages` as plain dicts in the request's format, ready to
send to the model.

Errors, all `ContextCompactError`:

    ContextCompactError
    ├── status set   the service answered an error: its `code` (`invalid_request`,
    │                `invalid_conversation`, `not_found`, `session_busy`, ...), `message`
    │                and `details` (the fields at fault), as in `ErrorResponse`
    └── status None  no answer: `code` is `timeout` or `unreachable`

`readyz` is the exception: a 503 is an answer (`ready: false` and the failing checks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, Literal, Self, TypeVar

import httpx
from pydantic import ConfigDict, ValidationError

from app.api.job_schemas import ApplyResponse, JobResponse
from app.api.recall_schemas import RecallResponse
from app.api.schemas import (
    ArchiveResponse,
    CountResponse,
    ErrorDetail,
    HealthResponse,
    ReadyResponse,
    ShouldCompactResponse,
)
from app.api.schemas import CompactResponse as ApiCompactResponse
from app.core.compaction import CompactOptions

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
# An LLM summary may take its whole retry deadline (COMPACT_SUMMARY_DEADLINE, 120 s).
DEFAULT_TIMEOUT = 180.0

Messages = Sequence[Mapping[str, Any]]
Format = Literal["auto", "anthropic", "openai"]
TokenizerName = Literal["tiktoken", "anthropic"]
Options = CompactOptions | Mapping[str, Any]

_T = TypeVar("_T")


class CompactResponse(ApiCompactResponse):
    """A `/compact` answer; `messages` in the request's format, as JSON dicts."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    messages: list[dict[str, Any]]  # type: ignore[assignment]


class CompactionJob(JobResponse):
    """A background compaction; `result` is set once it is `done`."""

    result: CompactResponse | None = None


class ContextCompactError(Exception):
    """A request that did not succeed (see the module doc for the kinds)."""

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


@dataclass(frozen=True)
class _Call(Generic[_T]):
    """One request and how to read its answer: both clients send the same calls."""

    method: str
    path: str
    parse: Callable[[Any], _T]
    body: Mapping[str, Any] | None = None
    ok: tuple[int, ...] = (200,)


def _body(**fields: Any) -> dict[str, Any]:
    """Only the fields given: the server's defaults apply to the rest."""
    return {k: v for k, v in fields.items() if v is not None}


def _options(options: Options | None) -> Mapping[str, Any] | None:
    if isinstance(options, CompactOptions):
        return options.model_dump(exclude_none=True, exclude_defaults=True)
    return options


def _count(messages: Messages, format: Format, tokenizer: TokenizerName) -> _Call[CountResponse]:
    body = _body(messages=list(messages), format=format, tokenizer=tokenizer)
    return _Call("POST", "/count", CountResponse.model_validate, body)


def _should_compact(messages: Messages, **fields: Any) -> _Call[ShouldCompactResponse]:
    body = _body(messages=list(messages), **fields)
    return _Call("POST", "/should-compact", ShouldCompactResponse.model_validate, body)


def _compact_body(messages: Messages, options: Options | None, **fields: Any) -> dict[str, Any]:
    """The body `/compact` and `/compactions` share."""
    return _body(messages=list(messages), options=_options(options), **fields)


def _compact(messages: Messages, options: Options | None, **fields: Any) -> _Call[CompactResponse]:
    body = _compact_body(messages, options, **fields)
    return _Call("POST", "/compact", CompactResponse.model_validate, body)


def _start(messages: Messages, options: Options | None, **fields: Any) -> _Call[CompactionJob]:
    body = _compact_body(messages, options, **fields)
    return _Call("POST", "/compactions", CompactionJob.model_validate, body, ok=(202,))


def _job(method: str, job_id: str) -> _Call[CompactionJob]:
    # DELETE of a job another replica runs is 202: `cancel_requested`, the owner cancels.
    ok = (200, 202) if method == "DELETE" else (200,)
    return _Call(method, f"/compactions/{job_id}", CompactionJob.model_validate, ok=ok)


def _apply(job_id: str, messages: Messages) -> _Call[ApplyResponse]:
    path = f"/compactions/{job_id}/apply"
    return _Call("POST", path, ApplyResponse.model_validate, {"messages": list(messages)})


def _archive(archive_id: str) -> _Call[ArchiveResponse]:
    return _Call("GET", f"/archives/{archive_id}", ArchiveResponse.model_validate)


def _recall(session_id: str, query: str, limit: int | None) -> _Call[RecallResponse]:
    path = f"/sessions/{session_id}/recall"
    return _Call("POST", path, RecallResponse.model_validate, _body(query=query, limit=limit))


_HEALTHZ = _Call("GET", "/healthz", HealthResponse.model_validate)
_READYZ = _Call("GET", "/readyz", ReadyResponse.model_validate, ok=(200, 503))


def _read_response(response: httpx.Response, call: _Call[_T]) -> _T:
    if response.status_code not in call.ok:
        raise _error_from(response)
    try:
        return call.parse(response.json())
    except (ValueError, ValidationError) as exc:
        raise ContextCompactError(
            response.status_code, "unexpected_response", f"{call.path}: {exc}"
        ) from exc


def _error_from(response: httpx.Response) -> ContextCompactError:
    try:
        data = response.json()
        details = [ErrorDetail.model_validate(d) for d in data.get("details", [])]
        return ContextCompactError(
            response.status_code, str(data["error"]), str(data["message"]), details
        )
    except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
        return ContextCompactError(response.status_code, "http_error", response.text[:500])


def _transport_error(exc: httpx.TransportError) -> ContextCompactError:
    code = "timeout" if isinstance(exc, httpx.TimeoutException) else "unreachable"
    return ContextCompactError(None, code, str(exc) or type(exc).__name__)


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class ContextCompactClient:
    """Blocking client. `transport` is for tests (an `httpx.MockTransport`, say)."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(token), timeout=timeout, transport=transport
        )

    def _send(self, call: _Call[_T]) -> _T:
        try:
            response = self._http.request(call.method, call.path, json=call.body)
        except httpx.TransportError as exc:
            raise _transport_error(exc) from exc
        return _read_response(response, call)

    def count(
        self, messages: Messages, *, format: Format = "auto", tokenizer: TokenizerName = "tiktoken"
    ) -> CountResponse:
        return self._send(_count(messages, format, tokenizer))

    def should_compact(
        self,
        messages: Messages,
        *,
        last_usage: Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        format: Format = "auto",
    ) -> ShouldCompactResponse:
        return self._send(
            _should_compact(
                messages,
                last_usage=last_usage,
                pending_input=pending_input,
                context_window=context_window,
                threshold=threshold,
                format=format,
            )
        )

    def compact(
        self,
        messages: Messages,
        *,
        session_id: str | None = None,
        force: bool = False,
        instructions: str | None = None,
        options: Options | None = None,
        format: Format = "auto",
    ) -> CompactResponse:
        return self._send(
            _compact(
                messages,
                options,
                session_id=session_id,
                force=force,
                instructions=instructions,
                format=format,
            )
        )

    def start_compaction(
        self,
        messages: Messages,
        *,
        session_id: str | None = None,
        force: bool = False,
        instructions: str | None = None,
        options: Options | None = None,
        format: Format = "auto",
    ) -> CompactionJob:
        return self._send(
            _start(
                messages,
                options,
                session_id=session_id,
                force=force,
                instructions=instructions,
                format=format,
            )
        )

    def get_compaction(self, job_id: str) -> CompactionJob:
        return self._send(_job("GET", job_id))

    def cancel_compaction(self, job_id: str) -> CompactionJob:
        return self._send(_job("DELETE", job_id))

    def apply_compaction(self, job_id: str, messages: Messages) -> ApplyResponse:
        return self._send(_apply(job_id, messages))

    def get_archive(self, archive_id: str) -> ArchiveResponse:
        return self._send(_archive(archive_id))

    def recall(self, session_id: str, query: str, limit: int | None = None) -> RecallResponse:
        """Snippets of the session's archived messages matching `query`, best first."""
        return self._send(_recall(session_id, query, limit))

    def healthz(self) -> HealthResponse:
        return self._send(_HEALTHZ)

    def readyz(self) -> ReadyResponse:
        return self._send(_READYZ)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncContextCompactClient:
    """The same methods as `ContextCompactClient`, awaitable. `transport` is for tests
    and in-process use (`httpx.ASGITransport(app=...)`)."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(token), timeout=timeout, transport=transport
        )

    async def _send(self, call: _Call[_T]) -> _T:
        try:
            response = await self._http.request(call.method, call.path, json=call.body)
        except httpx.TransportError as exc:
            raise _transport_error(exc) from exc
        return _read_response(response, call)

    async def count(
        self, messages: Messages, *, format: Format = "auto", tokenizer: TokenizerName = "tiktoken"
    ) -> CountResponse:
        return await self._send(_count(messages, format, tokenizer))

    async def should_compact(
        self,
        messages: Messages,
        *,
        last_usage: Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        format: Format = "auto",
    ) -> ShouldCompactResponse:
        return await self._send(
            _should_compact(
                messages,
                last_usage=last_usage,
                pending_input=pending_input,
                context_window=context_window,
                threshold=threshold,
                format=format,
            )
        )

    async def compact(
        self,
        messages: Messages,
        *,
        session_id: str | None = None,
        force: bool = False,
        instructions: str | None = None,
        options: Options | None = None,
        format: Format = "auto",
    ) -> CompactResponse:
        return await self._send(
            _compact(
                messages,
                options,
                session_id=session_id,
                force=force,
                instructions=instructions,
                format=format,
            )
        )

    async def start_compaction(
        self,
        messages: Messages,
        *,
        session_id: str | None = None,
        force: bool = False,
        instructions: str | None = None,
        options: Options | None = None,
        format: Format = "auto",
    ) -> CompactionJob:
        return await self._send(
            _start(
                messages,
                options,
                session_id=session_id,
                force=force,
                instructions=instructions,
                format=format,
            )
        )

    async def get_compaction(self, job_id: str) -> CompactionJob:
        return await self._send(_job("GET", job_id))

    async def cancel_compaction(self, job_id: str) -> CompactionJob:
        return await self._send(_job("DELETE", job_id))

    async def apply_compaction(self, job_id: str, messages: Messages) -> ApplyResponse:
        return await self._send(_apply(job_id, messages))

    async def get_archive(self, archive_id: str) -> ArchiveResponse:
        return await self._send(_archive(archive_id))

    async def recall(self, session_id: str, query: str, limit: int | None = None) -> RecallResponse:
        """Snippets of the session's archived messages matching `query`, best first."""
        return await self._send(_recall(session_id, query, limit))

    async def healthz(self) -> HealthResponse:
        return await self._send(_HEALTHZ)

    async def readyz(self) -> ReadyResponse:
        return await self._send(_READYZ)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
