"""An LLM that answers 200 with something that is not a summary, through /compact, for
both adapters against the fake LLM server: a summarizer failure with its reason in the
warning and in the metrics, then the extractive fallback when configured, else the
messages unchanged. Never the answer stored as the summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.api.test_llm_faults import ADAPTERS, CONVERSATION, Adapter
from tests.fakes.fake_llm_server import reply, start_fake_llm

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Answer:
    text: str
    reason: str
    message: str


ANSWERS = [
    Answer(
        "I'm sorry, I can't help with that.",
        "refusal",
        "the answer is a refusal, not a summary",
    ),
    Answer(
        "I apologize, but I cannot assist with that request.",
        "refusal",
        "the answer is a refusal, not a summary",
    ),
    Answer(
        "I apologize for the confusion. Could you share the conversation again?",
        "apology",
        "the answer is an apology, not a summary",
    ),
    Answer(
        "Error: The model `x` does not exist",
        "error_message",
        "the answer is an error message, not a summary",
    ),
    Answer(
        "The user asked to fix a bug and the agent fixed it.",
        "no_sections",
        "the answer has none of the section headings the prompt asked for",
    ),
    Answer("## Goals & Decisions\n" + "word " * 2_000, "oversized", "summary over 128 tokens"),
]
ANSWER_PARAMS = [pytest.param(a, id=a.reason + "-" + a.text[:12]) for a in ANSWERS]


def settings(adapter: Adapter, url: str, **extra: Any) -> dict[str, Any]:
    # summary_max_tokens 64: an answer may be up to 128 tokens (twice) before `oversized`
    return {**adapter.settings(url), "summary_max_tokens": 64, **extra}


@pytest.mark.parametrize("answer", ANSWER_PARAMS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_an_answer_that_is_no_summary_returns_the_messages_unchanged(
    client_for: Any, adapter: Adapter, answer: Answer
) -> None:
    with start_fake_llm([reply(200, adapter.success(answer.text))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        calls = len(fake.requests)
        metrics = (await client.get("/metrics")).text
    data = response.json()
    assert response.status_code == 200
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    assert data["messages"] == CONVERSATION
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: [{answer.reason}] {answer.message}"
    ]
    assert calls == 1  # not retried: the same prompt gets the same kind of answer
    series = (
        "context_compact_summarizer_failures_total"
        f'{{reason="{answer.reason}",summarizer="{adapter.name}"}} 1.0'
    )
    assert series in metrics


@pytest.mark.parametrize("answer", ANSWER_PARAMS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_the_extractive_fallback_replaces_an_answer_that_is_no_summary(
    client_for: Any, adapter: Adapter, answer: Answer
) -> None:
    with start_fake_llm([reply(200, adapter.success(answer.text))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_fallback="extractive"))
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    data = response.json()
    assert (data["compacted"], data["summarizer"]) == (True, "extractive")
    assert data["summary"].startswith("## Goals & Decisions\n")
    assert answer.text.strip()[:30] not in data["summary"]
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: [{answer.reason}] {answer.message}",
        "summary written by the fallback summarizer extractive",
    ]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_ten_megabytes_from_an_llm_that_ignores_max_tokens_are_refused(
    client_for: Any, adapter: Adapter
) -> None:
    """The OpenAI-compatible adapter stops reading past its byte cap; the Anthropic SDK
    reads the whole body, and the check refuses it before anything is counted."""
    huge = "## Goals & Decisions\n" + "x" * 10_000_000
    with start_fake_llm([reply(200, adapter.success(huge))]) as fake:
        client = await client_for(**adapter.settings(fake.url))
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    data = response.json()
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    error = {
        "anthropic": "summary over 8192 tokens",  # 2 x COMPACT_SUMMARY_MAX_TOKENS
        "openai": "chat completion API answer over 589824 bytes",  # 128 B x 4096 + 64 KiB
    }[adapter.name]
    assert data["warnings"] == [f"summarizer {adapter.name} failed: [oversized] {error}"]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_summary_that_quotes_an_error_is_used(client_for: Any, adapter: Adapter) -> None:
    text = (
        "## Goals & Decisions\n- Fix the bug.\n## Errors & Resolutions\n"
        "- The agent hit `Error: file not found` and fixed the path.\n"
        "- The tool said \"I'm sorry, I can't open that file\"; the agent used another path."
    )
    with start_fake_llm([reply(200, adapter.success(text))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        response = await client.post("/compact", json={"messages": CONVERSATION, "force": True})
    data = response.json()
    assert (data["compacted"], data["summarizer"], data["warnings"]) == (True, adapter.name, [])
    assert data["summary"].startswith(text + "\n\n## Ledger\n")


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_the_tail_strategy_checks_its_archived_template(
    client_for: Any, adapter: Adapter
) -> None:
    """`tail` asks for the archive template: the five sections' headings are not its."""
    from tests.builders import rounds, system

    messages = [system("You are a coding agent."), *rounds(1, 3)]
    body = {"messages": messages, "force": True, "options": {"strategy": "tail"}}
    body["options"]["tail_keep_recent_rounds"] = 1
    sections = "## Goals & Decisions\n- fix"
    archived = "### 🎯 Objectives & Status\n* **Original Goal**: fix"
    outcomes = []
    for text in (sections, archived):
        with start_fake_llm([reply(200, adapter.success(text))]) as fake:
            client = await client_for(**settings(adapter, fake.url))
            data = (await client.post("/compact", json=body)).json()
        outcomes.append((data["compacted"], data.get("reason")))
    assert outcomes == [(False, "summarization_failed"), (True, None)]
