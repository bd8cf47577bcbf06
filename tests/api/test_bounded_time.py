"""Time bounds that hold against an LLM that sends one byte at a time: the summary timeout
bounds each attempt as a whole (not the gap between bytes), the summary deadline bounds
all attempts together, for /compact and background jobs alike, and a job that runs past
the request deadline ends `failed: deadline_exceeded`. Sub-second bounds keep it short."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.api.test_llm_faults import ADAPTERS, CONVERSATION, Adapter
from tests.fakes.fake_llm_server import reply, start_fake_llm

pytestmark = pytest.mark.anyio

SUMMARY = "## Goals & Decisions\n- fix the bug " + "and more " * 40
DRIP = 0.02  # seconds between bytes: far below any read timeout, ~8 s for the whole body


def dripping(adapter: Adapter) -> Any:
    return reply(200, adapter.success(SUMMARY), drip=DRIP)


def bounded(adapter: Adapter, url: str, **extra: Any) -> dict[str, Any]:
    return {
        **adapter.settings(url),
        "summary_timeout": 0.3,
        "summary_attempts": 3,
        "summary_deadline": 0.45,
        **extra,
    }


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_dripping_llm_is_cut_off_at_the_summary_deadline(
    client_for: Any, adapter: Adapter
) -> None:
    with start_fake_llm([dripping(adapter)]) as fake:
        # each attempt may take 1 s, all of them together 0.45 s: the deadline cuts the call
        client = await client_for(**bounded(adapter, fake.url, summary_timeout=1.0))
        started = time.monotonic()
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        took = time.monotonic() - started
        calls = fake.received
    data = response.json()
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    assert data["messages"] == CONVERSATION
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: [deadline] summary deadline of 0.45s passed "
        "(COMPACT_SUMMARY_DEADLINE) after 1 attempt"
    ]
    assert calls == 1
    assert took < 3.0  # the whole body would take ~8 s


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_each_attempt_is_bounded_as_a_whole(client_for: Any, adapter: Adapter) -> None:
    with start_fake_llm([dripping(adapter)]) as fake:
        client = await client_for(**bounded(adapter, fake.url, summary_attempts=1))
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    assert response.json()["warnings"] == [
        f"summarizer {adapter.name} failed: [timeout] summary attempt took longer than 0.3s "
        "(COMPACT_SUMMARY_TIMEOUT) after 1 attempt"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_background_job_is_bounded_by_the_summary_deadline(
    client_for: Any, adapter: Adapter
) -> None:
    with start_fake_llm([dripping(adapter)]) as fake:
        client = await client_for(**bounded(adapter, fake.url))
        job = (
            await client.post("/compactions", json={"messages": CONVERSATION, "force": True})
        ).json()
        body = await settled(client, job["id"])
    assert body["state"] == "done"
    assert (body["result"]["compacted"], body["result"]["reason"]) == (
        False,
        "summarization_failed",
    )


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_job_past_the_request_deadline_fails_with_deadline_exceeded(
    client_for: Any, adapter: Adapter
) -> None:
    with start_fake_llm([dripping(adapter)]) as fake:
        client = await client_for(
            **bounded(adapter, fake.url, summary_timeout=30, summary_deadline=60),
            request_timeout=0.5,
        )
        job = (
            await client.post("/compactions", json={"messages": CONVERSATION, "force": True})
        ).json()
        body = await settled(client, job["id"])
    assert (body["state"], body["reason"]) == ("failed", "deadline_exceeded")
    assert body["message"] == "the compaction took longer than 0.5s"


async def settled(client: Any, job_id: str, within: float = 5.0) -> dict[str, Any]:
    ends = time.monotonic() + within
    while time.monotonic() < ends:
        body: dict[str, Any] = (await client.get(f"/compactions/{job_id}")).json()
        if body["state"] not in ("queued", "running"):
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"job {job_id} still {body['state']} after {within}s")
