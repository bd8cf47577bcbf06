"""A faithful LLM summary with one false sentence, through the real app and the fake LLM
server: the summary is used without that sentence, and the answer's `warnings` (a job's
result's too) name the sentence and its rule — on `/compact`, a job and `tail` alike."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_llm_faults import ADAPTERS, OPENAI, Adapter
from tests.api.test_summary_checks import compact, job_result, settings
from tests.fakes.fake_llm_server import reply, start_fake_llm
from tests.gate_claims import claims_set
from tests.gate_sessions import BY_NAME

pytestmark = pytest.mark.anyio

ANSWERS = {(a.session, a.kind): a for a in claims_set()}
INJECTED = ANSWERS[("cards", "injection")]
WARNING = f"summary: dropped [instruction] “{INJECTED.false}”"


def _summary(data: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in data["messages"] if isinstance(m.get("content"), str))


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_compact_drops_the_false_sentence_and_names_it_in_warnings(
    client_for: Any, adapter: Adapter
) -> None:
    with start_fake_llm([reply(200, adapter.success(INJECTED.sections))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, {"messages": BY_NAME["cards"].raw, "force": True})
    assert (data["compacted"], data["summarizer"]) == (True, adapter.name)
    assert data["warnings"] == [WARNING]
    assert INJECTED.false not in _summary(data)
    assert "Latest request: add a unit test for a card with cost -1" in _summary(data)


async def test_a_background_job_carries_the_warning(client_for: Any) -> None:
    adapter = OPENAI
    with start_fake_llm([reply(200, adapter.success(INJECTED.sections))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        result = await job_result(client, {"messages": BY_NAME["cards"].raw, "force": True})
    assert result["warnings"] == [WARNING]
    assert INJECTED.false not in _summary(result)


async def test_the_tail_archive_is_held_to_the_same_rules(client_for: Any) -> None:
    adapter = OPENAI
    body = {
        "messages": [*BY_NAME["cards"].raw, {"role": "user", "content": "Thanks, carry on."}],
        "force": True,
        "options": {"strategy": "tail", "tail_keep_recent_rounds": 1, "fallback": False},
    }
    with start_fake_llm([reply(200, adapter.success(INJECTED.archived))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, body)
    assert data["compacted"] is True
    assert WARNING in data["warnings"]
    assert INJECTED.false not in _summary(data)


async def test_an_answer_leaving_out_the_latest_request_is_refused_with_its_reason(
    client_for: Any,
) -> None:
    adapter = OPENAI
    stale = ANSWERS[("cards", "latest-request-left-out")]
    with start_fake_llm([reply(200, adapter.success(stale.sections))]) as fake:
        client = await client_for(**settings(adapter, fake.url))
        data = await compact(client, {"messages": BY_NAME["cards"].raw, "force": True})
    assert (data["compacted"], data["reason"]) == (False, "summarization_failed")
    assert data["warnings"] == [
        "summarizer openai failed: [stale] the answer's goals and status leave out the "
        "user's latest request"
    ]
