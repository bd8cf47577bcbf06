"""A lone surrogate escape (`"\\udc80"`) is valid JSON but not text: no UTF-8 form, so no
answer, archive or provider request can carry it. One rule on every route that takes
strings: 422 `invalid_request` naming the first such string, before any work (it used to
be a 500 on /compact, whatever the strategy, /assemble, /compress-tool-result and
/compactions/{id}/apply)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.core.vocabulary import STRATEGY_NAMES
from tests.builders import assistant, rounds, system, tool_use, user

pytestmark = pytest.mark.anyio

LONE = "\udc80"
MESSAGE = "a lone surrogate escape (such as \\udc80) is not text: it has no UTF-8 form"


def anthropic_messages(text: str) -> list[dict[str, Any]]:
    return [system("You are an agent."), *rounds(1, 2), user(f"Go on {text}")]


def openai_messages(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix it."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"output {text}"},
        {"role": "assistant", "content": "Done."},
    ]


async def post(client: httpx.AsyncClient, path: str, body: Any) -> httpx.Response:
    # json.dumps escapes the surrogate as `\udc80`, as an agent's JSON library would
    return await client.post(
        path, content=json.dumps(body), headers={"content-type": "application/json"}
    )


def assert_refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    assert response.json() == {
        "error": "invalid_request",
        "message": MESSAGE,
        "details": [{"field": field, "message": MESSAGE}],
    }


STRATEGIES = list(STRATEGY_NAMES)


@pytest.mark.parametrize("force", [False, True], ids=["below-threshold", "forced"])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_compact_refuses_a_lone_surrogate_in_either_format_for_every_strategy(
    client: httpx.AsyncClient, strategy: str, force: bool
) -> None:
    options = {"strategy": strategy, "tail_keep_recent_rounds": 1, "prune_keep_recent": 0}
    for messages, field in (
        (anthropic_messages(LONE), "messages[9].content"),
        (openai_messages(LONE), "messages[3].content"),
    ):
        body = {"messages": messages, "force": force, "options": options}
        assert_refused(await post(client, "/compact", body), field)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/count", {"messages": anthropic_messages(LONE)}, "messages[9].content"),
        ("/should-compact", {"messages": openai_messages(LONE)}, "messages[3].content"),
        ("/compactions", {"messages": anthropic_messages(LONE)}, "messages[9].content"),
        (
            "/compress-tool-result",
            {"tool": "Bash", "input": {"command": "ls"}, "result": f"a{LONE}"},
            "result",
        ),
        ("/compress-tool-result", {"tool": f"Ba{LONE}sh", "result": "ok"}, "tool"),
        ("/preprocess-input", {"text": f"see @a.py {LONE}"}, "text"),
        ("/assemble", {"input": f"go {LONE}"}, "input"),
        ("/assemble", {"system": "S", "messages": openai_messages(LONE)}, "messages[3].content"),
        (
            "/compact",
            {"messages": [user("x"), assistant(tool_use("bash", "t1", command=f"ls {LONE}"))]},
            "messages[1].content[0].input.command",
        ),
        (
            "/compact",
            {"messages": [{"role": "user", "content": [{"type": "x", LONE: 1}]}]},
            "messages[0].content[0].\\udc80",
        ),
        ("/compact", {"messages": [user("x")], "instructions": LONE}, "instructions"),
        ("/sessions/s1/recall", {"query": f"a{LONE}"}, "query"),
    ],
)
async def test_every_route_that_takes_strings_refuses_a_lone_surrogate(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    assert_refused(await post(client, path, body), field)


async def test_apply_refuses_a_lone_surrogate(client: httpx.AsyncClient) -> None:
    messages = anthropic_messages("")
    job = (await post(client, "/compactions", {"messages": messages, "force": True})).json()
    current = {"messages": [*messages, assistant(f"more {LONE}")]}
    response = await post(client, f"/compactions/{job['id']}/apply", current)
    assert_refused(response, "messages[10].content[0].text")


async def test_a_surrogate_pair_is_ordinary_text(client: httpx.AsyncClient) -> None:
    """`\\ud83d\\ude00` is the escape of one emoji, not a lone surrogate."""
    body = {"messages": anthropic_messages("\U0001f600"), "force": True}
    response = await post(client, "/compact", body)
    assert (response.status_code, response.json()["compacted"]) == (200, True)
    assert "\\ud83d\\ude00" in json.dumps(body)
