"""What each strategy hands back takes only the roles the provider's shape allows, and the
user's new request (its words, images and documents) stays last: the two ways a request
handed back used to be refused, or lose what the user just asked.
The captured SDK bodies run the same checks through every route in
tests/api/test_provider_accepts.py."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.builders import assistant, bulk_round, rounds, tool_use, user
from tests.provider_rules import check

pytestmark = pytest.mark.anyio

SYSTEM = "You are a coding agent."
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
OPTIONS: dict[str, dict[str, Any]] = {
    "full": {"strategy": "full"},
    "tail": {"strategy": "tail", "tail_keep_recent_rounds": 1},
    "prune": {"strategy": "prune", "prune_keep_recent": 1},
    "selective": {"strategy": "selective", "selective_keep_recent": 1},
}


def anthropic_request(messages: list[Any]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4", "max_tokens": 1024, "system": SYSTEM, "messages": messages}


def words_beside_results() -> list[Any]:
    """Cline's and Cursor's way: the user's new words and a screenshot sent in the message
    that carries the last tool results."""
    call = tool_use("bash", "t9", command="make test")
    last = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t9", "content": "FAILED test_ui\n" * 40},
            {"type": "text", "text": "The screenshot shows the failing widget: fix it too."},
            IMAGE,
        ],
    }
    return [
        user("Fix the build."),
        *bulk_round(),
        assistant("Built."),
        *rounds(1, 4),
        user("Run the tests."),
        assistant("Running them.", call),
        last,
    ]


@pytest.mark.parametrize("strategy", OPTIONS)
async def test_no_strategy_puts_a_system_message_in_anthropic_messages(
    client: httpx.AsyncClient, strategy: str
) -> None:
    sent = anthropic_request(
        [user("Fix the build."), *bulk_round(), assistant("Built."), *rounds(1, 5)]
    )
    body = {**sent, "force": True, "options": OPTIONS[strategy]}
    answer = (await client.post("/compact", json=body)).json()
    assert answer["compacted"] is True, answer["reason"]
    request = answer["request"]
    assert request["system"] == SYSTEM
    assert {m["role"] for m in request["messages"]} <= {"user", "assistant"}
    assert check(request, "anthropic", sent=sent) == []


@pytest.mark.parametrize("strategy", OPTIONS)
async def test_the_users_words_and_image_sent_beside_tool_results_stay_last(
    client: httpx.AsyncClient, strategy: str
) -> None:
    sent = anthropic_request(words_beside_results())
    body = {**sent, "force": True, "options": OPTIONS[strategy]}
    answer = (await client.post("/compact", json=body)).json()
    assert answer["compacted"] is True, answer["reason"]
    last = answer["request"]["messages"][-1]
    assert last["role"] == "user"
    assert sent["messages"][-1]["content"][1:] == [
        b for b in last["content"] if b["type"] != "tool_result"
    ]
    assert check(answer["request"], "anthropic", sent=sent) == []


async def test_continue_is_added_only_when_the_list_would_end_on_the_assistant(
    client: httpx.AsyncClient,
) -> None:
    words = anthropic_request(words_beside_results())
    kept = (await client.post("/compact", json={**words, "force": True})).json()
    assert kept["request"]["messages"][-1]["content"][0]["type"] == "text"  # no Continue.
    results = {"role": "user", "content": words["messages"][-1]["content"][:1]}
    results_only = [*words["messages"][:-1], results]
    ended = (
        await client.post("/compact", json={**words, "messages": results_only, "force": True})
    ).json()
    assert ended["request"]["messages"][-1] == {"role": "user", "content": "Continue."}


async def test_the_openai_user_message_after_a_tool_run_comes_back_as_sent(
    client: httpx.AsyncClient,
) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    asked = {"role": "user", "content": [{"type": "text", "text": "Now the docs."}]}
    messages = [
        {"role": "developer", "content": SYSTEM},
        {"role": "user", "content": "Fix the build."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "built\n" * 200},
        asked,
    ]
    sent = {"model": "gpt-4o", "max_tokens": 512, "messages": messages}
    answer = (await client.post("/compact", json={**sent, "force": True})).json()
    assert answer["compacted"] is True
    assert answer["request"]["messages"][-1] == asked
    assert check(answer["request"], "chat", sent=sent) == []
