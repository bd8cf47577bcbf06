"""Proxy replicas in-process over one session store, for the tests that send one session's
requests through them by turns (the memory store here, PostgreSQL in `tests/postgres`):
what each sent upstream, and the bytes of the head it carried."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import httpx
import orjson

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.proxy.stored import ProxySessionStore
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.metrics import NoMetrics
from tests.builders import assistant, build_service, rounds, user
from tests.proxy.fakes import FakeUpstream, Sent
from tests.proxy.test_app import CONFIG, HEADERS, MODELS

FIELDS: dict[str, Any] = {"model": "claude-tiny", "max_tokens": 100}


def replica(
    store: ProxySessionStore | None, tokenizer: TiktokenTokenizer, secret: bytes = b"k" * 32
) -> tuple[ProxyApp, FakeUpstream]:
    """One replica: its own compactor (and archive), its own upstream, `store` shared."""
    service = build_service(tokenizer, ExtractiveSummarizer())
    compactor = ProxyCompactor(service, service, ProxyPolicy(wait_seconds=0.5), store)
    upstream = FakeUpstream()
    return ProxyApp(
        replace(CONFIG, secret=secret), upstream, compactor, MODELS, NoMetrics()
    ), upstream


def history(last: int) -> list[dict[str, Any]]:
    """A session of `last` rounds (12 pass the 4000-token limit of `claude-tiny`)."""
    return [user("Fix the build of the parser."), *rounds(1, last)[1:]]


def later(messages: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    return [*messages, assistant(f"Next {turn}."), user(f"And part {turn}.")]


async def send(
    app: ProxyApp, upstream: FakeUpstream, messages: list[dict[str, Any]], session: str = "s1"
) -> tuple[str, Sent]:
    """`messages` through `app` as the agent's `session`: the answer's `x-compact-action`,
    and what its upstream was sent."""
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://proxy"
    ) as http:
        answer = await http.post(
            "/v1/messages",
            content=orjson.dumps({**FIELDS, "messages": messages}),
            headers={**HEADERS, "x-claude-code-session-id": session},
        )
    assert answer.status_code == 200
    return answer.headers["x-compact-action"], upstream.sent[-1]


def head_bytes(sent: Sent, client: list[dict[str, Any]]) -> bytes:
    """The bytes of `sent`'s body up to the end of the head it carries in place of the
    client's first messages (all of the body before the client's kept messages)."""
    messages = sent.json["messages"]
    assert isinstance(messages, list)
    kept = next(
        n
        for n in range(min(len(client), len(messages)), 0, -1)
        if messages[len(messages) - n :] == client[-n:]
    )
    head = orjson.dumps({**FIELDS, "messages": messages[: len(messages) - kept]})[:-2]
    assert sent.body.startswith(head)
    return head


async def written(app: ProxyApp) -> None:
    """Until the replica's writes are done (they run beside the requests)."""
    assert app.compactor is not None
    for _ in range(500):
        if not app.compactor.shared._writes:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("writes still under way")
