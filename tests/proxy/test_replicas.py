"""Replicas of the proxy on one session store (here the memory store, as one process's
proxies share it; `tests/postgres/test_proxy_replicas.py` runs the same on PostgreSQL): a
session's requests sent by turns through them carry the head one of them put in, byte
for byte; a store that fails leaves each replica to go on from its own memory."""

from __future__ import annotations

import logging

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.proxy import Head
from app.core.proxy.stored import MemorySessionStore, SessionState, StoredSession
from tests.proxy.fakes import Reply
from tests.proxy.replicas import FIELDS, head_bytes, history, later, replica, send, written
from tests.proxy.test_app import HEADERS

pytestmark = pytest.mark.anyio


async def test_the_next_request_on_another_replica_carries_the_same_head_bytes(
    tokenizer: TiktokenTokenizer,
) -> None:
    store = MemorySessionStore()
    (a, sent_a), (b, sent_b) = replica(store, tokenizer), replica(store, tokenizer)
    first = history(12)
    compacted, on_a = await send(a, sent_a, first)
    second = later(first, 1)
    applied, on_b = await send(b, sent_b, second)
    assert (compacted, applied) == ("compacted", "applied")
    head = head_bytes(on_a, first)
    assert head_bytes(on_b, second) == head
    # And back on the first replica, and on a replica started since.
    third = later(second, 2)
    assert (await send(a, sent_a, third))[0] == "applied"
    c, sent_c = replica(store, tokenizer)
    fourth = later(third, 3)
    assert (await send(c, sent_c, fourth))[0] == "applied"
    assert head_bytes(sent_a.sent[-1], third) == head_bytes(sent_c.sent[-1], fourth) == head


async def test_without_a_shared_store_the_other_replica_compacts_again(
    tokenizer: TiktokenTokenizer,
) -> None:
    """What the store prevents: each replica's memory alone makes a head of its own."""
    a, sent_a = replica(None, tokenizer)
    b, sent_b = replica(None, tokenizer)
    first = history(12)
    await send(a, sent_a, first)
    assert (await send(b, sent_b, later(first, 1)))[0] == "compacted"


async def test_a_head_put_in_on_the_other_replica_is_read_again_before_splicing(
    tokenizer: TiktokenTokenizer,
) -> None:
    store = MemorySessionStore()
    (a, sent_a), (b, sent_b) = replica(store, tokenizer), replica(store, tokenizer)
    first = history(12)
    await send(a, sent_a, first)
    grown = history(24)  # past the limit again, after the head
    assert (await send(b, sent_b, grown))[0] == "compacted"
    new_head = head_bytes(sent_b.sent[-1], grown)
    assert new_head != head_bytes(sent_a.sent[-1], first)
    next_turn = later(grown, 1)
    assert (await send(a, sent_a, next_turn))[0] == "applied"
    assert head_bytes(sent_a.sent[-1], next_turn) == new_head


async def test_the_pace_and_the_ratio_are_shared_too(tokenizer: TiktokenTokenizer) -> None:
    store = MemorySessionStore()
    (a, sent_a), (b, sent_b) = replica(store, tokenizer), replica(store, tokenizer)
    assert a.compactor is not None
    assert b.compactor is not None
    first = history(12)
    await send(a, sent_a, first)
    # The fake provider counts 10 input tokens, against our thousands: the ratio's floor.
    on_a = next(iter(a.compactor._sessions.values()))
    assert on_a.ratio == 0.5
    second = later(first, 1)
    await send(b, sent_b, second)
    on_b = next(iter(b.compactor._sessions.values()))
    assert on_b.ratio == 0.5
    bodies = [orjson.dumps({**FIELDS, "messages": m}) for m in (first, second)]
    assert on_b.pace.sizes == [len(b) for b in bodies]  # A's request and B's own
    await send(a, sent_a, later(second, 2))
    assert len(on_a.pace.sizes) == 3
    assert on_a.pace.sizes == sorted(on_a.pace.sizes)
    assert on_a.pace.last_at is not None
    assert on_a.pace.turn_seconds is not None


class Failing:
    """A store whose database is gone."""

    def __init__(self) -> None:
        self.calls = 0

    async def load(self, session_id: str, version: int, head_version: int) -> StoredSession:
        self.calls += 1
        raise ConnectionError("the database went away")

    async def save(self, session_id: str, state: SessionState, head: Head | None = None) -> int:
        self.calls += 1
        raise ConnectionError("the database went away")


async def test_a_failing_store_leaves_each_replica_its_own_memory(
    tokenizer: TiktokenTokenizer, caplog: pytest.LogCaptureFixture
) -> None:
    store = Failing()
    app, upstream = replica(store, tokenizer)  # type: ignore[arg-type]
    first = history(12)
    with caplog.at_level(logging.WARNING, "context_compact.proxy"):
        assert (await send(app, upstream, first))[0] == "compacted"
        second = later(first, 1)
        assert (await send(app, upstream, second))[0] == "applied"
    assert head_bytes(upstream.sent[-1], second) == head_bytes(upstream.sent[0], first)
    assert store.calls >= 3
    warnings = [r.getMessage() for r in caplog.records if r.name == "context_compact.proxy"]
    # One line, not one a request.
    assert warnings == ["proxy session store read failed; the proxy goes on from memory"]


class Counting(MemorySessionStore):
    """The memory store, its calls counted."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def load(self, session_id: str, version: int, head_version: int) -> StoredSession | None:
        self.calls.append("load")
        return await super().load(session_id, version, head_version)

    async def save(self, session_id: str, state: SessionState, head: Head | None = None) -> int:
        self.calls.append("save+head" if head is not None else "save")
        return await super().save(session_id, state, head)


async def test_one_read_before_a_compacting_request_and_none_on_other_routes(
    tokenizer: TiktokenTokenizer,
) -> None:
    store = Counting()
    app, upstream = replica(store, tokenizer)
    seen_at_forward: list[list[str]] = []
    upstream.answer = lambda sent: (seen_at_forward.append(list(store.calls)), Reply())[1]
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://proxy"
    ) as http:
        assert (await http.get("/v1/models", headers=HEADERS)).status_code == 200
    assert store.calls == []
    first = history(12)
    await send(app, upstream, first)
    # Before the request went: one read; the write of the head it put in after it.
    assert seen_at_forward[-1] == ["load"]
    await written(app)
    assert store.calls == ["load", "save+head", "save"]  # the provider's ratio, read after
    store.calls.clear()
    await send(app, upstream, later(first, 1))
    assert seen_at_forward[-1] == ["load"]
    await written(app)
    assert store.calls == ["load", "save", "save"]
