"""Request limits through the real ASGI stack: body size, shape, deadline, summary slots."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.api.limits import _deeper_than
from app.core.ports import SummaryRequest
from tests.builders import FakeSummarizer, assistant, bulk_round, read_round, system, user

pytestmark = pytest.mark.anyio

CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug."),
    *bulk_round(),
    *read_round("a.py", "x = 1"),
    assistant("Done."),
]
WORK_ROUTES = ["/count", "/should-compact", "/compact", "/compactions"]


def nested(depth: int) -> Any:
    """A tool input nested so that the whole body is `depth` levels deep."""
    value: Any = "leaf"
    for _ in range(depth - 5):  # body, messages, message, content, block
        value = {"a": value}
    call = {"type": "tool_use", "id": "toolu_1", "name": "t", "input": value}
    return {"messages": [{"role": "assistant", "content": [call]}]}


async def test_a_chunked_body_over_the_limit_is_413_before_it_is_all_read(
    client_for: Any,
) -> None:
    client = await client_for(max_request_bytes=1000)
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(100):
            sent.append(1)
            yield b" " * 400

    response = await client.post(
        "/count", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"] == "request_too_large"
    assert len(sent) == 3  # refused on the chunk that passed 1000 bytes


@pytest.mark.parametrize("route", WORK_ROUTES)
async def test_too_many_messages_is_422_naming_messages(client_for: Any, route: str) -> None:
    client = await client_for(max_messages=3)
    response = await client.post(route, json={"messages": CONVERSATION})
    assert response.status_code == 422
    assert response.json() == {
        "error": "too_many_messages",
        "message": "7 messages; at most 3 are accepted",
        "details": [{"field": "messages", "message": "7 messages; at most 3 are accepted"}],
    }


async def test_a_responses_body_s_input_items_are_held_to_the_same_limit(
    client_for: Any,
) -> None:
    client = await client_for(max_messages=3)
    items = [{"role": "user", "content": f"Step {n}."} for n in range(4)]
    response = await client.post("/count", json={"model": "gpt-5", "input": items})
    assert response.status_code == 422
    assert response.json()["details"] == [
        {"field": "input", "message": "4 messages; at most 3 are accepted"}
    ]


async def test_a_list_at_the_message_limit_is_accepted(client_for: Any) -> None:
    client = await client_for(max_messages=7)
    response = await client.post("/count", json={"messages": CONVERSATION})
    assert response.status_code == 200


@pytest.mark.parametrize("route", WORK_ROUTES)
async def test_too_many_blocks_is_422_naming_the_message_that_passed_the_limit(
    client_for: Any, route: str
) -> None:
    client = await client_for(max_blocks=2)
    # blocks: system 0 (string), user 0, assistant 2, tool result 1 -> the limit passes at [3]
    response = await client.post(route, json={"messages": CONVERSATION})
    assert response.status_code == 422
    message = "more than 2 content blocks and tool calls in all"
    assert response.json() == {
        "error": "too_many_blocks",
        "message": message,
        "details": [{"field": "messages[3]", "message": message}],
    }


async def test_openai_tool_calls_count_as_blocks(client_for: Any) -> None:
    client = await client_for(max_blocks=1)
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(2)
    ]
    body = {"messages": [user("x"), {"role": "assistant", "content": None, "tool_calls": calls}]}
    response = await client.post("/count", json=body)
    assert (response.status_code, response.json()["details"][0]["field"]) == (422, "messages[1]")


async def test_nesting_past_the_depth_limit_is_422_naming_where(client_for: Any) -> None:
    client = await client_for(max_depth=8)
    assert (await client.post("/count", json=nested(8))).status_code == 200
    response = await client.post("/count", json=nested(9))
    assert response.status_code == 422
    assert response.json() == {
        "error": "too_deep",
        "message": "JSON nested deeper than 8 levels",
        "details": [
            {
                "field": "messages[0].content[0].input.a.a.a",
                "message": "JSON nested deeper than 8 levels",
            }
        ],
    }


@pytest.mark.parametrize("path", ["/compact", "/sessions/s1/recall"])
@pytest.mark.parametrize("depth", [2_000, 100_000])
async def test_nesting_past_the_parsers_recursion_limit_is_422_not_500(
    client: httpx.AsyncClient, depth: int, path: str
) -> None:
    body = b'{"messages": ' + b"[" * depth + b"]" * depth + b"}"
    response = await client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"] == "too_deep"


async def test_deep_nesting_in_a_body_only_json_parses_is_422_not_500(
    client: httpx.AsyncClient,
) -> None:
    # NaN sends the body to the fallback parser, which recurses in C until RecursionError.
    body = b'{"x": NaN, "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = await client.post(
        "/count", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"] == "too_deep"


async def test_malformed_json_still_gets_the_parsers_400(client_for: Any) -> None:
    client = await client_for(max_depth=8)
    response = await client.post(
        "/compact", content=b'{"messages": [', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_json"


class Stall:
    """A summarizer whose first call never answers until cancelled; later calls answer at
    once. Counts calls and cancellations."""

    def __init__(self) -> None:
        self.calls = 0
        self.cancelled = 0

    async def __call__(self, request: SummaryRequest) -> str:
        self.calls += 1
        if self.calls > 1:
            return "SUMMARY"
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        return "never"


@pytest.mark.slow
async def test_a_compaction_past_the_deadline_is_504_and_frees_its_slot(
    client_with: Any,
) -> None:
    stall = Stall()
    client = await client_with(
        FakeSummarizer(stall),
        request_timeout=1,
        max_concurrent_summaries=1,
        summary_slot_wait=0,
    )
    body = {"messages": CONVERSATION, "force": True}
    response = await client.post("/compact", json=body)
    assert response.status_code == 504
    assert response.json() == {
        "error": "deadline_exceeded",
        "message": "the request took longer than 1 s",
        "details": [],
    }
    assert (stall.calls, stall.cancelled) == (1, 1)
    again = await client.post("/compact", json=body)  # the one slot was released: no 503
    assert (again.status_code, again.json()["compacted"], stall.calls) == (200, True, 2)


async def test_a_slow_upload_is_cut_off_at_the_deadline(client_for: Any) -> None:
    client = await client_for(request_timeout=0.2)

    async def trickle() -> AsyncIterator[bytes]:
        yield b'{"messages": ['
        await anyio.sleep(3600)
        yield b"]}"

    response = await client.post(
        "/count", content=trickle(), headers={"content-type": "application/json"}
    )
    assert (response.status_code, response.json()["error"]) == (504, "deadline_exceeded")


async def test_probes_are_not_under_the_deadline(client_for: Any) -> None:
    client = await client_for(request_timeout=1e-9)
    assert (await client.get("/healthz")).status_code == 200
    assert (await client.post("/count", json={"messages": []})).status_code == 504


class Gate:
    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.entered = 0

    async def __call__(self, request: SummaryRequest) -> str:
        self.entered += 1
        await self.opened.wait()
        return "SUMMARY"


async def wait_until(condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.002)
    raise AssertionError("condition never held")


def archive_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "data" / "archives").glob("*.json"))


async def test_compact_with_every_slot_busy_is_503_busy_and_writes_nothing(
    client_with: Any, tmp_path: Path
) -> None:
    gate = Gate()
    client = await client_with(
        FakeSummarizer(gate), max_concurrent_summaries=1, summary_slot_wait=0
    )
    body = {"messages": CONVERSATION, "force": True}
    first = asyncio.create_task(client.post("/compact", json=body))
    await wait_until(lambda: gate.entered == 1)
    refused = await client.post("/compact", json=body)
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "2"
    assert refused.json() == {
        "error": "busy",
        "message": "all 1 summary slots are busy (waited 0 s); retry shortly",
        "details": [],
    }
    assert len(archive_files(tmp_path)) == 1  # the first request's only
    gate.opened.set()
    assert (await first).json()["compacted"] is True
    assert (await client.post("/compact", json=body)).json()["compacted"] is True
    assert gate.entered == 2


async def test_compact_waits_the_configured_time_for_a_slot(client_with: Any) -> None:
    gate = Gate()
    client = await client_with(
        FakeSummarizer(gate), max_concurrent_summaries=1, summary_slot_wait=30
    )
    body = {"messages": CONVERSATION, "force": True}
    first = asyncio.create_task(client.post("/compact", json=body))
    await wait_until(lambda: gate.entered == 1)
    second = asyncio.create_task(client.post("/compact", json=body))
    await asyncio.sleep(0.05)
    assert not second.done()  # waiting for the slot, not refused
    gate.opened.set()
    answers = [await first, await second]
    assert [a.json()["compacted"] for a in answers] == [True, True]


async def test_a_compaction_below_the_threshold_needs_no_slot(client_with: Any) -> None:
    gate = Gate()
    client = await client_with(
        FakeSummarizer(gate), max_concurrent_summaries=1, summary_slot_wait=0
    )
    first = asyncio.create_task(
        client.post("/compact", json={"messages": CONVERSATION, "force": True})
    )
    await wait_until(lambda: gate.entered == 1)
    below = await client.post("/compact", json={"messages": CONVERSATION})
    assert (below.status_code, below.json()["reason"]) == (200, "below_threshold")
    gate.opened.set()
    await first


async def test_background_jobs_wait_for_a_slot_while_compact_gets_503(
    client_with: Any,
) -> None:
    gate = Gate()
    client = await client_with(
        FakeSummarizer(gate), max_concurrent_summaries=1, summary_slot_wait=0
    )
    body = {"messages": CONVERSATION, "force": True}
    first = asyncio.create_task(client.post("/compact", json=body))
    await wait_until(lambda: gate.entered == 1)
    job = (await client.post("/compactions", json={**body, "session_id": "s-1"})).json()
    assert (await client.post("/compact", json=body)).status_code == 503
    for _ in range(500):
        if (await client.get(f"/compactions/{job['id']}")).json()["state"] == "running":
            break
        await asyncio.sleep(0.002)
    await asyncio.sleep(0.02)
    assert gate.entered == 1  # the job runs but waits for the slot, not summarizing
    gate.opened.set()
    await first
    await wait_until(lambda: gate.entered == 2)
    for _ in range(500):
        state = (await client.get(f"/compactions/{job['id']}")).json()["state"]
        if state == "done":
            break
        await asyncio.sleep(0.002)
    assert state == "done"


def _depth(value: Any) -> int:
    """Nesting depth by definition: containers count, the top-level value is level 1."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3)
    ),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_JSON, st.integers(min_value=0, max_value=8))
def test_depth_check_agrees_with_the_definition(document: Any, max_depth: int) -> None:
    assert _deeper_than(document, max_depth) == (_depth(document) > max_depth)
