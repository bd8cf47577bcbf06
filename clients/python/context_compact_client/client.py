"""The clients: `ContextCompactClient` (blocking) and `AsyncContextCompactClient`, with the
same methods, one per route, each taking the route's fields as keyword arguments (left out:
the server's default) and returning the decoded JSON answer, typed (`types`). Errors are
exceptions (`errors`). The address and token come from the arguments or the environment,
429 and 503 are retried, and `with_options` changes timeouts or retries for some calls
(`_options`)."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio
import httpx

from context_compact_client import _calls as calls
from context_compact_client._calls import Format, Messages, Reason, TokenizerName
from context_compact_client._options import (
    COMPACT_TIMEOUT,
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    Options,
    base_url_from,
    token_from,
)
from context_compact_client.types import (
    ApplyResponse,
    ArchiveResponse,
    AssembleResponse,
    CompactOptions,
    CompactResponse,
    CompressToolResultResponse,
    CountResponse,
    HealthResponse,
    JobResponse,
    PreprocessInputResponse,
    ProjectRulesResponse,
    ReadyResponse,
    RecallResponse,
    SessionCompactionsResponse,
    ShouldCompactResponse,
    ToolResultLimits,
    Usage,
)

__all__ = ["COMPACT_TIMEOUT", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT"]

_T = TypeVar("_T")
# The waits between retries (tests replace them).
_sleep = time.sleep
_async_sleep = anyio.sleep


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class _Configured:
    """The options both clients share, and `with_options`."""

    _options: Options

    def with_options(
        self,
        *,
        timeout: float | None = None,
        compact_timeout: float | None = None,
        max_retries: int | None = None,
        max_retry_after: float | None = None,
    ) -> Self:
        """A client for some calls with other timeouts or retries, on the same connections
        (close the original, not the copy)."""
        now = self._options
        clone = copy.copy(self)
        clone._options = replace(
            now,
            timeout=now.timeout if timeout is None else timeout,
            compact_timeout=now.compact_timeout if compact_timeout is None else compact_timeout,
            max_retries=now.max_retries if max_retries is None else max_retries,
            max_retry_after=now.max_retry_after if max_retry_after is None else max_retry_after,
        )
        return clone


def _options(
    timeout: float, compact_timeout: float, max_retries: int, max_retry_after: float
) -> Options:
    return Options(
        timeout=timeout,
        compact_timeout=compact_timeout,
        max_retries=max_retries,
        max_retry_after=max_retry_after,
    )


class ContextCompactClient(_Configured):
    """Blocking client. `base_url` and `token` default to `COMPACT_URL` and
    `COMPACT_API_TOKEN` in `environ` (the process environment unless given); `timeout`
    bounds every call but `/compact`, which `compact_timeout` bounds. `transport` is for
    tests (`httpx.MockTransport`) and proxies."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        compact_timeout: float = COMPACT_TIMEOUT,
        max_retries: int = 2,
        max_retry_after: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        environ = os.environ if environ is None else environ
        self._options = _options(timeout, compact_timeout, max_retries, max_retry_after)
        self._http = httpx.Client(
            base_url=base_url_from(base_url, environ),
            headers=_headers(token_from(token, environ)),
            transport=transport,
        )

    def _send(self, call: calls.Call[_T]) -> _T:
        options = self._options
        retry = 0
        while True:
            try:
                response = self._http.request(
                    call.method, call.path, json=call.body, timeout=options.timeout_for(call.slow)
                )
            except httpx.TransportError as exc:
                raise calls.transport_error(exc) from exc
            retry += 1
            wait = options.wait_before_retry(retry, response)
            if wait is None:
                return call.read(response)
            _sleep(wait)

    def count(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        tokenizer: TokenizerName | None = None,
    ) -> CountResponse:
        """`POST /count`: the token count of `messages`."""
        return self._send(
            calls.count(messages, format, tokenizer, calls.provider(model, system, tools, request))
        )

    def should_compact(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        tokenizer: TokenizerName | None = None,
        last_usage: Usage | Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        overflow_threshold: float | None = None,
        min_messages: int | None = None,
        session_id: str | None = None,
        options: CompactOptions | Mapping[str, Any] | None = None,
    ) -> ShouldCompactResponse:
        """`POST /should-compact`: whether to compact now (from `last_usage` when given)."""
        return self._send(
            calls.should_compact(
                messages,
                format=format,
                tokenizer=tokenizer,
                last_usage=last_usage,
                pending_input=pending_input,
                context_window=context_window,
                threshold=threshold,
                overflow_threshold=overflow_threshold,
                min_messages=min_messages,
                session_id=session_id,
                options=options,
                given=calls.provider(model, system, tools, request),
            )
        )

    def compact(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        session_id: str | None = None,
        force: bool | None = None,
        instructions: str | None = None,
        options: CompactOptions | Mapping[str, Any] | None = None,
        reason: Reason | None = None,
        last_usage: Usage | Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        tokenizer: TokenizerName | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        min_messages: int | None = None,
    ) -> CompactResponse:
        """`POST /compact`: the compacted messages, in the request's format."""
        return self._send(
            calls.compact(
                calls.compact_body(
                    messages,
                    format=format,
                    session_id=session_id,
                    force=force,
                    instructions=instructions,
                    options=options,
                    reason=reason,
                    last_usage=last_usage,
                    pending_input=pending_input,
                    tokenizer=tokenizer,
                    context_window=context_window,
                    threshold=threshold,
                    min_messages=min_messages,
                    given=calls.provider(model, system, tools, request),
                )
            )
        )

    def start_compaction(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        session_id: str | None = None,
        force: bool | None = None,
        instructions: str | None = None,
        options: CompactOptions | Mapping[str, Any] | None = None,
        reason: Reason | None = None,
        last_usage: Usage | Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        tokenizer: TokenizerName | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        min_messages: int | None = None,
    ) -> JobResponse:
        """`POST /compactions`: the same compaction as a background job (answered 202)."""
        return self._send(
            calls.start_compaction(
                calls.compact_body(
                    messages,
                    format=format,
                    session_id=session_id,
                    force=force,
                    instructions=instructions,
                    options=options,
                    reason=reason,
                    last_usage=last_usage,
                    pending_input=pending_input,
                    tokenizer=tokenizer,
                    context_window=context_window,
                    threshold=threshold,
                    min_messages=min_messages,
                    given=calls.provider(model, system, tools, request),
                )
            )
        )

    def get_compaction(self, job_id: str) -> JobResponse:
        """`GET /compactions/{job_id}`: the job's state, and its result once `done`."""
        return self._send(calls.get_compaction(job_id))

    def cancel_compaction(self, job_id: str) -> JobResponse:
        """`DELETE /compactions/{job_id}`: cancel (or forget a finished job)."""
        return self._send(calls.cancel_compaction(job_id))

    def apply_compaction(self, job_id: str, messages: Messages) -> ApplyResponse:
        """`POST /compactions/{job_id}/apply`: the result swapped into the current list."""
        return self._send(calls.apply_compaction(job_id, messages))

    def get_archive(self, archive_id: str) -> ArchiveResponse:
        """`GET /archives/{archive_id}`: the original messages one compaction replaced."""
        return self._send(calls.get_archive(archive_id))

    def list_compactions(self, session_id: str) -> SessionCompactionsResponse:
        """`GET /sessions/{session_id}/compactions`: the session's records, oldest first."""
        return self._send(calls.list_compactions(session_id))

    def recall(self, session_id: str, query: str, limit: int | None = None) -> RecallResponse:
        """`POST /sessions/{session_id}/recall`: snippets of the session's archived messages
        matching `query`, best first."""
        return self._send(calls.recall(session_id, query, limit))

    def compress_tool_result(
        self,
        tool: str,
        result: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        input: Mapping[str, Any] | None = None,
        is_error: bool | None = None,
        session_id: str | None = None,
        limits: ToolResultLimits | Mapping[str, Any] | None = None,
    ) -> CompressToolResultResponse:
        """`POST /compress-tool-result`: a tool result compressed for history."""
        return self._send(
            calls.compress_tool_result(
                tool,
                result,
                input=input,
                is_error=is_error,
                session_id=session_id,
                limits=limits,
            )
        )

    def preprocess_input(
        self, text: str, *, check_exists: bool | None = None, limit: int | None = None
    ) -> PreprocessInputResponse:
        """`POST /preprocess-input`: @file reminders appended to a user input."""
        return self._send(calls.preprocess_input(text, check_exists=check_exists, limit=limit))

    def project_rules(self) -> ProjectRulesResponse:
        """`GET /project-rules`: CODE_LAW.md of the work directory, if any."""
        return self._send(calls.PROJECT_RULES)

    def assemble(
        self,
        *,
        messages: Messages | None = None,
        format: Format | None = None,
        system: str | None = None,
        tools: str | None = None,
        rules: str | None = None,
        input: str | None = None,
        preprocess: bool | None = None,
        todo_recap: str | None = None,
    ) -> AssembleResponse:
        """`POST /assemble`: a model call's messages in layer order."""
        return self._send(
            calls.assemble(
                messages=messages,
                format=format,
                system=system,
                tools=tools,
                rules=rules,
                input=input,
                preprocess=preprocess,
                todo_recap=todo_recap,
            )
        )

    def healthz(self) -> HealthResponse:
        """`GET /healthz`: the process answers."""
        return self._send(calls.HEALTHZ)

    def readyz(self) -> ReadyResponse:
        """`GET /readyz`: readiness; a 503 answers `ready: false`, not an error."""
        return self._send(calls.READYZ)

    def metrics(self) -> str:
        """`GET /metrics`: the Prometheus text exposition."""
        return self._send(calls.METRICS)

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


