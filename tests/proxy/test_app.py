"""The proxy's ASGI app in-process, over a fake upstream: pass-through fidelity, routing,
the proxy token, errors in the provider's shape, compaction on the way, compact and retry,
failing open."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.assemble import CONTINUE
from app.core.model_table import ModelSpec
from app.core.provider.rules import anthropic_violations
from app.core.proxy import make_head, message_breakpoints
from app.core.proxy.splice import breakpoints
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp, ProxyConfig
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import Exchange, ProxyPolicy
from app.service.metrics import NoMetrics
from tests.builders import FakeSummarizer, assistant, build_service, rounds, user
from tests.proxy.fakes import FakeUpstream, Reply, Sent
from tests.proxy.heads import pinned

pytestmark = pytest.mark.anyio

MODELS = {
    "claude-tiny": ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0),
    "big": ModelSpec(context_window=1_000_000, tokenizer="tiktoken", margin=0.0),
    "big-input-4k": ModelSpec(
        context_window=1_000_000, input_limit=4000, tokenizer="tiktoken", margin=0.0
    ),
    "tiny-1m-beta": ModelSpec(
        context_window=4000, context_1m_window=1_000_000, tokenizer="tiktoken", margin=0.0
    ),
}
CONFIG = ProxyConfig(
    anthropic_url="https://anthropic.example",
    openai_url="https://openai.example/base",
    upstreams={"local": "http://127.0.0.1:9"},
    secret=b"k" * 32,
)
HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}


def proxy(
    upstream: FakeUpstream,
    tokenizer: TiktokenTokenizer,
    config: ProxyConfig = CONFIG,
    compactor: ProxyCompactor | bool | None = True,
) -> ProxyApp:
    if compactor is True:
        service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
        compactor = ProxyCompactor(service, service, ProxyPolicy(wait_seconds=0.5))
    return ProxyApp(config, upstream, compactor or None, MODELS, NoMetrics())


def _ids() -> Any:
    count = iter(range(1, 10_000))
    return lambda: f"arch-{next(count)}"


def client(app: ProxyApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy")


def long_session(last: int) -> list[dict[str, Any]]:
    return [user("Fix the build of the parser."), *rounds(1, last)[1:]]


async def test_below_the_threshold_the_bytes_go_through_both_ways_unchanged(
    tokenizer: TiktokenTokenizer,
) -> None:
    body = (
        b'{ "model":"big",  "messages":[{"role":"user",'
        b'"content":"caf\\u00e9 \\u2603"}],"max_tokens":9}'
    )
    answer = b'{"id":"msg_1","content":[],  "usage":{"input_tokens":7,"output_tokens":1}}'
    headers = [
        (b"content-type", b"application/json"),
        (b"request-id", b"req_1"),
        (b"connection", b"close"),
    ]
    upstream = FakeUpstream(lambda sent: Reply(200, headers, (answer[:20], answer[20:])))
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/messages", content=body, headers=HEADERS)
    assert upstream.sent[0].body == body
    assert response.content == answer
    assert response.status_code == 200
    assert response.headers["request-id"] == "req_1"
    assert "connection" not in response.headers
    assert response.headers["x-compact-action"] == "none"
    assert "x-compact-tokens-before" not in response.headers  # far below: not even counted
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["x-compact-session"].startswith("proxy-")


async def test_headers_are_forwarded_but_for_a_deny_list(tokenizer: TiktokenTokenizer) -> None:
    upstream = FakeUpstream()
    sent_headers = {
        **HEADERS,
        "anthropic-beta": "context-1m-2025-08-07",
        "x-stainless-lang": "python",
        "x-claude-code-session-id": "abc",
        "user-agent": "claude-cli/2.0",
        "x-unheard-of": "kept",
        "connection": "keep-alive, x-hop",
        "x-hop": "dropped because connection names it",
        "keep-alive": "timeout=5",
        "te": "trailers",
        "proxy-authorization": "Basic eA==",
        "x-compact-session": "ours",
    }
    async with client(proxy(upstream, tokenizer)) as http:
        await http.post(
            "/v1/messages", content=b'{"model":"big","messages":[]}', headers=sent_headers
        )
    names = [name.decode() for name, _ in upstream.sent[0].headers]
    for kept in ("x-api-key", "anthropic-version", "anthropic-beta", "x-stainless-lang",
                 "x-claude-code-session-id", "user-agent", "x-unheard-of"):  # fmt: skip
        assert kept in names
    for dropped in ("host", "content-length", "connection", "x-hop", "keep-alive", "te",
                    "proxy-authorization", "x-compact-session"):  # fmt: skip
        assert dropped not in names


@pytest.mark.parametrize(
    ("path", "headers", "url"),
    [
        ("/v1/messages?beta=true", HEADERS, "https://anthropic.example/v1/messages?beta=true"),
        (
            "/v1/messages/count_tokens",
            HEADERS,
            "https://anthropic.example/v1/messages/count_tokens",
        ),
        ("/v1/models", HEADERS, "https://anthropic.example/v1/models"),
        ("/v1/chat/completions", {}, "https://openai.example/base/v1/chat/completions"),
        ("/v1/responses?x=%2F", {}, "https://openai.example/base/v1/responses?x=%2F"),
        ("/v1/models", {}, "https://openai.example/base/v1/models"),
        ("/u/local/v1/chat/completions", {}, "http://127.0.0.1:9/v1/chat/completions"),
    ],
)
async def test_each_route_reaches_its_configured_upstream(
    tokenizer: TiktokenTokenizer, path: str, headers: dict[str, str], url: str
) -> None:
    upstream = FakeUpstream()
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post(path, content=b"{}", headers=headers)
    assert response.status_code == 200
    assert [s.url for s in upstream.sent] == [url]


async def test_a_path_that_names_no_provider_is_a_404_in_the_provider_s_shape(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    async with client(proxy(upstream, tokenizer)) as http:
        unknown = await http.post("/u/elsewhere/v1/chat/completions", content=b"{}")
        outside = await http.get("/admin", headers=HEADERS)
    assert unknown.status_code == 404
    assert unknown.json()["error"]["message"] == "no upstream named 'elsewhere' is configured"
    assert outside.status_code == 404
    assert outside.json()["type"] == "error"
    assert upstream.sent == []


async def test_the_proxy_token_is_required_and_never_forwarded(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    config = ProxyConfig(anthropic_url="https://a.example", secret=b"k", token="t0ken")
    async with client(proxy(upstream, tokenizer, config)) as http:
        missing = await http.post("/v1/messages", content=b"{}", headers=HEADERS)
        wrong = await http.post(
            "/v1/messages", content=b"{}", headers={**HEADERS, "x-compact-proxy-token": "no"}
        )
        right = await http.post(
            "/v1/messages", content=b"{}", headers={**HEADERS, "x-compact-proxy-token": "t0ken"}
        )
    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert missing.json()["error"]["type"] == "authentication_error"
    assert len(upstream.sent) == 1
    assert all(name != b"x-compact-proxy-token" for name, _ in upstream.sent[0].headers)


@pytest.mark.parametrize(
    ("path", "headers", "shape"),
    [("/v1/messages", HEADERS, "anthropic"), ("/v1/chat/completions", {}, "openai")],
)
async def test_an_unreachable_provider_is_a_502_in_its_own_shape(
    tokenizer: TiktokenTokenizer, path: str, headers: dict[str, str], shape: str
) -> None:
    async with client(proxy(FakeUpstream(down=True), tokenizer)) as http:
        response = await http.post(path, content=b'{"model":"big","messages":[]}', headers=headers)
    assert response.status_code == 502
    body = response.json()
    if shape == "anthropic":
        assert body["type"] == "error"
        assert body["error"]["type"] == "api_error"
    else:
        assert body["error"]["type"] == "server_error"


async def test_a_token_count_carries_the_head_as_the_session_s_requests_do(
    tokenizer: TiktokenTokenizer,
) -> None:
    """`count_tokens` of a session with a head counts what the next request will send: the
    head in place of the messages it stands for, its breakpoint living as long as the
    client's hour-long one after it (as on the request, which the provider would refuse
    otherwise)."""
    upstream = FakeUpstream()
    session = {**HEADERS, "x-claude-code-session-id": "s1"}
    hour = {"type": "ephemeral", "ttl": "1h"}
    messages = long_session(12)
    marked = [*messages[:-1], {"role": "user", "content": [
        {"type": "text", "text": messages[-1]["content"], "cache_control": hour}
    ]}]  # fmt: skip
    async with client(proxy(upstream, tokenizer)) as http:
        first = await http.post("/v1/messages", content=_anthropic(marked), headers=session)
        counted = await http.post(
            "/v1/messages/count_tokens", content=_anthropic(marked), headers=session
        )
    assert first.headers["x-compact-action"] == "compacted"
    assert counted.headers["x-compact-action"] == "applied"
    sent_first, sent_count = (s.json["messages"] for s in upstream.sent)
    assert sent_count == sent_first
    marks = [
        b["cache_control"]
        for m in sent_count
        if isinstance(m["content"], list)
        for b in m["content"]
        if "cache_control" in b
    ]
    assert marks == [hour, hour]  # the head's, then the client's


async def test_a_body_over_the_limit_is_a_413(tokenizer: TiktokenTokenizer) -> None:
    config = ProxyConfig(secret=b"k", max_body_bytes=100)
    upstream = FakeUpstream()
    async with client(proxy(upstream, tokenizer, config)) as http:
        response = await http.post("/v1/messages", content=b"x" * 101, headers=HEADERS)
    assert response.status_code == 413
    assert response.json()["error"]["type"] == "request_too_large"
    assert upstream.sent == []


def _anthropic(messages: list[dict[str, Any]], **fields: Any) -> bytes:
    return orjson.dumps({"model": "claude-tiny", "max_tokens": 100, **fields, "messages": messages})


async def test_over_the_limit_the_request_is_compacted_at_once_and_the_head_then_kept(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    session = {**HEADERS, "x-claude-code-session-id": "s1"}
    messages = long_session(12)
    async with client(proxy(upstream, tokenizer)) as http:
        first = await http.post("/v1/messages", content=_anthropic(messages), headers=session)
        later = [*messages, {"role": "assistant", "content": "Next."}, user("And the docs.")]
        second = await http.post("/v1/messages", content=_anthropic(later), headers=session)
    assert first.headers["x-compact-action"] == "compacted"
    assert (
        int(first.headers["x-compact-tokens-after"])
        < 3900
        < int(first.headers["x-compact-tokens-before"])
    )
    sent_first, sent_second = (s.json["messages"] for s in upstream.sent)
    assert isinstance(sent_first, list)
    assert isinstance(sent_second, list)
    # The session's first messages are pinned as sent, ahead of the summary.
    count = pinned(sent_first, messages)
    assert count >= 1
    assert orjson.dumps(sent_first[count]).decode().find("[Conversation compressed]") > 0
    assert sent_first[-1] == messages[-1]
    assert second.headers["x-compact-action"] == "applied"
    head = len(sent_first) - (len(messages) - _kept_from(sent_first, messages))
    assert orjson.dumps(sent_second[:head]) == orjson.dumps(sent_first[:head])
    assert sent_second[-2:] == later[-2:]


def _kept_from(sent: list[Any], messages: list[dict[str, Any]]) -> int:
    """The index, in the client's messages, of the first one sent as it was."""
    for start in range(len(messages)):
        if sent[len(sent) - (len(messages) - start) :] == messages[start:]:
            return start
    raise AssertionError("nothing kept")


