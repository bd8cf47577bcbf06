"""The OpenAI Responses API's body (`input` items, `instructions`, `max_output_tokens`) on
every route: counted, judged, compacted in the foreground and in a job, and handed back in
its own form."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.sdk_bodies import body

pytestmark = pytest.mark.anyio

NAME = "openai_responses_tool_loop"


async def test_count_reads_the_items_the_instructions_and_the_tools(
    client: httpx.AsyncClient,
) -> None:
    sent = body(NAME)
    answer = (await client.post("/count", json=sent)).json()
    assert answer["format"] == "responses"
    assert answer["message_count"] == len(sent["input"])
    assert min(answer["parts"].values()) > 0  # instructions, tools and items each count
    assert answer["token_count"] == sum(answer["parts"].values())


async def test_should_compact_judges_the_same_count(client: httpx.AsyncClient) -> None:
    sent = body(NAME)
    counted = (await client.post("/count", json=sent)).json()
    judged = (await client.post("/should-compact", json=sent)).json()
    assert (judged["format"], judged["token_count"]) == ("responses", counted["token_count"])


async def test_compact_hands_back_the_request_with_input_in_its_place(
    client: httpx.AsyncClient,
) -> None:
    sent = body(NAME)
    answer = (await client.post("/compact", json={**sent, "force": True})).json()
    assert answer["compacted"] is True, answer["reason"]
    request = answer["request"]
    assert list(request) == list(sent)
    assert request["instructions"] == sent["instructions"]
    assert request["input"][: len(answer["messages"])] == answer["messages"]
    assert "messages" not in request


async def test_a_string_input_is_read_as_one_user_message_and_handed_back_as_sent(
    client: httpx.AsyncClient,
) -> None:
    sent = {"model": "gpt-5", "instructions": "Be brief.", "input": "Hello there."}
    counted = (await client.post("/count", json=sent)).json()
    assert (counted["format"], counted["message_count"]) == ("responses", 1)
    answer = (await client.post("/compact", json=sent)).json()
    assert answer["compacted"] is False
    assert answer["request"] == sent


async def test_long_instructions_are_the_providers_not_a_focus_for_the_summary(
    client: httpx.AsyncClient,
) -> None:
    """Elsewhere `instructions` is the service's focus (at most 10,000 characters); in a
    Responses body it is the system prompt, of any length."""
    sent = {**body(NAME), "instructions": "Follow the house rules. " * 2000}
    answer = (await client.post("/compact", json={**sent, "force": True})).json()
    assert answer["compacted"] is True
    assert answer["request"]["instructions"] == sent["instructions"]
    assert "house rules" not in answer["summary"]


async def test_an_item_missing_what_is_read_is_named_in_input(client: httpx.AsyncClient) -> None:
    sent = body(NAME)
    del sent["input"][3]["call_id"]
    response = await client.post("/count", json=sent)
    assert response.status_code == 422
    assert response.json()["details"][0]["field"].startswith("input[3]")


async def test_a_format_other_than_responses_for_an_input_body_is_named(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/count", json={**body(NAME), "format": "openai"})
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == ["format"]


async def test_a_job_hands_back_the_responses_request_too(client: httpx.AsyncClient) -> None:
    sent = body(NAME)
    started = (await client.post("/compactions", json={**sent, "force": True})).json()
    job: dict[str, Any] = {}
    for _ in range(300):
        job = (await client.get(f"/compactions/{started['id']}")).json()
        if job["state"] not in ("queued", "running"):
            break
        await asyncio.sleep(0.01)
    assert (job["state"], job["format"]) == ("done", "responses")
    assert list(job["result"]["request"]) == list(sent)
    assert job["sent_count"] == len(sent["input"])


async def test_a_finished_responses_job_applies_to_the_items_sent_since(
    client: httpx.AsyncClient,
) -> None:
    sent = body(NAME)
    started = (await client.post("/compactions", json={**sent, "force": True})).json()
    for _ in range(300):
        job = (await client.get(f"/compactions/{started['id']}")).json()
        if job["state"] not in ("queued", "running"):
            break
        await asyncio.sleep(0.01)
    assert job["state"] == "done"
    later = [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Submitted."}],
        },
        {"role": "user", "content": "Thanks. Now the changelog."},
    ]
    response = await client.post(
        f"/compactions/{started['id']}/apply", json={"messages": [*sent["input"], *later]}
    )
    assert response.status_code == 200, response.text
    applied = response.json()
    assert (applied["format"], applied["compacted"]) == ("responses", True)
    assert applied["messages"][-2:] == later
    assert applied["messages"][: len(job["result"]["messages"])] == job["result"]["messages"]
