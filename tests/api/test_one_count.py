"""One body, one count: `/count`, `/should-compact` and `/compact` (forced or not, its
`token_count` and its `stats`) give the same figure for the same body, and `/count` of what
`/compact` hands back gives its `stats` after (issue 48: 42,223 against 42,220; an SDK body
counted 43,045 by one route and 34,210 by another, its tools and the model's margin left
out of `stats`)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.builders import assistant, rounds, system, tool_result, tool_use, user
from tests.sdk_bodies import NAMES, body

pytestmark = pytest.mark.anyio

# What each captured body counts (`/count`), and what its forced `full` compaction leaves
# (`messages`, and the `request` handed back, which ends with a `Continue.` turn when the
# compacted list ends with the summary's acknowledgement), by the fake summarizer.
COUNTS = {
    "anthropic_beta_fields": (9346, 2328, 2328),
    "anthropic_cache_control": (16587, 4122, 4122),
    "anthropic_images_user_words": (15409, 4518, 4518),
    "anthropic_messages_tools": (7455, 2854, 2854),
    "anthropic_pdf_document": (24710, 2856, 2856),
    "anthropic_thinking_tool_loop": (13193, 3363, 3372),
    "openai_chat_images_user_words": (10281, 3031, 3031),
    "openai_chat_tools": (7325, 1867, 1867),
    "openai_responses_images_user_words": (31157, 3424, 3424),
    "openai_responses_tool_loop": (18366, 3325, 3332),
}


def test_every_captured_body_has_its_counts() -> None:
    assert sorted(COUNTS) == NAMES


@pytest.mark.parametrize("name", NAMES)
async def test_an_sdk_body_counts_the_same_on_every_route(
    client: httpx.AsyncClient, name: str
) -> None:
    sent = body(name)
    counted = (await client.post("/count", json=sent)).json()
    judged = (await client.post("/should-compact", json=sent)).json()
    below = (await client.post("/compact", json=sent)).json()
    forced = (await client.post("/compact", json={**sent, "force": True})).json()
    after = (await client.post("/count", json=forced["request"])).json()
    stats = forced["stats"]
    before, compacted, request = COUNTS[name]
    assert [counted["token_count"], judged["token_count"]] == [before, before]
    assert [below["token_count"], forced["token_count"]] == [before, before]
    assert stats["original_token_count"] == before
    assert (stats["compacted_token_count"], stats["request_token_count"]) == (compacted, request)
    assert after["token_count"] == request
    assert stats["tokenizer"] == counted["tokenizer"]


def plain_body() -> dict[str, Any]:
    """A body of messages alone, over the default threshold so `/compact` needs no force."""
    big = "the build log line that repeats\n" * 4000
    return {
        "messages": [
            system("You are a coding agent."),
            *rounds(1, 2),
            user("Run the build."),
            assistant(tool_use("bash", "tb", command="make")),
            tool_result("tb", big),
            assistant("The build passed."),
            user("Now the tests."),
        ],
        "context_window": 32_000,
    }


async def test_a_body_of_messages_counts_the_same_compacted_forced_or_not(
    client: httpx.AsyncClient,
) -> None:
    sent = plain_body()
    counted = (await client.post("/count", json=sent)).json()
    judged = (await client.post("/should-compact", json=sent)).json()
    decided = (await client.post("/compact", json=sent)).json()
    forced = (await client.post("/compact", json={**sent, "force": True})).json()
    assert judged["should_compact"] is True
    for answer in (decided, forced):
        assert answer["compacted"] is True
        stats = answer["stats"]
        assert answer["token_count"] == stats["original_token_count"] == counted["token_count"]
        assert stats["request_token_count"] is None
        out = (await client.post("/count", json={"messages": answer["messages"]})).json()
        assert out["token_count"] == stats["compacted_token_count"]
    assert judged["token_count"] == counted["token_count"]
