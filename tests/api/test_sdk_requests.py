"""The provider request as each SDK builds it, sent whole to every counting and compacting
route: accepted, counted part by part (system, tools, messages) and handed back by
`/compact` in the same form, every field but `messages` as it was sent.

The bodies are typed with the SDKs' own request TypedDicts, so a field the SDK does not
have cannot creep in, and the answer's `request` is validated by them again."""

from __future__ import annotations

import copy
import json
import typing
from typing import Any

import httpx
import pytest
import respx
from anthropic.types import message_create_params as anthropic_params
from anthropic.types.beta import message_create_params as beta_params
from openai.types.chat import completion_create_params as openai_params
from pydantic import TypeAdapter

from app.adapters.tokenizer import TiktokenTokenizer
from app.api.provider import PROVIDER_FIELDS, ProviderFields
from app.core.compact_json import compact_json
from app.core.messages import Message
from app.core.model_table import CLAUDE_MARGIN, with_margin
from app.core.provider import output_budget
from app.core.provider.dialects import parse_messages
from app.core.tokens import REPLY_PRIMING, count_total
from app.wiring.counting import shared_o200k
from tests.builders import assistant, bulk_round, rounds, user

pytestmark = pytest.mark.anyio

SYSTEM = "You are a coding agent. Keep answers short."
ANTHROPIC_TOOLS: list[anthropic_params.ToolUnionParam] = [
    {
        "name": "bash",
        "description": "Run a shell command in the repository.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command."}},
            "required": ["command"],
        },
    },
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
]
HISTORY: list[Any] = [user("Fix the build."), *bulk_round(), assistant("Built."), *rounds(1, 6)]


def anthropic_body(system: Any = SYSTEM) -> anthropic_params.MessageCreateParamsNonStreaming:
    return {
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 4096,
        "system": system,
        "messages": copy.deepcopy(HISTORY),
        "tools": ANTHROPIC_TOOLS,
        "tool_choice": {"type": "auto"},
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "metadata": {"user_id": "agent-7"},
        "stop_sequences": ["\n\nHuman:"],
        "temperature": 1.0,
    }


OPENAI_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the repository.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


def openai_messages() -> list[Any]:
    out: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Go."}]
    for i in range(8):
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"make {i}"})},
        }
        out += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "output line\n" * 80},
            {"role": "user", "content": f"Next {i}."},
        ]
    return out


def openai_body(
    model: str = "gpt-4o-2024-08-06",
) -> openai_params.CompletionCreateParamsNonStreaming:
    return {
        "model": model,
        "messages": openai_messages(),
        "tools": OPENAI_TOOLS,
        "tool_choice": "auto",
        "response_format": {"type": "text"},
        "max_completion_tokens": 1024,
        "parallel_tool_calls": False,
        "temperature": 0.2,
    }


def _tools_tokens(tokenizer: Any, tools: list[Any]) -> int:
    return sum(tokenizer.count(compact_json(t)) for t in tools)


def _system_message(system: Any) -> list[Message]:
    return parse_messages([{"role": "system", "content": system}], "anthropic")


async def test_an_anthropic_sdk_body_is_counted_part_by_part_with_claude_s_margin(
    client: httpx.AsyncClient, tokenizer: TiktokenTokenizer
) -> None:
    body = anthropic_body()
    data = (await client.post("/count", json=body)).json()
    system = count_total(tokenizer, _system_message(SYSTEM))
    messages = count_total(tokenizer, parse_messages(HISTORY, "anthropic"))
    tools = _tools_tokens(tokenizer, ANTHROPIC_TOOLS)
    total = (
        with_margin(system + messages, CLAUDE_MARGIN)
        + REPLY_PRIMING
        + with_margin(tools, CLAUDE_MARGIN)
    )
    assert data["token_count"] == total
    assert data["parts"] == {
        "system": with_margin(system, CLAUDE_MARGIN),
        "tools": with_margin(tools, CLAUDE_MARGIN),
        "messages": total - with_margin(system, CLAUDE_MARGIN) - with_margin(tools, CLAUDE_MARGIN),
    }
    assert (data["tokenizer"], data["exact"], data["format"]) == ("tiktoken", False, "anthropic")
    assert data["message_count"] == len(HISTORY)


