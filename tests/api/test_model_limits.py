"""The decision within the model's real limits: the output budget reserved, the input
limit below the window, the 1M beta, and model names as agents write them (issue 33)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.provider.media import PDF_PAGE_TOKENS
from app.wiring.counting import shared_o200k
from tests.builders import assistant, rounds, system, tool_result, tool_use, user
from tests.corpus import OPENAI_FILES, load
from tests.media import pdf_base64

pytestmark = pytest.mark.anyio

LIST = [user("Fix the failing test."), assistant("Looking."), user("Go on.")]
TOOLS = [{"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}}]


async def _judge(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/should-compact", json={"messages": LIST, **body})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_max_tokens_is_reserved_so_a_request_below_the_window_share_compacts(
    client: httpx.AsyncClient,
) -> None:
    usage = {"input_tokens": 149_454}
    base = {"model": "claude-sonnet-4-5", "last_usage": usage}
    without = await _judge(client, **base)
    data = await _judge(client, **base, max_tokens=64_000)
    assert (without["should_compact"], without["limited_by"]) == (False, "context_window")
    assert (data["should_compact"], data["overflow"], data["reason"]) == (True, True, "overflow")
    assert (data["limit_tokens"], data["limited_by"], data["output_budget"]) == (
        136_000,
        "output_budget",
        64_000,
    )
    assert (data["threshold_tokens"], data["overflow_tokens"]) == (108_800, 122_400)


async def test_max_completion_tokens_is_reserved_too(client: httpx.AsyncClient) -> None:
    data = await _judge(client, context_window=1000, max_completion_tokens=300)
    limits = (data["limit_tokens"], data["threshold_tokens"], data["output_budget"])
    assert limits == (700, 560, 300)


async def test_gpt_5_is_judged_against_its_272k_input_limit_not_its_400k_window(
    client: httpx.AsyncClient,
) -> None:
    data = await _judge(client, model="gpt-5", last_usage={"prompt_tokens": 299_000})
    assert (data["should_compact"], data["overflow"]) == (True, True)
    assert (data["context_window"], data["limit_tokens"], data["limited_by"]) == (
        400_000,
        272_000,
        "input_limit",
    )


async def test_an_output_budget_that_leaves_no_input_is_a_422_naming_it(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/should-compact", json={"messages": LIST, "context_window": 1000, "max_tokens": 1000}
    )
    assert response.status_code == 422
    assert response.json()["details"][0]["field"] == "max_tokens"


async def test_more_output_than_the_model_gives_is_warned_about(client: httpx.AsyncClient) -> None:
    data = await _judge(client, model="claude-sonnet-4-5", max_tokens=100_000)
    assert any("maximum output of 64000" in w for w in data["warnings"])


@pytest.mark.parametrize(
    "place", [{"body": {"betas": ["context-1m-2025-08-07"]}}, {"header": "context-1m-2025-08-07"}]
)
async def test_the_context_1m_beta_gives_a_claude_model_its_1m_window(
    client: httpx.AsyncClient, place: dict[str, Any]
) -> None:
    body = {"messages": LIST, "model": "claude-sonnet-4-5", **place.get("body", {})}
    headers = {"anthropic-beta": place["header"]} if "header" in place else {}
    response = await client.post("/should-compact", json=body, headers=headers)
    assert response.json()["context_window"] == 1_000_000
    plain = await _judge(client, model="claude-sonnet-4-5")
    assert plain["context_window"] == 200_000


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("openai/gpt-4o", 128_000),
        ("anthropic/claude-sonnet-4-5", 200_000),
        ("anthropic.claude-3-5-sonnet-20240620-v1:0", 200_000),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000),
        ("claude-sonnet-4-5@20250929", 200_000),
        ("GPT-4o", 128_000),
        ("gpt-5.2", 400_000),
        ("gemini-2.5-pro", 1_048_576),
        ("deepseek-chat", 131_072),
        ("qwen2.5-coder", 32_768),
        ("llama-3.1", 131_072),
        ("mistral", 32_768),
    ],
)
async def test_model_names_as_agents_write_them_are_known(
    client: httpx.AsyncClient, model: str, window: int
) -> None:
    assert (await _judge(client, model=model))["context_window"] == window


async def test_another_provider_s_family_is_counted_with_its_margin_not_exact(
    client: httpx.AsyncClient,
) -> None:
    plain = (await client.post("/count", json={"messages": LIST})).json()
    body = {"messages": LIST, "model": "gemini-2.5-pro"}
    gemini = (await client.post("/count", json=body)).json()
    assert gemini["exact"] is False
    assert gemini["token_count"] > plain["token_count"]


async def test_an_unknown_model_s_422_suggests_the_closest_known_names(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/should-compact", json={"messages": LIST, "model": "gpt-4oo"})
    assert response.status_code == 422
    assert "closest known: gpt-4o" in response.json()["message"]


async def test_compact_reserves_the_output_budget_and_says_which_limit_applied(
    client: httpx.AsyncClient,
) -> None:
    messages = [system("You are an agent."), *rounds(1, 6), user("Next step.")]
    counted = (await client.post("/count", json={"messages": messages})).json()["token_count"]
    window = int(counted / 0.8) + 10  # just under the threshold without an output budget
    body = {"messages": messages, "options": {"context_window": window}}
    below = (await client.post("/compact", json=body)).json()
    assert (below["compacted"], below["reason"]) == (False, "below_threshold")
    data = (await client.post("/compact", json={**body, "max_tokens": counted // 4})).json()
    assert data["compacted"] is True
    assert (data["limit_tokens"], data["limited_by"], data["output_budget"]) == (
        window - counted // 4,
        "output_budget",
        counted // 4,
    )


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-4o", None])
async def test_compact_and_should_compact_report_one_count_for_one_body(
    client: httpx.AsyncClient, model: str | None
) -> None:
    messages = [
        user("Read a.py"),
        assistant(tool_use("read_file", "t1", path="a.py")),
        tool_result("t1", "print('a')\n" * 40),
        assistant("It prints a."),
        user("Now fix it."),
    ]
    body: dict[str, Any] = {"system": "You are an agent.", "tools": TOOLS, "messages": messages}
    if model is not None:
        body["model"] = model
    judged = (await client.post("/should-compact", json=body)).json()
    compacted = (await client.post("/compact", json=body)).json()
    assert compacted["token_count"] == judged["token_count"]
    for field in ("token_source", "exact", "limit_tokens", "limited_by", "output_budget"):
        assert compacted[field] == judged[field], field


async def test_a_pdf_counts_its_pages_not_a_fixed_estimate(client: httpx.AsyncClient) -> None:
    def body(pages: int) -> dict[str, Any]:
        source = {"type": "base64", "media_type": "application/pdf", "data": pdf_base64(pages)}
        document = {"type": "document", "source": source}
        return {
            "messages": [{"role": "user", "content": [document, {"type": "text", "text": "?"}]}]
        }

    one = (await client.post("/count", json=body(1))).json()["token_count"]
    forty = (await client.post("/count", json=body(40))).json()["token_count"]
    assert forty - one == 39 * PDF_PAGE_TOKENS


def _recipe(count: Any, messages: list[dict[str, Any]]) -> int:
    """OpenAI's published recipe ("How to count tokens with tiktoken"): 3 tokens a message,
    each value's tokens (a call's name and arguments as sent), 1 for a name, 3 for the
    reply's priming). Ours may be a little higher, never lower: each call costs a message's
    overhead too, as the provider renders it."""
    total = 3
    for message in messages:
        total += 3
        for key, value in message.items():
            if key == "tool_calls":
                for call in value:
                    total += count(call["function"]["name"])
                    total += count(call["function"]["arguments"])
            elif isinstance(value, str):
                total += count(value) + (1 if key == "name" else 0)
    return total


@pytest.mark.parametrize("path", OPENAI_FILES, ids=lambda p: p.name)
async def test_an_openai_session_is_counted_at_or_above_openai_s_recipe(
    client: httpx.AsyncClient, path: Path
) -> None:
    messages = load(path)
    counted = (await client.post("/count", json={"messages": messages, "model": "gpt-4o"})).json()
    assert counted["exact"] is True
    recipe = _recipe(shared_o200k().count, messages)
    assert recipe <= counted["token_count"] <= recipe * 1.03


async def test_a_configured_model_takes_its_input_and_output_limits(
    client_for: Callable[..., Any],
) -> None:
    own = {"my-llama": {"context_window": 10_000, "input_limit": 6_000, "tokenizer": "tiktoken"}}
    client = await client_for(models=own)
    data = await _judge(client, model="my-llama", max_tokens=2_000)
    assert (data["context_window"], data["limit_tokens"], data["limited_by"]) == (
        10_000,
        6_000,
        "input_limit",
    )
    tight = await _judge(client, model="My-Llama:latest", max_tokens=5_000)
    assert (tight["limit_tokens"], tight["limited_by"]) == (5_000, "output_budget")
