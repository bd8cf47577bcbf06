"""Held-out answers (`tests/summary_heldout.py`) through the real stack: one of each family
no other test spells, through /compact under both fallback settings and as a background
job, fails with its reason; a real summary in another model's wrapping is stored clean."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_llm_faults import ADAPTERS, Adapter
from tests.api.test_summary_checks import compact, job_result, settings
from tests.fakes.fake_llm_server import reply, start_fake_llm
from tests.summary_answers import CONVERSATION, SUMMARY
from tests.summary_heldout import ECHOES, ERRORS, FILLERS, PLACES, REFUSALS, WRAPPED

pytestmark = pytest.mark.anyio

HELD_OUT = {
    "korean-refusal-as-first-section": (
        PLACES["as-the-first-section"](REFUSALS["ko-dowa"]),
        "refusal",
        "the answer is a refusal, not a summary",
    ),
    "as-an-ai-after-a-real-section": (
        PLACES["after-a-real-section"](REFUSALS["en-as-an-ai-access"]),
        "refusal",
        "the answer is a refusal, not a summary",
    ),
    "json-overloaded-under-every-heading": (
        PLACES["under-every-heading"](ERRORS["json-overloaded"]),
        "error_message",
        "the answer is an error message, not a summary",
    ),
    "prompt-misspelt": (
        ECHOES["prompt-misspelt"][0],
        "echo",
        "the answer repeats the prompt instead of summarizing",
    ),
    "one-true-line-under-every-heading": (
        FILLERS["one-true-line-under-every-heading"][0],
        "repetitive",
        "the same text under several headings",
    ),
}


@pytest.mark.parametrize("name", HELD_OUT)
@pytest.mark.parametrize("fallback", ["none", "extractive"])
@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("as_job", [False, True], ids=["compact", "job"])
async def test_a_held_out_answer_fails_with_its_reason(
    client_for: Any, adapter: Adapter, fallback: str, name: str, as_job: bool
) -> None:
    text, reason, message = HELD_OUT[name]
    with start_fake_llm([reply(200, adapter.success(text))]) as fake:
        client = await client_for(**settings(adapter, fake.url, summary_fallback=fallback))
        body = {"messages": CONVERSATION, "force": True}
        data = await (job_result if as_job else compact)(client, body)
    failed = f"summarizer {adapter.name} failed: [{reason}] {message}"
    if fallback == "none":
        assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
        assert data["messages"] == CONVERSATION
        assert data["warnings"] == [failed]
    else:
        assert (data["compacted"], data["summarizer"]) == (True, "extractive")
        assert data["summary"].startswith("## Goals & Decisions\n- First request: Fix the failing")
        assert data["warnings"] == [failed, "summary written by the fallback summarizer extractive"]


@pytest.mark.parametrize("name", ["harmony", "magistral", "deepseek", "mistral-prompt-repeated"])
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_real_summary_in_another_wrapping_is_stored_clean(
    client_for: Any, adapter: Adapter, name: str
) -> None:
    with start_fake_llm([reply(200, adapter.success(WRAPPED[name]))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, {"messages": CONVERSATION, "force": True})
    assert (data["compacted"], data["summarizer"], data["warnings"]) == (True, adapter.name, [])
    assert data["summary"].startswith(SUMMARY.strip() + "\n\n## Ledger\n")