class AsyncContextCompactClient(_Configured):
    """The same methods and options, awaitable. `transport` is for tests and in-process use
    (`httpx.ASGITransport(app=...)`)."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        compact_timeout: float = COMPACT_TIMEOUT,
        max_retries: int = 2,
        max_retry_after: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        environ = os.environ if environ is None else environ
        self._options = _options(timeout, compact_timeout, max_retries, max_retry_after)
        self._http = httpx.AsyncClient(
            base_url=base_url_from(base_url, environ),
            headers=_headers(token_from(token, environ)),
            transport=transport,
        )

    async def _send(self, call: calls.Call[_T]) -> _T:
        options = self._options
        retry = 0
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, json=call.body, timeout=options.timeout_for(call.slow)
                )
            except httpx.TransportError as exc:
                raise calls.transport_error(exc) from exc
            retry += 1
            wait = options.wait_before_retry(retry, response)
            if wait is None:
                return call.read(response)
            await _async_sleep(wait)

    async def count(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        tokenizer: TokenizerName | None = None,
    ) -> CountResponse:
        """`POST /count`: the token count of `messages`."""
        return await self._send(
            calls.count(messages, format, tokenizer, calls.provider(model, system, tools, request))
        )

    async def should_compact(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        tokenizer: TokenizerName | None = None,
        last_usage: Usage | Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        overflow_threshold: float | None = None,
        min_messages: int | None = None,
        session_id: str | None = None,
        options: CompactOptions | Mapping[str, Any] | None = None,
    ) -> ShouldCompactResponse:
        """`POST /should-compact`: whether to compact now (from `last_usage` when given)."""
        return await self._send(
            calls.should_compact(
                messages,
                format=format,
                tokenizer=tokenizer,
                last_usage=last_usage,
                pending_input=pending_input,
                context_window=context_window,
                threshold=threshold,
                overflow_threshold=overflow_threshold,
                min_messages=min_messages,
                session_id=session_id,
                options=options,
                given=calls.provider(model, system, tools, request),
            )
        )

    async def compact(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        session_id: str | None = None,
        force: bool | None = None,
        instructions: str | None = None,
        options: CompactOptions | Mapping[str, Any] | None = None,
        reason: Reason | None = None,
        last_usage: Usage | Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        tokenizer: TokenizerName | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        min_messages: int | None = None,
    ) -> CompactResponse:
        """`POST /compact`: the compacted messages, in the request's format."""
        return await self._send(
            calls.compact(
                calls.compact_body(
                    messages,
                    format=format,
                    session_id=session_id,
                    force=force,
                    instructions=instructions,
                    options=options,
                    reason=reason,
                    last_usage=last_usage,
                    pending_input=pending_input,
                    tokenizer=tokenizer,
                    context_window=context_window,
                    threshold=threshold,
                    min_messages=min_messages,
                    given=calls.provider(model, system, tools, request),
                )
            )
        )

    async def start_compaction(
        self,
        messages: Messages,
        *,
        model: str | None = None,
        system: calls.System | None = None,
        tools: calls.Tools | None = None,
        request: Mapping[str, Any] | None = None,
        format: Format | None = None,
        session_id: str | None = None,
        force: bool | None = None,
        instructions: str | None = None,
        options: CompactOptions | Mapping[str, Any] | None = None,
        reason: Reason | None = None,
        last_usage: Usage | Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        tokenizer: TokenizerName | None = None,
        context_window: int | None = None,
        threshold: float | None = None,
        min_messages: int | None = None,
    ) -> JobResponse:
        """`POST /compactions`: the same compaction as a background job (answered 202)."""
        return await self._send(
            calls.start_compaction(
                calls.compact_body(
                    messages,
                    format=format,
                    session_id=session_id,
                    force=force,
                    instructions=instructions,
                    options=options,
                    reason=reason,
                    last_usage=last_usage,
                    pending_input=pending_input,
                    tokenizer=tokenizer,
                    context_window=context_window,
                    threshold=threshold,
                    min_messages=min_messages,
                    given=calls.provider(model, system, tools, request),
                )
            )
        )

    async def get_compaction(self, job_id: str) -> JobResponse:
        """`GET /compactions/{job_id}`: the job's state, and its result once `done`."""
        return await self._send(calls.get_compaction(job_id))

    async def cancel_compaction(self, job_id: str) -> JobResponse:
        """`DELETE /compactions/{job_id}`: cancel (or forget a finished job)."""
        return await self._send(calls.cancel_compaction(job_id))

    async def apply_compaction(self, job_id: str, messages: Messages) -> ApplyResponse:
        """`POST /compactions/{job_id}/apply`: the result swapped into the current list."""
        return await self._send(calls.apply_compaction(job_id, messages))

    async def get_archive(self, archive_id: str) -> ArchiveResponse:
        """`GET /archives/{archive_id}`: the original messages one compaction replaced."""
        return await self._send(calls.get_archive(archive_id))

    async def list_compactions(self, session_id: str) -> SessionCompactionsResponse:
        """`GET /sessions/{session_id}/compactions`: the session's records, oldest first."""
        return await self._send(calls.list_compactions(session_id))

    async def recall(self, session_id: str, query: str, limit: int | None = None) -> RecallResponse:
        """`POST /sessions/{session_id}/recall`: snippets of the session's archived messages
        matching `query`, best first."""
        return await self._send(calls.recall(session_id, query, limit))

    async def compress_tool_result(
        self,
        tool: str,
        result: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        input: Mapping[str, Any] | None = None,
        is_error: bool | None = None,
        session_id: str | None = None,
        limits: ToolResultLimits | Mapping[str, Any] | None = None,
    ) -> CompressToolResultResponse:
        """`POST /compress-tool-result`: a tool result compressed for history."""
        return await self._send(
            calls.compress_tool_result(
                tool,
                result,
                input=input,
                is_error=is_error,
                session_id=session_id,
                limits=limits,
            )
        )

    async def preprocess_input(
        self, text: str, *, check_exists: bool | None = None, limit: int | None = None
    ) -> PreprocessInputResponse:
        """`POST /preprocess-input`: @file reminders appended to a user input."""
        return await self._send(
            calls.preprocess_input(text, check_exists=check_exists, limit=limit)
        )

    async def project_rules(self) -> ProjectRulesResponse:
        """`GET /project-rules`: CODE_LAW.md of the work directory, if any."""
        return await self._send(calls.PROJECT_RULES)

    async def assemble(
        self,
        *,
        messages: Messages | None = None,
        format: Format | None = None,
        system: str | None = None,
        tools: str | None = None,
        rules: str | None = None,
        input: str | None = None,
        preprocess: bool | None = None,
        todo_recap: str | None = None,
    ) -> AssembleResponse:
        """`POST /assemble`: a model call's messages in layer order."""
        return await self._send(
            calls.assemble(
                messages=messages,
                format=format,
                system=system,
                tools=tools,
                rules=rules,
                input=input,
                preprocess=preprocess,
                todo_recap=todo_recap,
            )
        )

    async def healthz(self) -> HealthResponse:
        """`GET /healthz`: the process answers."""
        return await self._send(calls.HEALTHZ)

    async def readyz(self) -> ReadyResponse:
        """`GET /readyz`: readiness; a 503 answers `ready: false`, not an error."""
        return await self._send(calls.READYZ)

    async def metrics(self) -> str:
        """`GET /metrics`: the Prometheus text exposition."""
        return await self._send(calls.METRICS)

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
