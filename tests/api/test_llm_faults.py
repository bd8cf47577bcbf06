"""Every way an LLM API fails, for both adapters, through the whole API: a defined outcome
(retried or not, then `summarization_failed` with the messages unchanged, or the
configured extractive fallback), never a 500."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.builders import assistant, read_round, system, user
from tests.fakes.fake_llm_server import (
    Reply,
    anthropic_message,
    openai_completion,
    reply,
    start_fake_llm,
)
from tests.fakes.summaries import llm_summary

pytestmark = pytest.mark.anyio

BULK = "a line of a long tool output that the summary will not repeat\n" * 60
CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug."),
    *read_round("a.py", "x = 1"),
    *read_round("notes.txt", BULK),
    assistant("Done."),
]
ATTEMPTS = 2
NOW = {"retry-after": "0"}  # a retryable answer that asks for no wait keeps the test fast


@dataclass(frozen=True)
class Adapter:
    name: str
    prefix: str  # of every error message
    success: Callable[..., dict[str, Any]]
    cut_off: dict[str, Any]
    settings: Callable[[str], dict[str, Any]]


ANTHROPIC = Adapter(
    name="anthropic",
    prefix="Anthropic API call failed: ",
    success=anthropic_message,
    cut_off=anthropic_message("## Goals\nhalf a sum", stop_reason="max_tokens"),
    settings=lambda url: {
        "summarizer": "anthropic",
        "anthropic_api_key": "sk-ant-test",
        "anthropic_base_url": url,
    },
)
OPENAI = Adapter(
    name="openai",
    prefix="chat completion API call failed: ",
    success=openai_completion,
    cut_off=openai_completion("## Goals\nhalf a sum", finish_reason="length"),
    settings=lambda url: {
        "summarizer": "openai",
        "openai_base_url": url + "/v1",
        "summary_mode": "transcript",  # auto would give a loopback server the digest path
    },
)


@dataclass(frozen=True)
class Fault:
    name: str
    script: Callable[[Adapter], list[Reply]]
    attempts: int  # calls the fake server sees
    errors: dict[str, str]  # adapter name -> the summarizer's error message
    reason: str  # the failure's reason, shown as `[reason]` before the message
    timeout: float = 10.0  # COMPACT_SUMMARY_TIMEOUT: short only where the fault is a timeout


FAULTS = [
    Fault(
        "server error 500",
        lambda a: [reply(500, {"type": "error"}, NOW)],
        ATTEMPTS,
        {
            "anthropic": "Anthropic API call failed: InternalServerError (HTTP 500)",
            "openai": "chat completion API call failed: HTTP 500",
        },
        "server_error",
    ),
    Fault(
        "overloaded 529",
        lambda a: [reply(529, {"type": "error"}, NOW)],
        ATTEMPTS,
        {
            "anthropic": "Anthropic API call failed: OverloadedError (HTTP 529)",
            "openai": "chat completion API call failed: HTTP 529",
        },
        "server_error",
    ),
    Fault(
        "rate limited 429 with retry-after",
        lambda a: [reply(429, {"type": "error"}, NOW)],
        ATTEMPTS,
        {
            "anthropic": "Anthropic API call failed: RateLimitError (HTTP 429)",
            "openai": "chat completion API call failed: HTTP 429",
        },
        "rate_limited",
    ),
    Fault(
        "timeout",
        lambda a: [reply(200, a.success("too late"), delay=1.0)],
        ATTEMPTS,
        {  # the attempt's bound fires before the SDK's own timeout (a gap between bytes)
            "anthropic": "summary attempt took longer than 0.15s (COMPACT_SUMMARY_TIMEOUT)",
            "openai": "summary attempt took longer than 0.15s (COMPACT_SUMMARY_TIMEOUT)",
        },
        "timeout",
        timeout=0.15,
    ),
    Fault(
        "a 200 whose body is not JSON",
        lambda a: [reply(200, b"<html>gateway says hi</html>")],
        1,
        {
            "anthropic": "Anthropic API returned an unexpected response",
            "openai": "chat completion API returned a body that is not JSON",
        },
        "bad_response",
    ),
    Fault(
        "an empty answer",
        lambda a: [reply(200, a.success("   "))],
        1,
        {"anthropic": "empty summary", "openai": "empty summary"},
        "empty",
    ),
    Fault(
        "an answer cut off at max_tokens",
        lambda a: [reply(200, a.cut_off)],
        1,
        {"anthropic": "summary cut off at max_tokens", "openai": "summary cut off at max_tokens"},
        "truncated",
    ),
    Fault(
        "a client error 400",
        lambda a: [reply(400, {"type": "error"})],
        1,
        {
            "anthropic": "Anthropic API call failed: BadRequestError (HTTP 400)",
            "openai": "chat completion API call failed: HTTP 400",
        },
        "client_error",
    ),
]
ADAPTERS = [pytest.param(ANTHROPIC, id="anthropic"), pytest.param(OPENAI, id="openai")]
FAULT_PARAMS = [pytest.param(f, id=f.name) for f in FAULTS]


def failed(fault_error: str, attempts: int, retried: bool, reason: str) -> str:
    if not retried:
        return f"[{reason}] {fault_error}"
    noun = "attempt" if attempts == 1 else "attempts"
    return f"[{reason}] {fault_error} after {attempts} {noun}"


def fault_settings(adapter: Adapter, url: str, **extra: Any) -> dict[str, Any]:
    return {**adapter.settings(url), "summary_attempts": ATTEMPTS, **extra}


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_fault_returns_the_messages_unchanged_after_the_defined_attempts(
    client_for: Any, adapter: Adapter, fault: Fault
) -> None:
    with start_fake_llm(fault.script(adapter)) as fake:
        client = await client_for(
            **fault_settings(adapter, fake.url, summary_timeout=fault.timeout)
        )
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        attempts = len(fake.requests)
    assert response.status_code == 200
    data = response.json()
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    assert data["messages"] == CONVERSATION
    error = failed(fault.errors[adapter.name], fault.attempts, fault.attempts > 1, fault.reason)
    assert data["warnings"] == [f"summarizer {adapter.name} failed: {error}"]
    assert attempts == fault.attempts


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_fault_with_the_extractive_fallback_still_compacts(
    client_for: Any, adapter: Adapter, fault: Fault
) -> None:
    with start_fake_llm(fault.script(adapter)) as fake:
        client = await client_for(
            **fault_settings(
                adapter, fake.url, summary_fallback="extractive", summary_timeout=fault.timeout
            )
        )
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        attempts = len(fake.requests)
    assert response.status_code == 200
    data = response.json()
    assert (data["compacted"], data["summarizer"]) == (True, "extractive")
    assert data["summary"].startswith("## Goals & Decisions")
    error = failed(fault.errors[adapter.name], fault.attempts, fault.attempts > 1, fault.reason)
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: {error}",
        "summary written by the fallback summarizer extractive",
    ]
    assert attempts == fault.attempts


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_refused_connection_is_retried_then_fails(
    client_for: Any, adapter: Adapter
) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = await client_for(**fault_settings(adapter, f"http://127.0.0.1:{port}"))
    response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    data = response.json()
    assert (response.status_code, data["reason"]) == (200, "summarization_failed")
    assert data["messages"] == CONVERSATION
    error = {
        "anthropic": "Anthropic API call failed: APIConnectionError",
        "openai": "chat completion API call failed: ConnectError",
    }[adapter.name]
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: [connection] {error} after 2 attempts"
    ]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_fault_then_success_is_retried_into_a_summary(
    client_for: Any, adapter: Adapter
) -> None:
    text = llm_summary(CONVERSATION, marker="ok")
    script = [reply(529, {"type": "error"}, NOW), reply(200, adapter.success(text))]
    with start_fake_llm(script) as fake:
        client = await client_for(**fault_settings(adapter, fake.url))
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        attempts = len(fake.requests)
    data = response.json()
    assert (data["compacted"], data["summarizer"], attempts) == (True, adapter.name, 2)
    assert data["summary"].startswith(text + "\n\n## Ledger\n")
    assert data["warnings"] == []
