"""`POST /v1/responses` through the proxy's ASGI app in-process, over a fake upstream:
compacted like Messages and Chat with the items handed back by the Responses rules, the
requests the provider holds or compacts itself sent as they are, a context-length error
inside the stream answered by compacting and sending again, WebSocket upgrades refused."""

from __future__ import annotations

import json
from typing import Any

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.provider.rules import responses_violations
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.metrics import NoMetrics
from tests.builders import build_service, rounds, user
from tests.fakes.provider.errors import responses_context_event, responses_context_length
from tests.fakes.provider.validation import anthropic_problem, responses_problem
from tests.proxy.fakes import FakeUpstream, Reply, Sent
from tests.proxy.test_app import CONFIG

pytestmark = pytest.mark.anyio

MODELS = {"gpt-tiny": ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0)}
OPENAI = {"authorization": "Bearer sk-test", "session_id": "codex-1"}
INSTRUCTIONS = "You are Codex, a coding agent."
TOOLS = [{"type": "function", "name": "shell", "parameters": {"type": "object"}}]
OUTPUT = "line of tool output\n" * 60


def proxy(upstream: FakeUpstream, tokenizer: TiktokenTokenizer) -> ProxyApp:
    service = build_service(tokenizer, ExtractiveSummarizer())
    compactor = ProxyCompactor(service, service, ProxyPolicy(wait_seconds=0.5))
    return ProxyApp(CONFIG, upstream, compactor, MODELS, NoMetrics())