async def test_system_as_text_blocks_counts_as_the_same_string(client: httpx.AsyncClient) -> None:
    blocks = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    as_string = (await client.post("/count", json=anthropic_body())).json()
    as_blocks = (await client.post("/count", json=anthropic_body(blocks))).json()
    assert as_blocks["parts"]["system"] >= as_string["parts"]["system"] > 0
    assert as_blocks["parts"]["messages"] == as_string["parts"]["messages"]


async def test_an_anthropic_sdk_body_is_judged_on_claude_s_window(
    client: httpx.AsyncClient,
) -> None:
    data = (await client.post("/should-compact", json=anthropic_body())).json()
    counted = (await client.post("/count", json=anthropic_body())).json()
    assert data["context_window"] == 200_000
    assert data["token_count"] == counted["token_count"]
    assert data["parts"] == counted["parts"]
    assert (data["exact"], data["should_compact"]) == (False, False)


async def test_the_provider_s_own_count_is_preferred_when_sent(client: httpx.AsyncClient) -> None:
    body = {**anthropic_body(), "last_usage": {"input_tokens": 190_000, "output_tokens": 10}}
    data = (await client.post("/should-compact", json=body)).json()
    assert (data["token_source"], data["token_count"]) == ("last_usage", 190_010)
    assert (data["should_compact"], data["parts"], data["exact"]) == (True, None, True)


async def test_compact_hands_an_anthropic_request_back_ready_to_send(
    client: httpx.AsyncClient,
) -> None:
    blocks = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    body = anthropic_body(blocks)
    sent = copy.deepcopy(body)
    data = (await client.post("/compact", json={**body, "force": True})).json()
    assert data["compacted"] is True, data
    request = data["request"]
    assert {k: v for k, v in request.items() if k != "messages"} == {
        k: v for k, v in sent.items() if k != "messages"
    }
    assert list(request) == list(sent)  # `messages` where it was sent
    # the history ends with the agent's answer: the compacted list ends with the summary's
    # acknowledgement, and the request to send gets a user turn after it (no prefill)
    assert data["messages"][-1]["role"] == "assistant"
    assert request["messages"] == [*data["messages"], {"role": "user", "content": "Continue."}]
    assert all(m["role"] in ("user", "assistant") for m in request["messages"])
    assert len(request["messages"]) < len(HISTORY)
    assert max(data["compacted_indexes"]) < len(HISTORY)
    TypeAdapter(anthropic_params.MessageCreateParamsNonStreaming).validate_python(request)


async def test_the_message_list_alone_is_answered_as_before(client: httpx.AsyncClient) -> None:
    data = (await client.post("/compact", json={"messages": HISTORY, "force": True})).json()
    assert data["compacted"] is True
    assert "request" not in data or data["request"] is None


async def test_an_openai_sdk_body_is_counted_exactly_with_o200k(
    client: httpx.AsyncClient,
) -> None:
    body = openai_body()
    data = (await client.post("/count", json=body)).json()
    o200k = shared_o200k()
    canonical = parse_messages(body["messages"], "openai")  # type: ignore[arg-type]
    system = count_total(o200k, canonical[:1])
    tools = _tools_tokens(o200k, OPENAI_TOOLS)
    assert (data["tokenizer"], data["exact"], data["format"]) == ("o200k", True, "openai")
    assert data["parts"] == {
        "system": system,
        "tools": tools,
        "messages": count_total(o200k, canonical) - system + REPLY_PRIMING,
    }
    assert data["token_count"] == count_total(o200k, canonical) + REPLY_PRIMING + tools


