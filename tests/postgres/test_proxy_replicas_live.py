"""Two whole apps serving the proxy on one PostgreSQL database, in front of the fake
provider, a long agent session sent to them by turns as a load balancer would: the agent
never sees an error, every request between two heads starts with the same bytes whichever
replica sent it, and the provider reads them from its cache."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.fakes.provider import FakeProvider, Limits, ToolCall, answer
from tests.proxy.live import Live, serve_proxy
from tests.proxy.test_sdk_compaction import MARK, MODELS, WINDOW, _marked, _output, _read_share

pytestmark = pytest.mark.slow

HEADERS = {
    "x-api-key": "sk-ant-replicas",
    "anthropic-version": "2023-06-01",
    "x-claude-code-session-id": "replicated-live",
}


@pytest.fixture
def replicas(tmp_path: Path, database_url: str) -> Iterator[tuple[FakeProvider, list[Live]]]:
    limits = Limits(windows={"claude-proxy-test": WINDOW})
    with ExitStack() as stack:
        provider = stack.enter_context(FakeProvider(limits))
        provider.respond_with(lambda received: answer(ToolCall("bash", {"command": "pytest -x"})))
        lives = [
            stack.enter_context(
                serve_proxy(provider.url, tmp_path / name, models=MODELS, database_url=database_url)
            )
            for name in ("a", "b")
        ]
        yield provider, lives


def _settled(lives: list[Live]) -> None:
    """The agent's own time between turns: its replicas' compactions and writes done."""
    deadline = time.monotonic() + 10
    for live in lives:
        compactor = live.app.compactor
        assert compactor is not None
        while time.monotonic() < deadline and (
            any(s.running for s in compactor._sessions.values()) or compactor.shared._writes
        ):
            time.sleep(0.01)


def test_a_session_sent_by_turns_to_two_replicas_carries_one_head(
    replicas: tuple[FakeProvider, list[Live]],
) -> None:
    provider, lives = replicas
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the parser in src/."}]
    actions, replica_of, clients, sessions = [], [], [], []
    for i in range(70):
        live = lives[i % 2]
        body = {
            "model": "claude-proxy-test",
            "max_tokens": 1000,
            "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": MARK}],
            "messages": [*messages[:-1], _marked(messages[-1], MARK)],  # Claude Code's mark
        }
        answered = httpx.post(
            f"{live.proxy}/v1/messages", content=orjson.dumps(body), headers=HEADERS, timeout=30
        )
        assert answered.status_code == 200, answered.text
        actions.append(answered.headers["x-compact-action"])
        sessions.append(answered.headers["x-compact-session"])
        replica_of.append(i % 2)
        clients.append(body["messages"])
        (call,) = answered.json()["content"]
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": _output(i)}
        messages = [
            *messages,
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
        _settled(lives)
    assert all(e.sent.status == 200 for e in provider.exchanges)
    # Both replicas name the session alike (the first request's own name aside: its first
    # message, the latest, carries the agent's mark in a block, as a string later on).
    assert len(set(sessions[1:])) == 1
    applied = [i for i, a in enumerate(actions) if a in ("applied", "compacted")]
    assert len(applied) >= 10
    sent = [orjson.loads(e.received.body)["messages"] for e in provider.exchanges]
    # Group the requests by the head they carry (all they sent before the client's own
    # messages): each head goes out from both replicas, the same bytes each time.
    head_of = {i: _head(sent[i], clients[i]) for i in applied}
    heads = {
        head: {replica_of[i] for i in applied if head_of[i] == head} for head in head_of.values()
    }
    assert len(heads) >= 2
    assert all(owners == {0, 1} for owners in heads.values())
    # A request on one replica after one with the same head on the other: what the other
    # sent (the head, then the kept part) is read from the provider's cache.
    shares = [
        _read_share(provider.exchanges[i + 1])
        for i in applied
        if i + 1 in head_of and head_of[i + 1] == head_of[i]
    ]
    assert len(shares) >= 10
    assert min(shares) > 0.9


def _head(sent: list[Any], client: list[Any]) -> bytes:
    """The bytes of what `sent` carries in place of the client's first messages."""
    kept = next(n for n in range(min(len(sent), len(client)), 0, -1) if sent[-n:] == client[-n:])
    return orjson.dumps(sent[: len(sent) - kept])
