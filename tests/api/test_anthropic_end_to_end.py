"""The whole app with the real Anthropic SDK against a fake Messages server on 127.0.0.1."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.builders import assistant, bulk_round, read_round, system, user
from tests.fakes.fake_llm_server import anthropic_message, reply, start_fake_llm
from tests.fakes.summaries import llm_summary

pytestmark = pytest.mark.anyio

SECRET = "sk-ant-secret-test-key-0123456789"
CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug."),
    *bulk_round(),
    *read_round("a.py", "x = 1"),
    assistant("Done."),
]


@pytest.mark.slow
async def test_llm_summary_is_used_and_the_key_leaks_nowhere(
    client_for: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    text = llm_summary(CONVERSATION, marker="LLM SUMMARY")
    script = [reply(500, {"type": "error"}), reply(200, anthropic_message(text))]
    with start_fake_llm(script) as fake:
        client = await client_for(
            summarizer="anthropic",
            anthropic_api_key=SECRET,
            anthropic_base_url=fake.url,
            summary_model="claude-test",
        )
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        received = fake.requests
    data = response.json()
    assert data["compacted"] is True
    assert data["summarizer"] == "anthropic"
    assert data["summary"] == f"{text}\n\n## Ledger\n- [file_read] a.py\n- [goal] Fix the bug."
    assert data["messages"][1]["content"] == f"[Conversation compressed]\n\n{data['summary']}"
    assert {"kind": "file_read", "text": "a.py", "in_summary": True} in data["ledger"]
    assert len(received) == 2  # one 500, retried once
    assert received[-1].headers["x-api-key"] == SECRET
    assert received[-1].body["model"] == "claude-test"
    assert (
        "Pay special attention to the MOST RECENT messages"
        in (received[-1].body["messages"][0]["content"])
    )
    assert SECRET not in response.text
    assert SECRET not in caplog.text
    for archived in (tmp_path / "data").rglob("*"):
        if archived.is_file():
            assert SECRET.encode() not in archived.read_bytes()


@pytest.mark.slow
async def test_all_attempts_failing_returns_the_original_messages(client_for: Any) -> None:
    with start_fake_llm([reply(503, {"type": "error"})]) as fake:
        client = await client_for(
            summarizer="anthropic",
            anthropic_api_key=SECRET,
            anthropic_base_url=fake.url,
            summary_attempts=2,
        )
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        attempts = len(fake.requests)
    data = response.json()
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    assert data["messages"] == CONVERSATION
    assert attempts == 2
    assert data["warnings"] == [
        "summarizer anthropic failed: [server_error] Anthropic API call failed: "
        "InternalServerError (HTTP 503)"
        " after 2 attempts"
    ]
    assert SECRET not in response.text


@pytest.mark.slow
async def test_extractive_fallback_when_configured(client_for: Any) -> None:
    with start_fake_llm([reply(200, anthropic_message(""))]) as fake:
        client = await client_for(
            summarizer="anthropic",
            anthropic_api_key=SECRET,
            anthropic_base_url=fake.url,
            summary_fallback="extractive",
        )
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    data = response.json()
    assert data["compacted"] is True
    assert data["summarizer"] == "extractive"
    assert data["summary"].startswith("## Goals & Decisions")
