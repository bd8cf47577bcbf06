"""The transparent proxy: an agent's SDK pointed at it (`ANTHROPIC_BASE_URL`,
`OPENAI_BASE_URL`, `base_url=`) reaches its provider through it, and its context is
compacted on the way when it nears the model's limit (docs/proxy.md).

A raw ASGI app, not a framework's: below the threshold the provider receives the very
bytes the client sent, with its headers but a deny-list, and the client receives the
provider's status, headers and body bytes as they arrive, chunk by chunk. Routes mirror
the providers': `POST /v1/messages` and `/v1/chat/completions` may be compacted,
`/v1/messages/count_tokens` gets the session's head, everything else under `/v1/` passes
through (the query string as sent); `/u/{name}/v1/...` reaches a configured upstream by
name. Upstreams come from the configuration only, never from the request: not an open
relay.

Anything of ours that fails forwards the original request unchanged
(`x-compact-action: skipped`, the reason beside it): never a 5xx of ours on this path. A
provider that cannot be reached is a 502 in its own error shape. A context-length error
from the provider, before any byte reached the client, is answered by compacting and
sending once more, never the same body twice; otherwise the provider's error goes back
as it came. Credentials pass through and are never logged or kept: a session is known by
a keyed digest of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import re
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from app.core import json_numbers
from app.core.cost import SummarizerCost
from app.core.errors import UpstreamError
from app.core.model_table import ModelSpec
from app.core.ports import RawHeaders, Upstream, UpstreamAnswer
from app.core.provider import find_model
from app.core.proxy import (
    Usage,
    UsageTap,
    credential_of,
    input_limit,
    is_context_overflow,
    output_budget,
    scoped_session_id,
    session_key,
)
from app.proxy.compactor import ProxyCompactor
from app.proxy.errors import error_body
from app.proxy.exchange import Action, Api, Exchange, Planned
from app.proxy.headers import (
    lower_map,
    ours,
    request_headers,
    response_headers,
    summarizer_headers,
)
from app.service.metrics import Metrics

log = logging.getLogger("context_compact.proxy")

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

TOKEN_HEADER = "x-compact-proxy-token"
COMPACTED = frozenset({"/v1/messages", "/v1/chat/completions"})
COUNT = "/v1/messages/count_tokens"
# The limit a provider's context-length error names: "> 200000 maximum", "context limit:
# ... > 200000", "maximum context length is 128000 tokens".
_LIMIT_IN_ERROR = re.compile(r"(?:>\s*|maximum context length is\s*)(\d{3,9})")


@dataclass(frozen=True)
class ProxyConfig:
    anthropic_url: str = "https://api.anthropic.com"
    openai_url: str = "https://api.openai.com"
    upstreams: Mapping[str, str] = field(default_factory=dict)
    token: str | None = None
    max_body_bytes: int = 32 * 1024 * 1024
    # Models the table does not know are judged against this window.
    default_window: int = 200_000
    secret: bytes = b""


@dataclass(frozen=True)
class _Route:
    api: Api
    url: str
    path: str  # the provider's path, `/v1/...`


@dataclass
class _Outcome:
    """What the answer's `x-compact-*` headers say."""

    action: Action = "none"
    reason: str | None = None
    session: str | None = None
    before: int | None = None
    after: int | None = None
    usage: Usage | None = None  # the provider's count, read from a successful answer
    cost: SummarizerCost | None = None  # what the head put in cost (`summarizer_headers`)

    def headers(self, overhead_ms: float) -> RawHeaders:
        return ours(
            {
                "action": self.action,
                "reason": self.reason,
                "session": self.session,
                "tokens-before": self.before,
                "tokens-after": self.after,
                "overhead-ms": f"{overhead_ms:.1f}",
                **summarizer_headers(self.cost),
            }
        )