async def test_an_older_openai_model_is_counted_exactly_with_cl100k(
    client: httpx.AsyncClient,
) -> None:
    data = (await client.post("/count", json=openai_body("gpt-4-0613"))).json()
    window = (await client.post("/should-compact", json=openai_body("gpt-4-0613"))).json()
    assert (data["tokenizer"], data["exact"]) == ("tiktoken", True)
    assert window["context_window"] == 8192


async def test_compact_hands_an_openai_request_back_ready_to_send(
    client: httpx.AsyncClient,
) -> None:
    body = openai_body("gpt-4.1-mini")
    sent = copy.deepcopy(body)
    data = (await client.post("/compact", json={**body, "force": True})).json()
    assert (data["compacted"], data["format"]) == (True, "openai"), data
    request = data["request"]
    assert {k: v for k, v in request.items() if k != "messages"} == {
        k: v for k, v in sent.items() if k != "messages"
    }
    assert request["messages"][0] == {"role": "system", "content": SYSTEM}
    assert len(request["messages"]) < len(sent["messages"])  # type: ignore[arg-type]
    TypeAdapter(openai_params.CompletionCreateParamsNonStreaming).validate_python(request)


@pytest.mark.parametrize("route", ["/should-compact", "/compact", "/compactions"])
async def test_an_unknown_model_needs_its_window(client: httpx.AsyncClient, route: str) -> None:
    body = {**anthropic_body(), "model": "my-local-llama"}
    response = await client.post(route, json=body)
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == ["model"]
    assert "my-local-llama" in response.json()["message"]


async def test_an_unknown_model_with_its_window_is_counted_inexactly(
    client: httpx.AsyncClient, tokenizer: TiktokenTokenizer
) -> None:
    body = {**anthropic_body(), "model": "my-local-llama", "context_window": 32_000}
    data = (await client.post("/should-compact", json=body)).json()
    assert (data["context_window"], data["exact"]) == (32_000, False)
    assert data["warnings"] == ["unknown model 'my-local-llama': counted with cl100k, not exact"]
    counted = (await client.post("/count", json={**anthropic_body(), "model": "x-1"})).json()
    assert (counted["exact"], counted["tokenizer"]) == (False, "tiktoken")
    compact = {**anthropic_body(), "model": "my-local-llama", "options": {"context_window": 32_000}}
    assert (await client.post("/compact", json=compact)).status_code == 200


async def test_a_tokenizer_or_window_sent_overrides_the_model_s(client: httpx.AsyncClient) -> None:
    body = {**openai_body(), "tokenizer": "tiktoken", "context_window": 50_000}
    data = (await client.post("/should-compact", json=body)).json()
    assert (data["context_window"], data["exact"]) == (50_000, False)


async def test_models_added_by_setting_give_their_window(client_for: Any) -> None:
    client = await client_for(
        models={"my-llama": {"context_window": 8000, "tokenizer": "o200k", "margin": 0.5}}
    )
    body = {**anthropic_body(), "model": "my-llama-3-8b"}
    data = (await client.post("/should-compact", json=body)).json()
    assert (data["context_window"], data["exact"]) == (8000, False)
    assert data["parts"]["tools"] == with_margin(
        _tools_tokens(shared_o200k(), ANTHROPIC_TOOLS), 0.5
    )


async def test_a_misspelt_field_of_ours_is_still_refused(client: httpx.AsyncClient) -> None:
    response = await client.post("/compact", json={**anthropic_body(), "forse": True})
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == ["forse"]


async def test_system_is_refused_in_the_openai_format(client: httpx.AsyncClient) -> None:
    body = {**openai_body(), "system": SYSTEM, "format": "openai"}
    response = await client.post("/count", json=body)
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == ["system"]


async def test_an_invalid_system_prompt_is_named(client: httpx.AsyncClient) -> None:
    response = await client.post("/count", json=anthropic_body([{"type": "text"}]))
    assert response.status_code == 422
    assert response.json()["details"][0]["field"].startswith("system")