async def test_a_request_that_rewrote_its_history_goes_as_it_is(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    session = {**HEADERS, "x-claude-code-session-id": "s2"}
    async with client(proxy(upstream, tokenizer)) as http:
        await http.post("/v1/messages", content=_anthropic(long_session(12)), headers=session)
        # The same conversation (its first message), its later messages rewritten, as an
        # agent that prunes its own history does.
        first = long_session(12)[0]
        short = [first, {"role": "assistant", "content": "Sure."}, user("Go.")]
        response = await http.post("/v1/messages", content=_anthropic(short), headers=session)
    assert response.headers["x-compact-action"] == "none"
    assert response.headers["x-compact-reason"] == "history_changed"
    assert upstream.sent[-1].body == _anthropic(short)


class Broken(ProxyCompactor):
    async def plan(self, ex: Any) -> Any:
        raise RuntimeError("a bug of ours")


async def test_any_failure_of_ours_forwards_the_original_request_unchanged(
    tokenizer: TiktokenTokenizer,
) -> None:
    service = build_service(tokenizer, ExtractiveSummarizer())
    upstream = FakeUpstream()
    app = ProxyApp(CONFIG, upstream, Broken(service, service), MODELS, NoMetrics())
    body = _anthropic(long_session(12))
    async with client(app) as http:
        response = await http.post("/v1/messages", content=body, headers=HEADERS)
    assert response.status_code == 200
    assert upstream.sent[0].body == body
    assert (response.headers["x-compact-action"], response.headers["x-compact-reason"]) == (
        "skipped",
        "RuntimeError",
    )


TOO_LONG = orjson.dumps(
    {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 5100 tokens > 4000 maximum",
        },
    }
)