class ProxyApp:
    def __init__(
        self,
        config: ProxyConfig,
        upstream: Upstream,
        compactor: ProxyCompactor | None,
        models: Mapping[str, ModelSpec],
        metrics: Metrics,
    ) -> None:
        self.config = config
        self.upstream = upstream
        self.compactor = compactor
        self.models = models
        self.metrics = metrics

    async def aclose(self) -> None:
        """Stops the background compactions and closes the upstream connections."""
        if self.compactor is not None:
            await self.compactor.aclose()
        await self.upstream.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        started = time.perf_counter()
        headers: RawHeaders = list(scope["headers"])
        named = lower_map(headers)
        route = self._route(scope, named)
        api = route.api if isinstance(route, _Route) else _api_of(scope["path"], named)
        if isinstance(route, str):
            await _answer(send, api, 404, route)
            return
        if self.config.token is not None and not hmac.compare_digest(
            named.get(TOKEN_HEADER, "").encode(), self.config.token.encode()
        ):
            await _answer(send, api, 401, f"missing or wrong {TOKEN_HEADER} header")
            return
        body = await _read_body(receive, self.config.max_body_bytes)
        if body is None:
            return  # the client went away
        if isinstance(body, int):
            await _answer(send, api, 413, f"request body over {body} bytes")
            return
        outcome = _Outcome()
        exchange, planned, sent = None, None, body
        if self.compactor is not None and scope["method"] == "POST":
            try:
                exchange = self._exchange(route, named, body)
                if exchange is not None:
                    planned, sent = await self._plan(route, exchange, body)
                    outcome = _outcome_of(exchange, planned)
            except Exception as exc:  # fail open: the request goes as it came
                log.exception("proxy compaction failed; forwarded unchanged")
                outcome, planned, sent = _Outcome("skipped", type(exc).__name__), None, body
        forward = request_headers(headers)
        overhead = time.perf_counter() - started
        retry = None
        if exchange is not None and self.compactor is not None and route.path in COMPACTED:
            retry = self._retry_for(exchange, planned, sent, outcome)
        await self._forward(
            receive, send, route, (scope["method"], forward, sent), outcome, overhead, retry
        )
        self.metrics.observe_proxy(outcome.action, overhead)
        usage = outcome.usage
        if self.compactor is not None and planned is not None and usage is not None:
            self.compactor.observe(planned.session_id, usage, planned.counted)

    def _route(self, scope: Scope, named: Mapping[str, str]) -> _Route | str:
        """Where the request goes, or why it goes nowhere."""
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        path: str = scope["path"]
        base: str | None = None
        if path.startswith("/u/"):
            name, _, rest = path[3:].partition("/")
            base = self.config.upstreams.get(name)
            if base is None:
                return f"no upstream named {name!r} is configured"
            path, raw = "/" + rest, raw[len(b"/u/") + len(name.encode()) :]
        if not (path == "/v1" or path.startswith("/v1/")):
            return "the proxy serves the providers' /v1/ paths only"
        api: Api = (
            "anthropic"
            if path.startswith("/v1/messages") or "anthropic-version" in named
            else "openai"
        )
        base = base or (self.config.anthropic_url if api == "anthropic" else self.config.openai_url)
        query = scope.get("query_string") or b""
        url = (
            base.rstrip("/")
            + raw.decode("latin-1")
            + ("?" + query.decode("latin-1") if query else "")
        )
        return _Route(api, url, path)

    def _exchange(self, route: _Route, named: Mapping[str, str], body: bytes) -> Exchange | None:
        if route.path not in COMPACTED and route.path != COUNT:
            return None
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:  # numbers orjson refuses (NaN, over 64 bits): as sent
            document, _ = json_numbers.loads(body)
        if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
            return None
        model = document.get("model")
        spec = find_model(model, self.models) if isinstance(model, str) else None
        spec = spec or ModelSpec(
            context_window=self.config.default_window, tokenizer="tiktoken", margin=0.2
        )
        key = session_key(named, document)
        session = scoped_session_id(self.config.secret, credential_of(named), key)
        betas = frozenset(b.strip() for b in named.get("anthropic-beta", "").split(","))
        limit = input_limit(spec.window(betas), spec.input_limit, document)
        return Exchange(route.api, session, document, spec, limit, len(body))

    async def _plan(self, route: _Route, ex: Exchange, body: bytes) -> tuple[Planned | None, bytes]:
        assert self.compactor is not None
        if route.path == COUNT:
            spliced = self.compactor.head_for(ex)
            if spliced is None:
                return None, body
            planned = Planned(ex.session_id, spliced, "applied", None, None, None, 0)
            return planned, json_numbers.dumps({**ex.body, "messages": spliced})
        planned = await self.compactor.plan(ex)
        if planned.messages is ex.messages or planned.messages == ex.messages:
            return planned, body
        return planned, json_numbers.dumps({**ex.body, "messages": planned.messages})

    def _retry_for(
        self, ex: Exchange, planned: Planned | None, sent: bytes, outcome: _Outcome
    ) -> Callable[[bytes], Awaitable[bytes | None]]:
        async def retry(error: bytes) -> bytes | None:
            assert self.compactor is not None
            found = _LIMIT_IN_ERROR.search(error.decode("utf-8", "replace"))
            limit = int(found.group(1)) - output_budget(ex.body) if found else ex.limit
            messages = planned.messages if planned is not None else ex.messages
            again = await self.compactor.retry(ex, messages, max(1, limit))
            if again is None:
                return None
            body = json_numbers.dumps({**ex.body, "messages": again.messages})
            if body == sent:
                return None
            outcome.action, outcome.after = "retried", again.tokens_after
            return body

        return retry

    async def _forward(
        self,
        receive: Receive,
        send: Send,
        route: _Route,
        request: tuple[str, RawHeaders, bytes],
        outcome: _Outcome,
        overhead: float,
        retry: Callable[[bytes], Awaitable[bytes | None]] | None,
    ) -> None:
        method, headers, body = request
        try:
            answer = await self.upstream.send(method, route.url, headers, body)
            if retry is not None and answer.status in (400, 413):
                answer = await self._maybe_retry(answer, retry, (method, route.url, headers))
        except UpstreamError as exc:
            await _answer(send, route.api, 502, str(exc), outcome.headers(overhead * 1000))
            return
        try:
            await _stream(receive, send, answer, outcome, overhead)
        finally:
            await answer.aclose()

    async def _maybe_retry(
        self,
        answer: UpstreamAnswer,
        retry: Callable[[bytes], Awaitable[bytes | None]],
        where: tuple[str, str, RawHeaders],
    ) -> UpstreamAnswer:
        """The provider's context-length error answered by one more, compacted, request;
        any other answer (or a retry that cannot change the body) as it came."""
        error = await answer.read()
        await answer.aclose()
        if is_context_overflow(answer.status, error):
            try:
                body = await retry(error)
            except Exception:
                log.exception("compaction after a context-length error failed")
                body = None
            if body is not None:
                return await self.upstream.send(where[0], where[1], where[2], body)
        return _Buffered(answer.status, answer.headers, error)