def client(app: ProxyApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy")


def _said(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def codex_input(turns: int) -> list[dict[str, Any]]:
    """What Codex sends: its permissions, AGENTS.md and environment, then per turn a task,
    reasoning (encrypted) before each call and before the closing answer."""
    items = [
        _said("developer", "<permissions instructions>sandbox: workspace-write"),
        _said("user", "# AGENTS.md instructions\nRun the tests with `make test`."),
        _said("user", "<environment_context><cwd>/repo</cwd></environment_context>"),
    ]
    for i in range(1, turns + 1):
        arguments = json.dumps({"command": ["make", str(i)]})
        items += [
            _said("user", f"Task {i}."),
            {"type": "reasoning", "summary": [], "encrypted_content": f"gAAAA{i:04d}" * 8},
            {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": f"c{i}"},
            {"type": "function_call_output", "call_id": f"c{i}", "output": OUTPUT},
            {"type": "reasoning", "summary": [], "encrypted_content": f"gBBBB{i:04d}" * 8},
            _said("assistant", f"Done {i}."),
        ]
    return items


def body(items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-tiny",
        "instructions": INSTRUCTIONS,
        "input": items,
        "tools": TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "codex-1",
        **extra,
    }


def _sent_input(sent: Sent) -> list[dict[str, Any]]:
    items = sent.json["input"]
    assert isinstance(items, list)
    return items


def _kept(sent: list[dict[str, Any]], client_items: list[dict[str, Any]]) -> int:
    """How many of the client's last items were sent as they were, at the end."""
    count = 0
    while (
        count < min(len(sent), len(client_items)) and sent[-1 - count] == client_items[-1 - count]
    ):
        count += 1
    return count


@pytest.mark.parametrize("turns", range(9, 16))
async def test_a_responses_body_over_the_limit_is_compacted_by_the_responses_rules(
    tokenizer: TiktokenTokenizer, turns: int
) -> None:
    upstream = FakeUpstream()
    items = codex_input(turns)
    sent_body = body(items)
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/responses", json=sent_body, headers=OPENAI)
    assert response.headers["x-compact-action"] == "compacted"
    assert int(response.headers["x-compact-tokens-after"]) < 4000
    assert int(response.headers["x-compact-tokens-before"]) > 4000
    sent = upstream.sent[0].json
    # Every field but `input` as sent, in the order sent.
    assert list(sent) == list(sent_body)
    assert {k: v for k, v in sent.items() if k != "input"} == {
        k: v for k, v in sent_body.items() if k != "input"
    }
    forwarded = _sent_input(upstream.sent[0])
    assert responses_problem(sent) is None  # calls with outputs, reasoning with its item
    assert responses_violations(forwarded) == []
    assert forwarded[0] == items[0]  # the developer message, as sent
    kept = _kept(forwarded, items)
    assert kept >= 1
    assert items[-kept]["type"] != "function_call_output"  # never an output without its call
    assert items[-kept - 1]["type"] != "reasoning"  # never reasoning without its item
    summary = [
        i for i in forwarded[1 : len(forwarded) - kept] if "[Conversation compressed]" in str(i)
    ]
    assert len(summary) == 1


async def test_the_head_is_kept_byte_for_byte_on_the_next_request(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    items = codex_input(10)
    later = [*items, _said("user", "And the docs."), _said("assistant", "Sure.")]
    later.append(_said("user", "Go."))
    async with client(proxy(upstream, tokenizer)) as http:
        first = await http.post("/v1/responses", json=body(items), headers=OPENAI)
        second = await http.post("/v1/responses", json=body(later), headers=OPENAI)
    assert (first.headers["x-compact-action"], second.headers["x-compact-action"]) == (
        "compacted",
        "applied",
    )
    one, two = (_sent_input(s) for s in upstream.sent)
    head = len(one) - _kept(one, items)
    assert orjson.dumps(two[:head]) == orjson.dumps(one[:head])
    assert two[-3:] == later[-3:]
    assert responses_problem(upstream.sent[1].json) is None


@pytest.mark.parametrize(
    "extra",
    [{"previous_response_id": "resp_123"}, {"conversation": "conv_123"}],
)
async def test_a_history_the_provider_holds_goes_as_sent(
    tokenizer: TiktokenTokenizer, extra: dict[str, Any]
) -> None:
    upstream = FakeUpstream()
    raw = orjson.dumps(body(codex_input(12), **extra))
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/responses", content=raw, headers=OPENAI)
    assert upstream.sent[0].body == raw
    assert response.headers["x-compact-action"] == "none"
    assert response.headers["x-compact-reason"] == "server_state"


ANTHROPIC = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
COMPACTION_BLOCK = {"type": "compaction", "content": "Summary of the earlier turns."}


def _anthropic_session(turns: int) -> list[dict[str, Any]]:
    return [user("Fix the build of the parser."), *rounds(1, turns)[1:]]


@pytest.mark.parametrize(
    ("path", "make"),
    [
        (
            "/v1/responses",
            lambda: body([{"type": "compaction", "encrypted_content": "gAAA"}, *codex_input(12)]),
        ),
        (
            "/v1/responses",
            lambda: body(
                codex_input(12),
                context_management=[{"type": "compaction", "compact_threshold": 3000}],
            ),
        ),
        (
            "/v1/messages",
            lambda: {
                "model": "gpt-tiny",
                "max_tokens": 100,
                "messages": [
                    {
                        "role": "user",
                        "content": [COMPACTION_BLOCK, {"type": "text", "text": "Go."}],
                    },
                    *_anthropic_session(12)[1:],
                ],
            },
        ),
        (
            "/v1/messages",
            lambda: {
                "model": "gpt-tiny",
                "max_tokens": 100,
                "messages": _anthropic_session(12),
                "context_management": {"edits": [{"type": "compact_20260112"}]},
            },
        ),
    ],
    ids=["openai-item", "openai-context-management", "anthropic-block", "anthropic-edit"],
)
async def test_the_provider_s_own_compaction_goes_through_untouched(
    tokenizer: TiktokenTokenizer, path: str, make: Any
) -> None:
    upstream = FakeUpstream()
    raw = orjson.dumps(make())
    headers = ANTHROPIC if path == "/v1/messages" else OPENAI
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post(path, content=raw, headers=headers)
    assert upstream.sent[0].body == raw
    assert (response.headers["x-compact-action"], response.headers["x-compact-reason"]) == (
        "none",
        "provider_compaction",
    )


async def test_clearing_edits_are_not_compaction_and_ours_goes_on(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    edits = [
        {"type": "clear_thinking_20251015", "keep": "all"},
        {"type": "clear_tool_uses_20250919"},
    ]
    raw = orjson.dumps(
        {
            "model": "gpt-tiny",
            "max_tokens": 100,
            "messages": _anthropic_session(12),
            "context_management": {"edits": edits},
        }
    )
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/messages", content=raw, headers=ANTHROPIC)
    assert response.headers["x-compact-action"] == "compacted"
    assert upstream.sent[0].json["context_management"] == {"edits": edits}


def _events(*events: dict[str, Any]) -> tuple[bytes, ...]:
    return tuple(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), orjson.dumps(e)) for e in events)


STARTED = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
COMPLETED = {
    **STARTED,
    "status": "completed",
    "usage": {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 3,
    },
}
STREAM = [("content-type", "text/event-stream")]


def _failed_stream(kind: str) -> tuple[bytes, ...]:
    opening = (
        {"type": "response.created", "sequence_number": 0, "response": STARTED},
        {"type": "response.in_progress", "sequence_number": 1, "response": STARTED},
    )
    if kind == "error":
        return _events(*opening, responses_context_event(2))
    failed = {**STARTED, "status": "failed", "error": responses_context_length()["error"]}
    return _events(*opening, {"type": "response.failed", "sequence_number": 2, "response": failed})


GOOD_STREAM = _events(
    {"type": "response.created", "sequence_number": 0, "response": STARTED},
    {"type": "response.output_text.delta", "sequence_number": 1, "delta": "Hi", "item_id": "m"},
    {"type": "response.completed", "sequence_number": 2, "response": COMPLETED},
)


@pytest.mark.parametrize("kind", ["error", "response.failed"])
async def test_a_context_length_error_in_the_stream_is_answered_by_compacting_and_retrying(
    tokenizer: TiktokenTokenizer, kind: str
) -> None:
    big = len(orjson.dumps(body(codex_input(8))))

    def answer(sent: Sent) -> Reply:
        headers = [(k.encode(), v.encode()) for k, v in STREAM]
        return Reply(200, headers, _failed_stream(kind) if len(sent.body) > big else GOOD_STREAM)

    upstream = FakeUpstream(answer)
    wide = {"gpt-tiny": ModelSpec(context_window=40_000, tokenizer="tiktoken", margin=0.0)}
    service = build_service(tokenizer, ExtractiveSummarizer())
    app = ProxyApp(CONFIG, upstream, ProxyCompactor(service, service), wide, NoMetrics())
    async with client(app) as http:
        response = await http.post(
            "/v1/responses", json=body(codex_input(12), stream=True), headers=OPENAI
        )
    assert response.headers["x-compact-action"] == "retried"
    assert response.content == b"".join(GOOD_STREAM)  # nothing of the refused stream
    assert len(upstream.sent) == 2
    assert len(upstream.sent[1].body) <= big
    assert responses_problem(upstream.sent[1].json) is None
    assert upstream.answers[0].closed


async def test_a_stream_whose_error_is_not_about_length_goes_as_it_came(
    tokenizer: TiktokenTokenizer,
) -> None:
    error = {"type": "error", "sequence_number": 2, "error": {"code": "server_error"}}
    refused = (*_failed_stream("error")[:2], *_events(error))
    headers = [(k.encode(), v.encode()) for k, v in STREAM]
    upstream = FakeUpstream(lambda sent: Reply(200, headers, refused))
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post(
            "/v1/responses", json=body(codex_input(2), stream=True), headers=OPENAI
        )
    assert response.content == b"".join(refused)
    assert len(upstream.sent) == 1


async def test_a_websocket_upgrade_is_refused_with_a_426_and_reaches_no_provider(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    upgrade = {
        **OPENAI,
        "connection": "Upgrade",
        "upgrade": "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.get("/v1/responses", headers=upgrade)
    assert response.status_code == 426
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert upstream.sent == []


@pytest.mark.parametrize("extension", [True, False])
async def test_a_websocket_scope_is_answered_426_or_closed_before_it_is_accepted(
    tokenizer: TiktokenTokenizer, extension: bool
) -> None:
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "websocket",
        "path": "/v1/responses",
        "headers": [],
        "extensions": {"websocket.http.response": {}} if extension else {},
    }

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await proxy(FakeUpstream(), tokenizer)(scope, receive, send)
    if extension:
        assert [m["type"] for m in sent] == [
            "websocket.http.response.start",
            "websocket.http.response.body",
        ]
        assert sent[0]["status"] == 426
    else:
        assert sent == [{"type": "websocket.close", "code": 1008}]


def _searched(i: int) -> dict[str, Any]:
    """An assistant turn with a server tool's call and its result, as Anthropic sends them."""
    use = {
        "type": "server_tool_use",
        "id": f"srvtoolu_{i}",
        "name": "web_search",
        "input": {"query": f"parser error {i}"},
    }
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": f"srvtoolu_{i}",
        "content": [{"type": "web_search_result", "url": f"https://e.com/{i}", "title": "x"}],
    }
    return {"role": "assistant", "content": [use, result, {"type": "text", "text": f"Found {i}."}]}


async def test_server_tool_blocks_stay_paired_in_any_cut(tokenizer: TiktokenTokenizer) -> None:
    for turns in range(14, 20):
        messages: list[dict[str, Any]] = [user("Fix the build of the parser.")]
        for i in range(1, turns + 1):
            messages += [_searched(i), user(f"Task {i}: " + OUTPUT)]
        upstream = FakeUpstream()
        raw = orjson.dumps({"model": "gpt-tiny", "max_tokens": 100, "messages": messages})
        async with client(proxy(upstream, tokenizer)) as http:
            response = await http.post("/v1/messages", content=raw, headers=ANTHROPIC)
        assert response.headers["x-compact-action"] == "compacted"
        sent = upstream.sent[0].json["messages"]
        assert isinstance(sent, list)
        uses, results = [], []
        for message in sent:
            blocks = message["content"] if isinstance(message["content"], list) else []
            ids = {b.get("id") for b in blocks if b.get("type") == "server_tool_use"}
            answered = {
                b.get("tool_use_id") for b in blocks if b.get("type") == "web_search_tool_result"
            }
            assert ids == answered  # each call with its result, in the same turn
            uses += ids
            results += answered
        assert uses  # some were kept as sent
        assert anthropic_problem(upstream.sent[0].json, needs_max_tokens=True) is None


async def test_a_400_for_the_length_is_answered_by_compacting_below_the_size_that_failed(
    tokenizer: TiktokenTokenizer,
) -> None:
    """The Responses error names no limit: the retry compacts below what was sent."""
    big = len(orjson.dumps(body(codex_input(8))))
    refused = orjson.dumps(responses_context_length())

    def answer(sent: Sent) -> Reply:
        if len(sent.body) > big:
            return Reply(400, [(b"content-type", b"application/json")], (refused,))
        return Reply()

    upstream = FakeUpstream(answer)
    wide = {"gpt-tiny": ModelSpec(context_window=40_000, tokenizer="tiktoken", margin=0.0)}
    service = build_service(tokenizer, ExtractiveSummarizer())
    app = ProxyApp(CONFIG, upstream, ProxyCompactor(service, service), wide, NoMetrics())
    async with client(app) as http:
        response = await http.post("/v1/responses", json=body(codex_input(12)), headers=OPENAI)
    assert response.status_code == 200
    assert response.headers["x-compact-action"] == "retried"
    assert len(upstream.sent) == 2
    assert len(upstream.sent[1].body) <= big
    assert responses_problem(upstream.sent[1].json) is None


async def test_a_developer_message_mid_conversation_is_live_and_sent_once_as_it_was(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Codex adds a developer message when its permissions change: a system message after
    the conversation began, which the agent re-sends as it is (`app.core.proxy.live`): kept
    as sent where it was, never summarized, never twice, the Responses rules held."""
    upstream = FakeUpstream()
    items = codex_input(12)
    notice = _said("developer", "<permissions instructions>sandbox: danger-full-access")
    items.insert(len(items) - 6, notice)  # before the last turn, which is kept as sent
    async with client(proxy(upstream, tokenizer)) as http:
        response = await http.post("/v1/responses", json=body(items), headers=OPENAI)
    assert response.headers["x-compact-action"] == "compacted"
    forwarded = _sent_input(upstream.sent[0])
    assert forwarded.count(notice) == 1
    after = forwarded[forwarded.index(notice) + 1]
    assert after == items[items.index(notice) + 1]  # where the agent put it
    assert responses_problem(upstream.sent[0].json) is None
    assert len(forwarded) < len(items)
