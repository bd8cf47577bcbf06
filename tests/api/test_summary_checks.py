"""An LLM that answers 200 with something that is not a summary, through /compact and as a
background job, for both adapters against the fake LLM server: a summarizer failure with
its reason in the warning and in the metrics, then the extractive fallback when
configured, else the messages unchanged. Never the answer stored as the summary; a real
summary is stored cleaned of its reasoning and template tokens."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.api.test_llm_faults import ADAPTERS, Adapter
from tests.builders import rounds, system
from tests.fakes.fake_llm_server import openai_completion, reply, start_fake_llm
from tests.fakes.summaries import llm_summary
from tests.summary_answers import CONVERSATION, ISSUE_ANSWERS, LOREM, SUMMARY

pytestmark = pytest.mark.anyio

MESSAGES = {
    "empty": "empty summary",
    "reasoning_only": "the answer is reasoning without a summary",
    "error_message": "the answer is an error message, not a summary",
    "refusal": "the answer is a refusal, not a summary",
    "apology": "the answer is an apology, not a summary",
    "echo": "the answer repeats the prompt instead of summarizing",
    "copy": "the answer copies the conversation instead of summarizing it",
    "repetitive": "the answer repeats a few words",
    "no_sections": "the answer has none of the section headings the prompt asked for",
    "filler": "the sections do not talk about the conversation",
    "missing_sections": "the answer lacks the sections: File Operations, Tool Calls, "
    "Task Status, Errors & Resolutions",
    "empty_sections": "sections without content: Goals & Decisions, File Operations, "
    "Tool Calls, Task Status, Errors & Resolutions",
}


@dataclass(frozen=True)
class Answer:
    text: str
    reason: str
    message: str


# The archive template's echo is the `tail` strategy's (below): `full` asks for the sections.
FULL_ANSWERS = {k: v for k, v in ISSUE_ANSWERS.items() if "archived" not in k}
ANSWERS = [Answer(text, reason, MESSAGES[reason]) for text, reason in FULL_ANSWERS.values()] + [
    Answer(
        "I apologize for the confusion. Could you share the conversation again?",
        "apology",
        MESSAGES["apology"],
    ),
    Answer(
        "The user asked to fix a bug and the agent fixed it.",
        "no_sections",
        MESSAGES["no_sections"],
    ),
]
ANSWER_PARAMS = [
    pytest.param(a, id=name)
    for a, name in zip(ANSWERS, [*FULL_ANSWERS, "apology", "prose"], strict=True)
]


def settings(adapter: Adapter, url: str, **extra: Any) -> dict[str, Any]:
    return {**adapter.settings(url), **extra}


async def compact(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


@pytest.mark.parametrize("answer", ANSWER_PARAMS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_an_answer_that_is_no_summary_returns_the_messages_unchanged(
    client_for: Any, adapter: Adapter, answer: Answer
) -> None:
    with start_fake_llm([reply(200, adapter.success(answer.text))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
        calls = len(fake.requests)
        metrics = (await client.get("/metrics")).text
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


@pytest.mark.slow
@pytest.mark.parametrize("answer", ANSWER_PARAMS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_the_extractive_fallback_replaces_an_answer_that_is_no_summary(
    client_for: Any, adapter: Adapter, answer: Answer
) -> None:
    with start_fake_llm([reply(200, adapter.success(answer.text))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_fallback="extractive"))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
    assert (data["compacted"], data["summarizer"]) == (True, "extractive")
    assert data["summary"].startswith("## Goals & Decisions\n- First request: Fix the failing")
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: [{answer.reason}] {answer.message}",
        "summary written by the fallback summarizer extractive",
    ]


async def job_result(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/compactions", json=body)
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    for _ in range(400):
        job: dict[str, Any] = (await client.get(f"/compactions/{job_id}")).json()
        if job["state"] in ("done", "failed"):
            assert job["state"] == "done", job
            result: dict[str, Any] = job["result"]
            return result
        await asyncio.sleep(0.01)
    raise AssertionError(f"job {job_id} never finished")


JOB_ANSWERS = [
    p
    for p in ANSWER_PARAMS
    if p.id
    in (
        "refusal-under-every-heading",
        "lorem-under-headings",
        "whole-prompt-echoed",
        "unclosed-think",
    )
]


@pytest.mark.parametrize("answer", JOB_ANSWERS)
@pytest.mark.parametrize("fallback", ["none", "extractive"])
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_background_job_rejects_an_answer_that_is_no_summary(
    client_for: Any, adapter: Adapter, fallback: str, answer: Answer
) -> None:
    with start_fake_llm([reply(200, adapter.success(answer.text))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_fallback=fallback))
        result = await job_result(client, {"messages": CONVERSATION, "force": True})
    failed = f"summarizer {adapter.name} failed: [{answer.reason}] {answer.message}"
    if fallback == "none":
        assert (result["compacted"], result["reason"]) == (False, "summarization_failed")
        assert result["messages"] == CONVERSATION
        assert result["warnings"] == [failed]
    else:
        assert (result["compacted"], result["summarizer"]) == (True, "extractive")
        assert result["warnings"] == [
            failed,
            "summary written by the fallback summarizer extractive",
        ]


def signal_bodies(adapter: Adapter) -> list[tuple[dict[str, Any], str, str]]:
    """Answers whose text is a real summary while the provider says it is not one."""
    tool_calls = [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]
    if adapter.name == "openai":
        refused = openai_completion(SUMMARY)
        refused["choices"][0]["message"]["refusal"] = "I can't help with that."
        calling = openai_completion(SUMMARY)
        calling["choices"][0]["message"]["tool_calls"] = tool_calls
        return [
            (refused, "refusal", "the model refused to summarize"),
            (calling, "tool_calls", "the model called a tool instead of summarizing"),
            (
                openai_completion(SUMMARY, finish_reason="tool_calls"),
                "tool_calls",
                "the model called a tool instead of summarizing",
            ),
            (
                openai_completion(SUMMARY, finish_reason="content_filter"),
                "filtered",
                "the summary was filtered by the server",
            ),
        ]
    using = adapter.success(SUMMARY)
    using["content"].append({"type": "tool_use", "id": "t", "name": "bash", "input": {}})
    return [
        (
            adapter.success(SUMMARY, stop_reason="refusal"),
            "refusal",
            "the model refused to summarize",
        ),
        (using, "tool_calls", "the model called a tool instead of summarizing"),
        (
            adapter.success(SUMMARY, stop_reason="tool_use"),
            "tool_calls",
            "the model called a tool instead of summarizing",
        ),
        (
            adapter.success(SUMMARY, stop_reason="max_tokens"),
            "truncated",
            "summary cut off at max_tokens",
        ),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_provider_signals_fail_a_summary_whatever_its_text(
    client_for: Any, adapter: Adapter
) -> None:
    outcomes = []
    expected = []
    for body, reason, message in signal_bodies(adapter):
        with start_fake_llm([reply(200, body)]) as fake:
            client = await client_for(**settings(adapter, fake.url))
            data = await compact(client, {"messages": CONVERSATION, "force": True})
        outcomes.append((data["compacted"], data["warnings"]))
        expected.append((False, [f"summarizer {adapter.name} failed: [{reason}] {message}"]))
    assert outcomes == expected


@pytest.mark.parametrize(
    "wrapped",
    [
        "<think>\nThe user wants five sections.\n</think>\n{s}",
        "<|im_start|>assistant\n{s}<|im_end|>",
    ],
)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_real_summary_is_stored_without_reasoning_or_template_tokens(
    client_for: Any, adapter: Adapter, wrapped: str
) -> None:
    with start_fake_llm([reply(200, adapter.success(wrapped.format(s=SUMMARY)))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
    assert (data["compacted"], data["summarizer"], data["warnings"]) == (True, adapter.name, [])
    assert data["summary"].startswith(SUMMARY.strip() + "\n\n## Ledger\n")
    assert "<think>" not in data["summary"]
    assert "<|im" not in data["summary"]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_summary_that_quotes_an_error_and_the_users_refusal_is_used(
    client_for: Any, adapter: Adapter
) -> None:
    text = SUMMARY.replace(
        "## File Operations",
        "- Off-topic questions get: I'm sorry, I can't help with that.\n"
        "- The first mirror said: Service Unavailable.\n## File Operations",
    )
    with start_fake_llm([reply(200, adapter.success(text))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
    assert (data["compacted"], data["summarizer"], data["warnings"]) == (True, adapter.name, [])
    assert data["summary"].startswith(text.strip() + "\n\n## Ledger\n")


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_ten_megabytes_from_an_llm_that_ignores_max_tokens_are_refused(
    client_for: Any, adapter: Adapter
) -> None:
    """The OpenAI-compatible adapter stops reading past its byte cap; the Anthropic SDK
    reads the whole body, and the check refuses it before anything is counted."""
    huge = "## Goals & Decisions\n" + "x" * 10_000_000
    with start_fake_llm([reply(200, adapter.success(huge))]) as fake:
        client = await client_for(**adapter.settings(fake.url))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    error = {
        "anthropic": "summary over 8192 tokens",  # 2 x COMPACT_SUMMARY_MAX_TOKENS
        "openai": "chat completion API answer over 589824 bytes",  # 128 B x 4096 + 64 KiB
    }[adapter.name]
    assert data["warnings"] == [f"summarizer {adapter.name} failed: [oversized] {error}"]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_summary_over_twice_summary_max_tokens_is_oversized(
    client_for: Any, adapter: Adapter
) -> None:
    with start_fake_llm([reply(200, adapter.success(SUMMARY))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_max_tokens=32))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
    assert data["warnings"] == [
        f"summarizer {adapter.name} failed: [oversized] summary over 64 tokens"
    ]


TAIL_MESSAGES = [system("You are a coding agent."), *rounds(1, 3)]
TAIL_BODY = {
    "messages": TAIL_MESSAGES,
    "force": True,
    "options": {"strategy": "tail", "tail_keep_recent_rounds": 1, "fallback": False},
}
ARCHIVED_REAL = """### 🎯 Objectives & Status
* **Original Goal**: Task 1, then Task 2: run make for each.
### 🏗️ Technical Context (Static)
* **Stack**: make, run through bash.
### ✅ Completed Milestones (The "Done" Pile)
* [✓] Task 1 - `make 1` ran: Done 1.
* [✓] Task 2 - `make 2` ran: Done 2.
### 🧠 Key Insights & Decisions (Persistent Memory)
* **Learnings**: make prints one line of tool output per step.
### 📂 File System State (Snapshot)
* None modified."""
ARCHIVED_HEADINGS = [line for line in ARCHIVED_REAL.splitlines() if line.startswith("### ")]
TAIL_ANSWERS = {
    "sections-template": (llm_summary(TAIL_MESSAGES[1:9]), "no_sections"),
    "refusal-under-heading": (
        ARCHIVED_HEADINGS[0] + "\nLo siento, pero no puedo ayudar con esta solicitud.",
        "refusal",
    ),
    "lorem": ("\n".join(f"{h}\n{LOREM}" for h in ARCHIVED_HEADINGS), "filler"),
    "headings-only": ("\n".join(ARCHIVED_HEADINGS), "empty_sections"),
    "reasoning-only": (f"<think>\n{ARCHIVED_REAL}", "reasoning_only"),
    "template-echoed": (ISSUE_ANSWERS["archived-template-echoed"][0], "echo"),
}


@pytest.mark.slow
@pytest.mark.parametrize("fallback", ["none", "extractive"])
@pytest.mark.parametrize("name", TAIL_ANSWERS)
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_the_tail_strategy_checks_its_archived_template(
    client_for: Any, adapter: Adapter, name: str, fallback: str
) -> None:
    text, reason = TAIL_ANSWERS[name]
    with start_fake_llm([reply(200, adapter.success(text))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_fallback=fallback))
        data = await compact(client, TAIL_BODY)
    assert data["warnings"][0].startswith(f"summarizer {adapter.name} failed: [{reason}] ")
    if fallback == "none":
        assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
        assert data["messages"] == TAIL_MESSAGES
    else:
        assert (data["compacted"], data["summarizer"]) == (True, "extractive")
        assert text not in data["messages"][1]["content"]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_the_tail_strategy_uses_a_real_archived_summary(
    client_for: Any, adapter: Adapter
) -> None:
    with start_fake_llm([reply(200, adapter.success(f"<think>ok</think>{ARCHIVED_REAL}"))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, TAIL_BODY)
    assert (data["compacted"], data["summarizer"], data["warnings"]) == (True, adapter.name, [])
    assert ARCHIVED_REAL in data["summary"]
    assert "<think>" not in data["summary"]


@pytest.mark.parametrize("fallback", ["none", "extractive"])
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_tail_job_checks_its_archived_template(
    client_for: Any, adapter: Adapter, fallback: str
) -> None:
    text, reason = TAIL_ANSWERS["refusal-under-heading"]
    with start_fake_llm([reply(200, adapter.success(text))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_fallback=fallback))
        result = await job_result(client, TAIL_BODY)
    assert result["warnings"][0] == (
        f"summarizer {adapter.name} failed: [{reason}] {MESSAGES[reason]}"
    )
    if fallback == "none":
        assert (result["compacted"], result["messages"]) == (False, TAIL_MESSAGES)
    else:
        assert (result["compacted"], result["summarizer"]) == (True, "extractive")