@dataclass
class _Buffered:
    status: int
    headers: RawHeaders
    body: bytes

    async def chunks(self) -> Any:
        yield self.body

    async def read(self) -> bytes:
        return self.body

    async def aclose(self) -> None:
        return None


def _api_of(path: str, named: Mapping[str, str]) -> Api:
    """Anthropic's for its paths and for any request its SDK sends (`anthropic-version`);
    OpenAI's otherwise."""
    anthropic = "/v1/messages" in path or "anthropic-version" in named
    return "anthropic" if anthropic else "openai"


def _outcome_of(ex: Exchange, planned: Planned | None) -> _Outcome:
    if planned is None:
        return _Outcome(session=ex.session_id)
    return _Outcome(
        planned.action,
        planned.reason,
        ex.session_id,
        planned.tokens_before,
        planned.tokens_after,
        cost=planned.cost,
    )


async def _read_body(receive: Receive, limit: int) -> bytes | int | None:
    """The request's body; its limit when it is larger; None when the client left."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return limit
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _answer(
    send: Send, api: Api, status: int, message: str, extra: RawHeaders | None = None
) -> None:
    body = error_body(api, status, message)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


def _decoder(headers: RawHeaders) -> Callable[[bytes], bytes] | None:
    """What turns the answer's bytes into text for the usage tap: nothing for plain
    bytes, zlib for gzip and deflate; None for any other encoding (not tapped)."""
    encoding = lower_map(headers).get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return lambda chunk: chunk
    if encoding in ("gzip", "deflate"):
        inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)
        return inflate.decompress
    return None


async def _stream(
    receive: Receive, send: Send, answer: UpstreamAnswer, outcome: _Outcome, overhead: float
) -> None:
    """The answer to the client as it arrives; the upstream call cancelled when the client
    goes away. The usage of a successful answer is read on the way."""
    headers = response_headers(answer.headers) + outcome.headers(overhead * 1000)
    named = lower_map(answer.headers)
    streaming = named.get("content-type", "").startswith("text/event-stream")
    decode = _decoder(answer.headers) if answer.status == 200 else None
    tap = UsageTap(streaming) if decode is not None else None
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})

    async def relay() -> None:
        try:
            async for chunk in answer.chunks():
                if tap is not None and decode is not None:
                    tap.feed(decode(chunk))
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except UpstreamError:
            log.warning("the provider's answer broke off mid-stream")
        await send({"type": "http.response.body", "body": b""})

    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    relaying, watching = asyncio.create_task(relay()), asyncio.create_task(gone())
    try:
        await asyncio.wait({relaying, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (relaying, watching):
            task.cancel()
        for task in (relaying, watching):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if relaying.done() and not relaying.cancelled() and relaying.exception() is None and tap:
        outcome.usage = tap.finish()
