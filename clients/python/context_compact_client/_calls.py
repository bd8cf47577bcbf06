"""One description per route of the request to send and how to read its answer, so the
blocking and the async client send exactly the same calls."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast
from urllib.parse import quote

import httpx

from context_compact_client.errors import (
    ConnectionFailedError,
    ContextCompactError,
    UnexpectedResponseError,
    service_error,
)
from context_compact_client.types import (
    ApplyResponse,
    ArchiveResponse,
    AssembleResponse,
    CompactOptions,
    CompactResponse,
    CompressToolResultResponse,
    CountResponse,
    ErrorDetail,
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

Messages = Sequence[Mapping[str, Any]]
Format = Literal["auto", "anthropic", "openai"]
TokenizerName = Literal["tiktoken", "o200k", "anthropic"]
System = str | Sequence[Mapping[str, Any]]
Tools = Sequence[Mapping[str, Any]]
Reason = Literal["llm_call", "tool_execution", "manual"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Call(Generic[_T]):
    """One request and how to read its answer."""

    method: str
    path: str
    body: Mapping[str, Any] | None = None
    ok: tuple[int, ...] = (200,)
    text: bool = False  # the answer is text, not JSON (`/metrics`)
    slow: bool = False  # may wait on an LLM: the longer timeout (`Options.compact_timeout`)

    def read(self, response: httpx.Response) -> _T:
        if response.status_code not in self.ok:
            raise error_from(response)
        if self.text:
            return cast(_T, response.text)
        try:
            data = response.json()
        except ValueError as exc:
            raise UnexpectedResponseError(
                response.status_code, "unexpected_response", f"{self.path}: not JSON"
            ) from exc
        if not isinstance(data, dict):
            raise UnexpectedResponseError(
                response.status_code, "unexpected_response", f"{self.path}: not a JSON object"
            )
        return cast(_T, data)


def error_from(response: httpx.Response) -> ContextCompactError:
    """The error for an answer outside the call's success statuses."""
    try:
        data = response.json()
        details = [
            ErrorDetail(field=d.get("field"), message=str(d["message"]))
            for d in data.get("details", [])
        ]
        code, message = str(data["error"]), str(data["message"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return UnexpectedResponseError(response.status_code, "http_error", response.text[:500])
    return service_error(
        response.status_code, code, message, details, response.headers.get("retry-after")
    )


def transport_error(exc: httpx.TransportError) -> ConnectionFailedError:
    code = "timeout" if isinstance(exc, httpx.TimeoutException) else "unreachable"
    return ConnectionFailedError(None, code, str(exc) or type(exc).__name__)


def body(**fields: Any) -> dict[str, Any]:
    """Only the fields given: the server's defaults apply to the rest."""
    return {k: v for k, v in fields.items() if v is not None}


def _id(value: str) -> str:
    return quote(value, safe="")


def provider(
    model: str | None,
    system: System | None,
    tools: Tools | None,
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provider request's own fields the service reads: the model (its window and
    tokenizer), Anthropic's top-level system prompt, the tool definitions (counted); with
    `request` (the body an SDK would send), every field of it, in its order, `messages`
    holding its place (the call's `messages` go there). The arguments win over `request`."""
    sent = {k: None if k == "messages" else v for k, v in (request or {}).items()}
    return sent | body(
        model=model,
        system=system if isinstance(system, str) or system is None else [dict(b) for b in system],
        tools=[dict(t) for t in tools] if tools is not None else None,
    )


def count(
    messages: Messages,
    format: Format | None,
    tokenizer: TokenizerName | None,
    given: Mapping[str, Any] | None = None,
) -> Call[CountResponse]:
    fields = body(messages=list(messages), format=format, tokenizer=tokenizer)
    return Call("POST", "/count", {**(given or {}), **fields})


def should_compact(
    messages: Messages,
    *,
    format: Format | None,
    tokenizer: TokenizerName | None,
    last_usage: Usage | Mapping[str, Any] | None,
    pending_input: str | None,
    context_window: int | None,
    threshold: float | None,
    overflow_threshold: float | None,
    min_messages: int | None,
    session_id: str | None,
    given: Mapping[str, Any] | None = None,
) -> Call[ShouldCompactResponse]:
    return Call(
        "POST",
        "/should-compact",
        {**(given or {})}
        | body(
            messages=list(messages),
            format=format,
            tokenizer=tokenizer,
            last_usage=dict(last_usage) if last_usage is not None else None,
            pending_input=pending_input,
            context_window=context_window,
            threshold=threshold,
            overflow_threshold=overflow_threshold,
            min_messages=min_messages,
            session_id=session_id,
        ),
    )


def compact_body(
    messages: Messages,
    *,
    format: Format | None,
    session_id: str | None,
    force: bool | None,
    instructions: str | None,
    options: CompactOptions | Mapping[str, Any] | None,
    reason: Reason | None,
    last_usage: Usage | Mapping[str, Any] | None = None,
    pending_input: str | None = None,
    tokenizer: TokenizerName | None = None,
    given: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The body `/compact` and `/compactions` share; `last_usage` and `pending_input` as
    sent to `/should-compact` (with `tokenizer`), so both decide from the same count."""
    return {**(given or {})} | body(
        messages=list(messages),
        format=format,
        session_id=session_id,
        force=force,
        instructions=instructions,
        options=dict(options) if options is not None else None,
        reason=reason,
        last_usage=dict(last_usage) if last_usage is not None else None,
        pending_input=pending_input,
        tokenizer=tokenizer,
    )


def compact(compact_body: dict[str, Any]) -> Call[CompactResponse]:
    return Call("POST", "/compact", compact_body, slow=True)


def start_compaction(compact_body: dict[str, Any]) -> Call[JobResponse]:
    return Call("POST", "/compactions", compact_body, ok=(202,))


def get_compaction(job_id: str) -> Call[JobResponse]:
    return Call("GET", f"/compactions/{_id(job_id)}")


def cancel_compaction(job_id: str) -> Call[JobResponse]:
    # 202 when another replica runs the job: `cancel_requested`, its owner cancels it.
    return Call("DELETE", f"/compactions/{_id(job_id)}", ok=(200, 202))


def apply_compaction(job_id: str, messages: Messages) -> Call[ApplyResponse]:
    return Call("POST", f"/compactions/{_id(job_id)}/apply", {"messages": list(messages)})


def get_archive(archive_id: str) -> Call[ArchiveResponse]:
    return Call("GET", f"/archives/{_id(archive_id)}")


def list_compactions(session_id: str) -> Call[SessionCompactionsResponse]:
    return Call("GET", f"/sessions/{_id(session_id)}/compactions")


def recall(session_id: str, query: str, limit: int | None) -> Call[RecallResponse]:
    return Call("POST", f"/sessions/{_id(session_id)}/recall", body(query=query, limit=limit))


def compress_tool_result(
    tool: str,
    result: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    input: Mapping[str, Any] | None,
    is_error: bool | None,
    session_id: str | None,
    limits: ToolResultLimits | Mapping[str, Any] | None,
) -> Call[CompressToolResultResponse]:
    sent: Any = result if isinstance(result, str | Mapping) else [dict(r) for r in result]
    return Call(
        "POST",
        "/compress-tool-result",
        body(
            tool=tool,
            input=dict(input) if input is not None else None,
            result=sent,
            is_error=is_error,
            session_id=session_id,
            limits=dict(limits) if limits is not None else None,
        ),
    )


def preprocess_input(
    text: str, *, check_exists: bool | None, limit: int | None
) -> Call[PreprocessInputResponse]:
    return Call(
        "POST", "/preprocess-input", body(text=text, check_exists=check_exists, limit=limit)
    )


def assemble(
    *,
    messages: Messages | None,
    format: Format | None,
    system: str | None,
    tools: str | None,
    rules: str | None,
    input: str | None,
    preprocess: bool | None,
    todo_recap: str | None,
) -> Call[AssembleResponse]:
    return Call(
        "POST",
        "/assemble",
        body(
            messages=list(messages) if messages is not None else None,
            format=format,
            system=system,
            tools=tools,
            rules=rules,
            input=input,
            preprocess=preprocess,
            todo_recap=todo_recap,
        ),
    )


PROJECT_RULES: Call[ProjectRulesResponse] = Call("GET", "/project-rules")
HEALTHZ: Call[HealthResponse] = Call("GET", "/healthz")
# A 503 is an answer here: `ready: false` and the failing checks.
READYZ: Call[ReadyResponse] = Call("GET", "/readyz", ok=(200, 503))
METRICS: Call[str] = Call("GET", "/metrics", text=True)

Reader = Callable[[httpx.Response], Any]