def _overflow_first(sent: Sent) -> Reply:
    tokens = len(sent.body) // 4
    if tokens > 2500:
        return Reply(400, [(b"content-type", b"application/json")], (TOO_LONG,))
    return Reply()


async def test_a_context_length_error_is_answered_by_compacting_and_sending_once_more(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream(_overflow_first)
    big = {"claude-tiny": ModelSpec(context_window=40_000, tokenizer="tiktoken", margin=0.0)}
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    app = ProxyApp(CONFIG, upstream, ProxyCompactor(service, service), big, NoMetrics())
    async with client(app) as http:
        response = await http.post(
            "/v1/messages", content=_anthropic(long_session(12)), headers=HEADERS
        )
    assert response.status_code == 200
    assert response.headers["x-compact-action"] == "retried"
    assert len(upstream.sent) == 2
    assert len(upstream.sent[1].body) < len(upstream.sent[0].body)


async def test_an_error_that_compacting_cannot_help_goes_back_as_it_came(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream(
        lambda sent: Reply(400, [(b"content-type", b"application/json")], (TOO_LONG,))
    )
    one_turn = _anthropic([user("Hello.")])  # nothing a summary could shorten
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/messages", content=one_turn, headers=HEADERS)
    assert response.status_code == 400
    assert response.content == TOO_LONG
    assert len(upstream.sent) == 1


async def test_a_stream_is_relayed_chunk_by_chunk_and_its_usage_read(
    tokenizer: TiktokenTokenizer,
) -> None:
    events = [
        b'event: message_start\ndata: {"type":"message_start","message":'
        b'{"usage":{"input_tokens":50,"output_tokens":1}}}\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"hi"}}\n\n',
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]
    stream = [(b"content-type", b"text/event-stream")]
    upstream = FakeUpstream(lambda sent: Reply(200, stream, events))
    app = proxy(upstream, tokenizer)
    body = _anthropic([user("word " * 1600)], stream=True)  # counted: near the tiny window
    async with (
        client(app) as http,
        http.stream("POST", "/v1/messages", content=body, headers=HEADERS) as response,
    ):
        received = [chunk async for chunk in response.aiter_raw()]
    assert b"".join(received) == b"".join(events)
    assert upstream.answers[0].closed
    session = response.headers["x-compact-session"]
    assert app.compactor is not None
    assert app.compactor._sessions[session].ratio is not None


async def _tokens(compactor: ProxyCompactor, messages: list[dict[str, Any]]) -> int:
    """The proxy's own count of an Anthropic request with `messages` (no margin)."""
    body = orjson.loads(_anthropic(messages))
    ex = Exchange("anthropic", "count", body, MODELS["big"], 1_000_000)
    return (await compactor._count(ex, messages)).raw


async def test_a_compaction_begun_in_the_background_is_put_in_at_the_splice_mark(
    tokenizer: TiktokenTokenizer,
) -> None:
    released = asyncio.Event()

    async def slow(request: Any) -> str:
        await released.wait()
        return "## Goals & Decisions\nFix the parser build."

    background = build_service(tokenizer, FakeSummarizer(slow), new_id=_ids())
    immediate = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    compactor = ProxyCompactor(background, immediate, ProxyPolicy(wait_seconds=0.2))
    upstream = FakeUpstream()
    measured = ProxyCompactor(immediate, immediate)
    at_start, at_splice = long_session(8), long_session(10)
    start_tokens, splice_tokens = (
        await _tokens(measured, at_start),
        await _tokens(measured, at_splice),
    )
    window = (
        int(splice_tokens / 0.9) + 100
    )  # the start mark below the first, the splice mark below the second
    assert start_tokens >= 0.7 * (window - 100)
    models = {"claude-tiny": ModelSpec(context_window=window, tokenizer="tiktoken", margin=0.0)}
    app = ProxyApp(CONFIG, upstream, compactor, models, NoMetrics())
    session = {**HEADERS, "x-claude-code-session-id": "bg"}
    async with client(app) as http:
        first = await http.post("/v1/messages", content=_anthropic(at_start), headers=session)
        released.set()
        for _ in range(100):
            if compactor._sessions[first.headers["x-compact-session"]].ready is not None:
                break
            await asyncio.sleep(0.01)
        second = await http.post("/v1/messages", content=_anthropic(at_splice), headers=session)
    assert first.headers["x-compact-action"] == "precompact_started"
    assert upstream.sent[0].body == _anthropic(at_start)
    assert second.headers["x-compact-action"] == "applied"
    sent = upstream.sent[1].json["messages"]
    assert isinstance(sent, list)
    count = pinned(sent, at_splice)
    assert count >= 1
    assert "Fix the parser build." in orjson.dumps(sent[count]).decode()


@pytest.mark.parametrize(
    ("model", "beta", "action"),
    [
        ("big", None, "none"),
        ("big-input-4k", None, "compacted"),
        ("tiny-1m-beta", None, "compacted"),
        ("tiny-1m-beta", "context-1m-2025-08-07", "none"),
    ],
)
async def test_the_limit_is_the_model_s_input_limit_and_its_1m_window_under_the_beta(
    tokenizer: TiktokenTokenizer, model: str, beta: str | None, action: str
) -> None:
    upstream = FakeUpstream()
    headers = {**HEADERS, "anthropic-beta": beta} if beta else HEADERS
    body = _anthropic(long_session(12), model=model)
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/messages", content=body, headers=headers)
    assert response.headers["x-compact-action"] == action


async def test_when_the_newest_message_alone_is_too_much_all_of_it_is_compacted(
    tokenizer: TiktokenTokenizer,
) -> None:
    """A tool result larger than what the request may keep: no cut keeps little enough, so
    the whole history becomes the head and the request ends with `Continue.`; the agent's
    next turn follows the same head."""
    upstream = FakeUpstream()
    session = {**HEADERS, "x-claude-code-session-id": "huge"}
    call = {"type": "tool_use", "id": "big", "name": "bash", "input": {"command": "cat log"}}
    result = {"type": "tool_result", "tool_use_id": "big", "content": "log line 42\n" * 700}
    messages = [
        *long_session(2),
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    async with client(proxy(upstream, tokenizer)) as http:
        first = await http.post("/v1/messages", content=_anthropic(messages), headers=session)
        later = [*messages, {"role": "assistant", "content": "Read it."}, user("Go on.")]
        second = await http.post("/v1/messages", content=_anthropic(later), headers=session)
    assert first.headers["x-compact-action"] == "compacted"
    sent_first, sent_second = (s.json["messages"] for s in upstream.sent)
    assert isinstance(sent_first, list)
    assert isinstance(sent_second, list)
    assert sent_first[-1] == user(CONTINUE)
    assert int(first.headers["x-compact-tokens-after"]) < 3900
    assert second.headers["x-compact-action"] == "applied"
    assert sent_second == [*sent_first, *later[-2:]]


async def _paced(
    tokenizer: TiktokenTokenizer, requests: list[list[dict[str, Any]]], window: int
) -> list[httpx.Response]:
    models = {"claude-tiny": ModelSpec(context_window=window, tokenizer="tiktoken", margin=0.0)}
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    app = ProxyApp(CONFIG, FakeUpstream(), ProxyCompactor(service, service), models, NoMetrics())
    session = {**HEADERS, "x-claude-code-session-id": "paced"}
    async with client(app) as http:
        return [
            await http.post("/v1/messages", content=_anthropic(m), headers=session)
            for m in requests
        ]


async def test_a_session_whose_turns_are_large_begins_its_compaction_before_the_start_mark(
    tokenizer: TiktokenTokenizer,
) -> None:
    """One more turn like the last would pass the limit before a compaction begun at the
    start mark is ready: it begins below the mark."""
    measured = ProxyCompactor(*[build_service(tokenizer, ExtractiveSummarizer())] * 2)
    small = long_session(1)
    large = [*small, *rounds(2, 2, output="line of tool output\n" * 900)]
    tokens = await _tokens(measured, small), await _tokens(measured, large)
    window = int(tokens[1] / 0.55) + 100  # the large request at 55% of the limit
    assert tokens[1] - tokens[0] > 0.35 * (window - 100)
    first, second = await _paced(tokenizer, [small, large], window)
    assert first.headers["x-compact-action"] == "none"
    assert second.headers["x-compact-action"] == "precompact_started"
    assert int(second.headers["x-compact-tokens-before"]) < 0.7 * (window - 100)


async def test_below_the_start_mark_a_foreseen_large_turn_has_a_standby_and_no_summarizer_call(
    tokenizer: TiktokenTokenizer,
) -> None:
    """A compaction by the configured summarizer begun below the start mark for a large
    turn the pace foresaw was paid for twice when that turn did not come (it kept too
    much by the splice mark, and one was begun again): the standby is kept for it."""
    measured = ProxyCompactor(*[build_service(tokenizer, ExtractiveSummarizer())] * 2)
    small = long_session(1)
    large = [*small, *rounds(2, 2, output="line of tool output\n" * 900)]
    later = [*large, *rounds(3, 3)]
    window = int(await _tokens(measured, large) / 0.55) + 100
    assert await _tokens(measured, later) < 0.7 * (window - 100)
    models = {"claude-tiny": ModelSpec(context_window=window, tokenizer="tiktoken", margin=0.0)}
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    compactor = ProxyCompactor(service, service)
    app = ProxyApp(CONFIG, FakeUpstream(), compactor, models, NoMetrics())
    session = {**HEADERS, "x-claude-code-session-id": "early"}
    actions, began = [], []
    async with client(app) as http:
        for messages in (small, large, later):
            answer = await http.post("/v1/messages", content=_anthropic(messages), headers=session)
            actions.append(answer.headers["x-compact-action"])
            state = compactor._sessions[answer.headers["x-compact-session"]]
            began.append((state.running is not None, state.spare is not None))
            for task in (state.running, state.spare):
                if task is not None:
                    await task
    assert actions == ["none", "precompact_started", "none"]
    assert began == [(False, False), (False, True), (False, False)]


async def test_a_session_of_small_turns_waits_for_the_start_mark(
    tokenizer: TiktokenTokenizer,
) -> None:
    measured = ProxyCompactor(*[build_service(tokenizer, ExtractiveSummarizer())] * 2)
    window = int(await _tokens(measured, long_session(12)) / 0.55) + 100
    answers = await _paced(tokenizer, [long_session(n) for n in range(9, 13)], window)
    assert [a.headers["x-compact-action"] for a in answers] == ["none"] * 4
    assert 0.5 * (window - 100) < int(answers[-1].headers["x-compact-tokens-before"])


async def test_a_later_compaction_s_head_carries_one_breakpoint_at_its_end(
    tokenizer: TiktokenTokenizer,
) -> None:
    """The previous head's end was written to the provider's cache and is found by its
    look-back from the new head's end: one breakpoint suffices, and more would pass the
    four a request may set."""
    upstream = FakeUpstream()
    # A generous wait: the compactions this test counts are put in as they finish, however
    # loaded the machine (with half a second, a busy one put in fewer).
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    waiting = ProxyCompactor(service, service, ProxyPolicy(wait_seconds=10))
    app = proxy(upstream, tokenizer, compactor=waiting)
    session = {**HEADERS, "x-claude-code-session-id": "marks"}

    def marked(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last = messages[-1]
        blocks = [{"type": "text", "text": last["content"], "cache_control": {"type": "ephemeral"}}]
        return [*messages[:-1], {**last, "content": blocks}]

    heads = 0  # put in, whether waited for or finished in the background (the machine's load
    # decides which)
    async with client(app) as http:
        for last in range(12, 40, 2):
            messages = marked(long_session(last))
            answer = await http.post("/v1/messages", content=_anthropic(messages), headers=session)
            heads += "x-compact-summarizer-calls" in answer.headers
    assert heads >= 3, heads
    assert app.compactor is not None
    head = app.compactor._sessions[answer.headers["x-compact-session"]].head
    assert head is not None
    marks = [i for i, m in enumerate(head.messages) if message_breakpoints([m])]
    assert marks == [len(head.core) - 1]
    assert breakpoints(upstream.sent[-1].json) == 2  # the head's and the client's own


async def test_a_later_compaction_whose_part_opens_with_the_assistant_s_turn_is_made(
    tokenizer: TiktokenTokenizer,
) -> None:
    """The part after a head may open with an assistant turn (the cut fell before it): it is
    summarized as sent, after a user turn, not refused as a list that opens with the
    assistant."""
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    compactor = ProxyCompactor(service, service)
    client_messages = long_session(12)
    replaced = next(i for i, m in enumerate(client_messages) if i > 4 and m["role"] == "assistant")
    summary = user("[Conversation compressed] Tasks 1 and 2.")
    head = make_head([summary], client_messages, replaced, 20)
    body = orjson.loads(_anthropic(client_messages, system="You are a coding agent."))
    ex = Exchange("anthropic", "opens", body, MODELS["claude-tiny"], 3900)
    asked: list[Any] = []
    compact = service.compact

    async def recorded(request: Any) -> Any:
        asked.append(request.messages)
        return await compact(request)

    service.compact = recorded  # type: ignore[method-assign]
    made = await compactor._compact(service, ex, client_messages, head, None)
    assert made is not None
    assert [v.rule for v in anthropic_violations(asked[0])] == []
    assert made.replaced > replaced
    assert made.core[0] == head.core[0]  # the head it had, verbatim


@pytest.mark.parametrize(("share", "action"), [(0.75, "none"), (0.9, "precompact_started")])
async def test_the_pause_after_a_head_holds_below_the_splice_mark_only(
    tokenizer: TiktokenTokenizer, share: float, action: str
) -> None:
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    compactor = ProxyCompactor(service, service)
    messages = long_session(12)
    body = orjson.loads(_anthropic(messages))
    limit = int(await _tokens(compactor, messages) / share)
    spec = ModelSpec(context_window=limit + 100, tokenizer="tiktoken", margin=0.0)
    compactor._session("paused").quiet_below = 10 * limit  # a head just went in
    ex = Exchange("anthropic", "paused", body, spec, limit, len(_anthropic(messages)))
    planned = await compactor.plan(ex)
    assert planned.action == action
    await compactor.aclose()


async def test_a_subagent_s_request_under_the_run_s_id_leaves_the_main_head_in_place(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    run = {**HEADERS, "x-claude-code-session-id": "run"}
    main = long_session(12)
    subagent = [user("Find where the parser is built."), assistant("In src/build.py.")]
    async with client(proxy(upstream, tokenizer)) as http:
        first = await http.post("/v1/messages", content=_anthropic(main), headers=run)
        side = await http.post(
            "/v1/messages", content=_anthropic([*subagent, user("Thanks.")]), headers=run
        )
        later = [*main, assistant("Next."), user("And the docs.")]
        again = await http.post("/v1/messages", content=_anthropic(later), headers=run)
    assert first.headers["x-compact-action"] == "compacted"
    assert side.headers["x-compact-action"] == "none"
    assert side.headers["x-compact-session"] != first.headers["x-compact-session"]
    assert again.headers["x-compact-action"] == "applied"
    assert "x-compact-reason" not in again.headers
    assert (
        upstream.sent[2].json["messages"][: len(upstream.sent[0].json["messages"])]
        == (upstream.sent[0].json["messages"])
    )
