"""The stored form of a proxied session: a head comes back as the same bytes (key order
and numbers as the agent sent them), the pace on the reader's clock; the memory store
answers only what changed since the caller's copy."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.core import json_numbers
from app.core.cost import SummarizerCost
from app.core.proxy import Head, Pace, make_head
from app.core.proxy.stored import (
    MemorySessionStore,
    SessionState,
    decode_head,
    decode_state,
    encode_head,
    encode_state,
)

pytestmark = pytest.mark.anyio

# Keys out of order, a number orjson would rewrite, a float and unicode.
SENT = (
    '[{"role":"user","content":[{"type":"text","text":"Fix été","z":1,"a":1e400}]},'
    '{"role":"assistant","content":"ok","n":0.1}]'
).encode()


def _client() -> list[dict[str, Any]]:
    document, _ = json_numbers.loads(SENT)
    assert isinstance(document, list)
    return [*document, {"role": "user", "content": "Go on."}]


def _head() -> Head:
    client = [{"role": "user", "content": "Fix it."}, {"role": "assistant", "content": "ok"}]
    return make_head(client[:1], client, 1, 12)


def test_a_head_comes_back_as_the_same_bytes() -> None:
    client = _client()
    head = Head(
        tuple(client[:2]),
        2,
        "d" * 64,
        seam=True,
        tokens=123,
        pinned=1,
        quick=True,
        replaced_tokens=456,
        archive="arch-7",
        cost=SummarizerCost(calls=2, reused=1, input_tokens=900, output_tokens=80, seconds=1.5),
    )
    again = decode_head(encode_head(head))
    assert again == head  # every field, the archive to let go of included
    assert json_numbers.dumps(list(again.core)) == SENT
    assert json_numbers.dumps(again.messages) == json_numbers.dumps(head.messages)


def test_a_head_written_before_a_field_was_takes_its_default() -> None:
    head = Head(({"role": "user", "content": "Fix it."},), 1, "d" * 64, seam=False, tokens=5)
    document = orjson.loads(encode_head(head))
    del document["archive"], document["replaced_tokens"], document["cost"]
    assert decode_head(orjson.dumps(document)) == head


def test_the_pace_moves_to_the_reader_s_clock() -> None:
    pace = Pace(sizes=[10, 20], last_at=100.0, turn_seconds=2.5, largest=10)
    state = SessionState(ratio=1.25, made=300, quiet_below=900, pace=pace)
    document = orjson.loads(orjson.dumps(encode_state(state, offset=1_000.0)))
    assert document["pace"]["last_at"] == 1_100.0  # the wall clock
    read = decode_state(document, offset=1_050.0)  # a process whose clock started later
    assert read == SessionState(1.25, 300, 900, Pace(4, [10, 20], 50.0, 2.5, None, 10))


async def test_the_memory_store_answers_what_changed_since_the_caller_s_copy() -> None:
    store = MemorySessionStore(max_sessions=2)
    head = _head()
    state = SessionState(made=1)
    assert await store.load("s", 0, 0) is None
    assert await store.save("s", state, head) == 1
    assert await store.save("s", SessionState(made=2)) == 2
    assert await store.load("s", 2, 1) is None  # current
    stale = await store.load("s", 1, 1)  # its head is current, not its state
    assert stale is not None
    assert (stale.version, stale.head_version, stale.head, stale.state.made) == (2, 1, None, 2)
    new = await store.load("s", 0, 0)
    assert new is not None
    assert new.head is head
    assert new.head_version == 1
    # The least recently used is forgotten past `max_sessions`.
    await store.save("t", state)
    await store.save("u", state)
    assert await store.load("s", 0, 0) is None
