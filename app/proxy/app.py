"""The transparent proxy: an agent's SDK pointed at it (`ANTHROPIC_BASE_URL`,
`OPENAI_BASE_URL`, `base_url=`) reaches its provider through it, and its context is
compacted on the way when it nears the model's limit (docs/proxy.md).

A raw ASGI app, not a framework's: below the threshold the provider receives the very
bytes the client sent, with its headers but a deny-list, and the client receives the
provider's status, headers and body bytes as they arrive, chunk by chunk. Routes mirror
the providers': `POST /v1/messages`, `/v1/chat/completions` and `/v1/responses` may be
compacted, `/v1/messages/count_tokens` gets the session's head, everything else under
`/v1/` passes through (the query string as sent); `/u/{name}/v1/...` reaches a configured
upstream by name. A WebSocket upgrade is refused with a 426 (`upgrade`). Upstreams come
from the configuration only, never from the request: not an open relay.

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
import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate
from functools import partial
from typing import Any
from urllib.parse import quote

import orjson

from app.core import json_numbers
from app.core.errors import UpstreamError
from app.core.model_table import ModelSpec
from app.core.ports import RawHeaders, Upstream, UpstreamAnswer
from app.core.provider import find_model
from app.core.proxy import (
    PASSED,
    RESPONSES_PATH,
    conversation,
    credential_of,
    input_limit,
    is_context_overflow,
    output_budget,
    passed_as_sent,
    scoped_session_id,
    session_key,
)
from app.proxy import as_counted
from app.proxy.compactor import ProxyCompactor
from app.proxy.errors import error_body
from app.proxy.exchange import Api, Exchange, Planned
from app.proxy.headers import lower_map, request_headers, response_headers
from app.proxy.leave import Leave, until_gone
from app.proxy.outcome import Outcome, outcome_of
from app.proxy.paths import read_path
from app.proxy.stream_head import Resumed, plain_stream, retried_body, retried_stream
from app.proxy.tap import Tap
from app.proxy.upgrade import asks_websocket, refuse_upgrade, refuse_websocket
from app.service.metrics import Metrics

log = logging.getLogger("context_compact.proxy")

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

TOKEN_HEADER = "x-compact-proxy-token"
COMPACTED = frozenset({"/v1/messages", "/v1/chat/completions", RESPONSES_PATH})
COUNT = "/v1/messages/count_tokens"
# The most of a provider's error read to tell a context-length error (a few hundred bytes).
MAX_ERROR_READ = 4 << 20
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
        self.counts = as_counted.Memo()  # `/count`'s figure per message sent (`as_counted`)

    async def aclose(self) -> None:
        """Stops the background compactions and closes the upstream connections."""
        if self.compactor is not None:
            await self.compactor.aclose()
        await self.upstream.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return
        started = time.perf_counter()
        headers: RawHeaders = list(scope["headers"])
        named = lower_map(headers)
        api = _api_of(scope["path"], named)
        allowed = self.config.token is None or hmac.compare_digest(
            named.get(TOKEN_HEADER, "").encode(), self.config.token.encode()
        )
        if scope["type"] == "websocket":
            await refuse_websocket(scope, receive, send, allowed)
            return
        if not allowed:  # before any other answer: no route can be probed without the token
            await _answer(send, api, 401, f"missing or wrong {TOKEN_HEADER} header")
            return
        if asks_websocket(named):
            await refuse_upgrade(send, api)
            return
        route = self._route(scope, named)
        if isinstance(route, str):
            await _answer(send, api, 404, route)
            return
        api = route.api
        body = await _read_body(receive, self.config.max_body_bytes)
        if body is None:
            return  # the client went away
        if isinstance(body, int):
            await _answer(send, api, 413, f"request body over {body} bytes")
            return
        leave = Leave()
        work = self._serve(scope, send, route, (headers, named, body), started, leave)
        await until_gone(receive, work, leave)

    async def _serve(
        self,
        scope: Scope,
        send: Send,
        route: _Route,
        request: tuple[RawHeaders, Mapping[str, str], bytes],
        started: float,
        leave: Leave,
    ) -> None:
        """The request compacted if it must be, forwarded, and its answer relayed; a
        compaction under way when the client leaves is done whole (`Leave.held`)."""
        headers, named, body = request
        outcome = Outcome()
        exchange, planned, sent = None, None, body
        if self.compactor is not None and scope["method"] == "POST":
            try:
                exchange = self._exchange(route, named, body)
                if exchange is not None:
                    planned, sent = await leave.held(self._plan(route, exchange, body))
                    outcome = outcome_of(exchange, planned)
            except Exception as exc:  # fail open: the request goes as it came
                log.exception("proxy compaction failed; forwarded unchanged")
                outcome, planned, sent = Outcome("skipped", type(exc).__name__), None, body
        forward = request_headers(headers)
        overhead = time.perf_counter() - started
        counting = None  # `/count`'s figure, counted while the provider answers
        if exchange is not None and planned is not None and planned.tokens_before is not None:
            assert self.compactor is not None
            counting = as_counted.started(self.compactor.background, exchange, self.counts)
        retry = None
        held = planned is not None and planned.reason in PASSED
        if exchange is not None and self.compactor is not None and route.path in COMPACTED:
            retry = None if held else self._retry_for(exchange, planned, sent, outcome, leave)
        self.metrics.observe_proxy(outcome.action, overhead)
        try:
            relayed = (scope["method"], forward, sent)
            await self._forward(send, route, relayed, (outcome, counting), overhead, retry)
        finally:
            as_counted.cancel(counting)
        usage = outcome.usage
        if self.compactor is not None and planned is not None and usage is not None:
            self.compactor.observe(planned.session_id, usage, planned.counted)

    def _route(self, scope: Scope, named: Mapping[str, str]) -> _Route | str:
        """Where the request goes, or why it goes nowhere: read from the raw path
        (`app.proxy.paths`), to the base of an upstream the configuration names."""
        raw: bytes = scope.get("raw_path") or quote(scope["path"]).encode()
        read = read_path(raw)
        if isinstance(read, str):
            return read
        base: str | None = None
        if read.upstream is not None:
            base = self.config.upstreams.get(read.upstream)
            if base is None:
                return f"no upstream named {read.upstream!r} is configured"
        api: Api = (
            "anthropic"
            if read.path.startswith("/v1/messages") or "anthropic-version" in named
            else "openai"
        )
        base = base or (self.config.anthropic_url if api == "anthropic" else self.config.openai_url)
        query = scope.get("query_string") or b""
        url = base.rstrip("/") + read.raw + ("?" + query.decode("latin-1") if query else "")
        return _Route(api, url, read.path)

    def _exchange(self, route: _Route, named: Mapping[str, str], body: bytes) -> Exchange | None:
        if route.path not in COMPACTED and route.path != COUNT:
            return None
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:  # numbers orjson refuses (NaN, over 64 bits): as sent
            document, _ = json_numbers.loads(body)
        read = conversation(route.path, document) if isinstance(document, dict) else None
        if read is None:
            return None
        messages, shape = read
        model = document.get("model")
        spec = find_model(model, self.models) if isinstance(model, str) else None
        spec = spec or ModelSpec(
            context_window=self.config.default_window, tokenizer="tiktoken", margin=0.2
        )
        key = session_key(named, document)
        session = scoped_session_id(self.config.secret, credential_of(named), key)
        betas = frozenset(b.strip() for b in named.get("anthropic-beta", "").split(","))
        limit = input_limit(spec.window(betas), spec.input_limit, document)
        view = tuple(messages) if shape == "input" else None  # `input`, read
        return Exchange(
            route.api, session, document, spec, limit, len(body), shape=shape, conversation=view
        )

    async def _plan(self, route: _Route, ex: Exchange, body: bytes) -> tuple[Planned | None, bytes]:
        assert self.compactor is not None
        if route.path == COUNT:
            spliced = self.compactor.head_for(ex)
            if spliced is None:
                return None, body
            planned = Planned(ex.session_id, spliced, "applied", None, None, None, 0)
            return planned, json_numbers.dumps(ex.body_with(spliced))
        held = passed_as_sent(ex.body)
        if held is not None:  # the provider holds, or compacts, this history itself
            return Planned(ex.session_id, ex.messages, "none", held, None, None, 0), body
        planned = await self.compactor.plan(ex)
        if planned.messages is ex.messages or planned.messages == ex.messages:
            return planned, body
        return planned, json_numbers.dumps(ex.body_with(planned.messages))

    def _retry_for(
        self, ex: Exchange, planned: Planned | None, sent: bytes, outcome: Outcome, leave: Leave
    ) -> Callable[[bytes], Awaitable[bytes | None]]:
        async def retry(error: bytes) -> bytes | None:
            assert self.compactor is not None
            found = _LIMIT_IN_ERROR.search(error.decode("utf-8", "replace"))
            # An error that names no limit (the Responses API's): below the size that failed.
            limit = int(found.group(1)) - output_budget(ex.body) if found else None
            messages = planned.messages if planned is not None else ex.messages
            again = await leave.held(self.compactor.retry(ex, messages, limit))
            if again is None:
                return None
            body = json_numbers.dumps(ex.body_with(again.messages))
            if body == sent:
                return None
            outcome.action, outcome.after = "retried", again.tokens_after
            return body

        return retry

    async def _forward(
        self,
        send: Send,
        route: _Route,
        request: tuple[str, RawHeaders, bytes],
        told: tuple[Outcome, asyncio.Task[int] | None],
        overhead: float,
        retry: Callable[[bytes], Awaitable[bytes | None]] | None,
    ) -> None:
        method, headers, body = request
        outcome, counting = told
        try:
            answer = await self.upstream.send(method, route.url, headers, body)
            where = (method, route.url, headers)
            if retry is not None and answer.status in (400, 413):
                answer = await self._maybe_retry(answer, retry, where)
            elif retry is not None and route.path == RESPONSES_PATH and plain_stream(answer):
                answer = await retried_stream(answer, retry, partial(self.upstream.send, *where))
        except UpstreamError as exc:
            outcome.count = await as_counted.read(counting)
            await _answer(send, route.api, 502, str(exc), outcome.headers(overhead * 1000))
            return
        outcome.count = await as_counted.read(counting)
        try:
            await _stream(send, answer, outcome, overhead)
        finally:
            await answer.aclose()

    async def _maybe_retry(
        self,
        answer: UpstreamAnswer,
        retry: Callable[[bytes], Awaitable[bytes | None]],
        where: tuple[str, str, RawHeaders],
    ) -> UpstreamAnswer:
        """The provider's context-length error answered by one more, compacted, request;
        any other answer (or a retry that cannot change the body) as it came. At most
        `MAX_ERROR_READ` bytes of the error are read here: a larger body is no
        context-length error, and goes on to the client as it comes, those bytes first."""
        rest = aiter(answer.chunks())
        read: list[bytes] = []
        size = 0
        async for chunk in rest:
            read.append(chunk)
            size += len(chunk)
            if size > MAX_ERROR_READ:
                return Resumed(answer, read, rest)
        error = b"".join(read)
        await answer.aclose()
        if is_context_overflow(answer.status, error):
            body = await retried_body(retry, error)
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
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"date", formatdate(usegmt=True).encode()),  # uvicorn adds none on the proxy's port
    ]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


async def _stream(send: Send, answer: UpstreamAnswer, outcome: Outcome, overhead: float) -> None:
    """The answer to the client as it arrives (`until_gone` cancels it when the client
    leaves). The usage of a successful answer is read on the way."""
    headers = response_headers(answer.headers) + outcome.headers(overhead * 1000)
    tap = Tap.of(answer.headers) if answer.status == 200 else None
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    try:
        async for chunk in answer.chunks():
            if tap is not None:
                tap.feed(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    except UpstreamError:
        log.warning("the provider's answer broke off mid-stream")
    await send({"type": "http.response.body", "body": b""})
    if tap is not None:
        outcome.usage = tap.finish()
