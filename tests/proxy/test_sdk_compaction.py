"""A long agent session through the proxy with the real SDKs, against a fake provider that
refuses over its window: the agent never sees a context-length error, compactions are
begun in the background and put in without the agent waiting, every request after one
carries the same head bytes, and the provider's prompt cache keeps hitting."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fakes.provider import FakeProvider, Limits, ToolCall, answer
from tests.fakes.provider.sdk import anthropic_client, openai_client
from tests.proxy.heads import pinned
from tests.proxy.live import Live, serve_proxy

pytestmark = pytest.mark.slow

WINDOW = 24_000
MODELS = {
    "claude-proxy-test": {"context_window": WINDOW, "tokenizer": "tiktoken", "margin": 0.2},
    "gpt-proxy-test": {"context_window": WINDOW, "tokenizer": "o200k", "exact": True},
}
TOOLS = [
    {"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}}}
]
MARK = {"type": "ephemeral"}


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[FakeProvider, Live]]:
    limits = Limits(windows={"claude-proxy-test": WINDOW, "gpt-proxy-test": WINDOW})
    with (
        FakeProvider(limits) as provider,
        serve_proxy(provider.url, tmp_path, models=MODELS) as live,
    ):
        provider.respond_with(lambda received: answer(ToolCall("bash", {"command": "pytest -x"})))
        yield provider, live


def _output(i: int) -> str:
    lines = [f"tests/test_case_{i}_{j}.py::test_{j} PASSED [{j}%]" for j in range(40)]
    return "\n".join([*lines, f"FAILED tests/test_parser.py::test_round_{i} - KeyError: 'k{i}'"])


def _settled(live: Live) -> None:
    """The agent's own time between turns: longer than a background compaction takes."""
    compactor = live.app.compactor
    assert compactor is not None
    deadline = time.monotonic() + 10
    while any(s.running for s in compactor._sessions.values()) and time.monotonic() < deadline:
        time.sleep(0.01)


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _usage(exchange: Any) -> dict[str, Any]:
    usage = orjson.loads(b"".join(exchange.sent.chunks)).get("usage", {})
    assert isinstance(usage, dict)
    return usage


@pytest.mark.parametrize("ttl", [None, "1h"])
def test_a_claude_code_session_over_its_window_never_sees_a_context_error(
    live: tuple[FakeProvider, Live], ttl: str | None
) -> None:
    """With its breakpoints of five minutes or of an hour: the head's own lives as long as
    the latest message's, which comes after it (the provider refuses a shorter-lived one
    before a longer-lived one)."""
    provider, proxy = live
    mark = {**MARK, "ttl": ttl} if ttl else MARK
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the parser in src/."}]
    actions, fresh = [], []
    last_head = None
    with anthropic_client(proxy.proxy, api_key="sk-ant-session") as client:
        for i in range(45):
            marked = [*messages[:-1], _marked(messages[-1], mark)]  # Claude Code's moving one
            raw = client.messages.with_raw_response.create(
                model="claude-proxy-test",
                max_tokens=1000,
                system=[{"type": "text", "text": "You are a coding agent.", "cache_control": mark}],
                tools=TOOLS,
                messages=marked,
                extra_headers={"x-claude-code-session-id": "long-1"},
            )
            actions.append(raw.headers["x-compact-action"])
            # A head put in by this request, not the one an earlier request put in.
            assert proxy.app.compactor is not None
            session = proxy.app.compactor._sessions[raw.headers["x-compact-session"]]
            fresh.append(session.head is not None and session.head is not last_head)
            last_head = session.head
            (call,) = raw.parse().content
            result = {"type": "tool_result", "tool_use_id": call.id, "content": _output(i)}
            messages += [
                {"role": "assistant", "content": [call.model_dump()]},
                {"role": "user", "content": [result]},
            ]
            _settled(proxy)
    assert all(e.sent.status == 200 for e in provider.exchanges)
    assert "precompact_started" in actions
    assert "compacted" not in actions  # every compaction was ready before it was needed
    applied = [i for i, a in enumerate(actions) if a == "applied"]
    assert applied
    sent = [orjson.loads(e.received.body)["messages"] for e in provider.exchanges]
    first = applied[0]
    # The session's first messages are pinned as sent, ahead of the summary.
    count = pinned(sent[first], messages)
    assert count >= 1
    assert _text(sent[first][count]).startswith("[Conversation compressed]")
    # Between two compactions, every request starts with what the first one after the
    # compaction sent (the head, then the kept part), byte for byte, and reads it from the
    # provider's cache.
    new_heads = [i for i in applied if fresh[i]]
    assert len(new_heads) >= 2
    between = []
    for start, end in zip(new_heads, [*new_heads[1:], len(actions)], strict=True):
        size = len(sent[start]) - 1  # all but the turn the agent answers next
        heads = {orjson.dumps(sent[i][:size]) for i in range(start, end)}
        assert len(heads) == 1
        between += [_read_share(provider.exchanges[i]) for i in range(start + 1, end)]
    assert between
    assert min(between) > 0.9  # the head and the kept part already sent, read from cache


def _read_share(exchange: Any) -> float:
    usage = _usage(exchange)
    return int(usage["cache_read_input_tokens"]) / _total(usage)


def _marked(message: dict[str, Any], mark: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return {**message, "content": [*blocks[:-1], {**blocks[-1], "cache_control": mark}]}


def _total(usage: dict[str, Any]) -> int:
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(int(usage.get(k) or 0) for k in keys)


def test_an_openai_session_over_its_window_never_sees_a_context_error(
    live: tuple[FakeProvider, Live],
) -> None:
    provider, proxy = live
    provider.respond_with(None)
    messages: list[dict[str, Any]] = [
        {"role": "developer", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the parser in src/."},
    ]
    actions = []
    with openai_client(proxy.proxy, api_key="sk-session") as client:
        for i in range(40):
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-proxy-test", messages=messages, max_completion_tokens=1000
            )
            actions.append(raw.headers["x-compact-action"])
            reply = raw.parse()
            messages += [
                {"role": "assistant", "content": reply.choices[0].message.content},
                {"role": "user", "content": _output(i)},
            ]
            _settled(proxy)
    assert any(a == "applied" for a in actions)
    assert all(e.sent.status == 200 for e in provider.exchanges)
    sent = [orjson.loads(e.received.body)["messages"] for e in provider.exchanges]
    assert all(s[0] == messages[0] for s in sent)