async def test_a_background_compaction_hands_the_request_back_too(
    client: httpx.AsyncClient,
) -> None:
    body = anthropic_body()
    started = await client.post("/compactions", json={**body, "force": True})
    assert started.status_code == 202, started.text
    job = started.json()
    for _ in range(200):
        job = (await client.get(f"/compactions/{job['id']}")).json()
        if job["state"] in ("done", "failed"):
            break
        await _pause()
    assert job["state"] == "done", job
    request = job["result"]["request"]
    assert (request["system"], request["tools"]) == (SYSTEM, ANTHROPIC_TOOLS)
    continued = {"role": "user", "content": "Continue."}  # no prefill: ready to send
    assert request["messages"] == [*job["result"]["messages"], continued]


async def _pause() -> None:
    import anyio

    await anyio.sleep(0.02)


def _keys(params: Any) -> set[str]:
    return set(typing.get_type_hints(params).keys())


def test_every_sdk_request_field_is_taken() -> None:
    """A new field in either SDK makes this fail: add it to PROVIDER_FIELDS."""
    sdk = (
        _keys(anthropic_params.MessageCreateParamsStreaming)
        | _keys(beta_params.MessageCreateParamsStreaming)
        | _keys(openai_params.CompletionCreateParamsStreaming)
    )
    assert sdk - PROVIDER_FIELDS - set(ProviderFields.model_fields) == {"messages"}


async def test_tools_count_against_the_window_on_both_routes(client: httpx.AsyncClient) -> None:
    big_tools = OPENAI_TOOLS * 40
    body = {**openai_body(), "tools": big_tools}
    counted = (await client.post("/count", json=body)).json()
    total, tools = counted["token_count"], counted["parts"]["tools"]
    # Over the threshold only with the tools; the output the body reserves is room too.
    window = int((total - tools // 2) / 0.8) + output_budget(body).tokens
    judged = {**body, "context_window": window}
    assert (await client.post("/should-compact", json=judged)).json()["should_compact"] is True
    without = {**judged, "tools": []}
    assert (await client.post("/should-compact", json=without)).json()["should_compact"] is False
    compact = {**body, "options": {"context_window": window}}
    data = (await client.post("/compact", json=compact)).json()
    assert data["compacted"] is True, data["reason"]
    assert data["request"]["tools"] == big_tools


async def test_a_background_compaction_of_a_request_applies_to_its_messages(
    client: httpx.AsyncClient,
) -> None:
    started = (await client.post("/compactions", json={**anthropic_body(), "force": True})).json()
    job = started
    for _ in range(200):
        job = (await client.get(f"/compactions/{job['id']}")).json()
        if job["state"] in ("done", "failed"):
            break
        await _pause()
    assert (job["state"], job["sent_count"]) == ("done", len(HISTORY))
    newer = user("And now the docs.")
    applied = await client.post(
        f"/compactions/{job['id']}/apply", json={"messages": [*HISTORY, newer]}
    )
    assert applied.status_code == 200, applied.text
    # the agent sent its own next turn: the compacted list, then it (no `Continue.` between)
    assert applied.json()["messages"] == [*job["result"]["messages"], newer]


async def test_anthropic_s_own_count_is_exact_only_without_tools_added_here(
    client_for: Any,
) -> None:
    client = await client_for(anthropic_api_key="sk-test")
    route = "https://api.anthropic.com/v1/messages/count_tokens"
    with respx.mock(assert_all_called=True) as mock:
        mock.post(route).respond(200, json={"input_tokens": 1234})
        alone = {**anthropic_body(), "tokenizer": "anthropic"}
        alone.pop("tools")
        bare = (await client.post("/count", json=alone)).json()
        tooled = (await client.post("/count", json={**alone, "tools": ANTHROPIC_TOOLS})).json()
        sent = json.loads(mock.calls[0].request.content)
    assert (bare["token_count"], bare["exact"], bare["parts"]) == (1234, True, None)
    assert tooled["exact"] is False
    assert tooled["token_count"] > 1234
    assert sent["system"] == [{"type": "text", "text": SYSTEM}]
