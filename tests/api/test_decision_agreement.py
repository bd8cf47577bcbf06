"""`/should-compact` and `/compact` decide from the same count (docs/guarantees.md): for the
same messages and the same `last_usage`, `pending_input` and thresholds, `/should-compact`
says yes exactly when `/compact` (unforced) does not answer `below_threshold` or
`below_min_messages`, and a session's hold stops both alike."""

from __future__ import annotations

import math
import random
from typing import Any

import httpx
import pytest

from app.core.provider.dialects import to_openai
from app.core.vocabulary import Format
from tests.builders import assistant, parse, system, tool_result, tool_use, user

pytestmark = pytest.mark.anyio

FORMATS: list[Format] = ["anthropic", "openai"]
BELOW = ("below_threshold", "below_min_messages")

SHORT = [system("You are a coding agent."), user("Rename x to y in a.py."), assistant("Done.")]
WORK = [
    system("You are a coding agent."),
    user("Fix the failing test."),
    assistant("Looking.", tool_use("bash", "t1", command="pytest -q")),
    tool_result("t1", "".join(f"test_{i} PASSED\n" for i in range(30))),
    assistant("All pass now."),
]

# Each: what both routes are sent besides the messages, and the thresholds (top level for
# `/should-compact`, `options` for `/compact`).
CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {}),
    ({"last_usage": {"input_tokens": 160_900, "output_tokens": 300}}, {}),  # the case
    ({"last_usage": {"input_tokens": 100}}, {"context_window": 200, "threshold": 0.1}),
    ({"last_usage": {"prompt_tokens": 159_999}}, {}),
    ({"last_usage": {"prompt_tokens": 159_999, "completion_tokens": 1}}, {}),
    (
        {
            "last_usage": {"input_tokens": 150_000, "cache_read_input_tokens": 9_000},
            "pending_input": "x" * 3_000,
        },
        {},
    ),
    ({"last_usage": {"input_tokens": 150_000}, "pending_input": "x" * 2_999}, {}),
    ({"last_usage": {"input_tokens": 190_000}}, {}),
    ({"last_usage": {"input_tokens": 190_000}}, {"min_messages": 50}),
    ({}, {"context_window": 100, "threshold": 0.2}),
    ({"pending_input": "y" * 600}, {"context_window": 400, "threshold": 0.5}),
    ({"pending_input": "y" * 60}, {"context_window": 400, "threshold": 0.5}),
    ({}, {"context_window": 100, "threshold": 0.2, "min_messages": 9}),
]


def shaped(raw: list[dict[str, Any]], fmt: Format) -> list[dict[str, Any]]:
    return raw if fmt == "anthropic" else to_openai(parse(raw))


async def both(
    client: httpx.AsyncClient,
    messages: list[dict[str, Any]],
    sent: dict[str, Any],
    limits: dict[str, Any],
    session: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    extra = session or {}
    asked = {"messages": messages, **sent, **limits, **extra}
    decision = (await client.post("/should-compact", json=asked)).json()
    body = {"messages": messages, **sent, "options": limits, **extra}
    answer = (await client.post("/compact", json=body)).json()
    return decision, answer


def agree(decision: dict[str, Any], answer: dict[str, Any]) -> None:
    if decision["should_compact"]:
        assert answer["reason"] not in BELOW, (decision, answer)
    elif decision["reason"] in BELOW:
        assert (answer["compacted"], answer["reason"]) == (False, decision["reason"])
    else:  # a session's hold
        assert (answer["compacted"], answer["reason"]) == (False, decision["reason"])
        assert answer.get("retry_at_tokens") == decision["retry_at_tokens"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("raw", [SHORT, WORK], ids=["short", "work"])
@pytest.mark.parametrize(("sent", "limits"), CASES)
async def test_should_compact_and_compact_decide_alike(
    client: httpx.AsyncClient,
    fmt: Format,
    raw: list[dict[str, Any]],
    sent: dict[str, Any],
    limits: dict[str, Any],
) -> None:
    decision, answer = await both(client, shaped(raw, fmt), sent, limits)
    agree(decision, answer)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_compact_takes_the_providers_count_from_last_usage(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    messages = shaped(SHORT, fmt)
    usage = {"last_usage": {"input_tokens": 160_900}}
    decision, answer = await both(client, messages, usage, {})
    assert (decision["should_compact"], decision["token_count"]) == (True, 160_900)
    # Not below the threshold: the few short messages cannot be made smaller.
    assert (answer["compacted"], answer["reason"]) == (False, "no_gain")
    under, kept = await both(client, messages, {"last_usage": {"input_tokens": 159_999}}, {})
    assert (under["reason"], kept["reason"]) == ("below_threshold", "below_threshold")
    assert kept["messages"] == messages


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_hold_from_a_refusal_on_the_providers_count_stops_both_routes_alike(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    messages = shaped(SHORT, fmt)
    session = {"session_id": f"s-usage-{fmt}"}
    first = await both(client, messages, {"last_usage": {"input_tokens": 160_900}}, {}, session)
    assert (first[0]["should_compact"], first[1]["reason"]) == (True, "no_gain")
    # The refusal was at the provider's 160,900: the hold lasts until 16,000 more.
    for tokens, held in [(161_000, True), (176_899, True), (176_900, False)]:
        usage = {"last_usage": {"input_tokens": tokens}}
        decision, answer = await both(client, messages, usage, {}, session)
        agree(decision, answer)
        assert (decision["reason"] == "no_gain") is held
        if held:
            assert decision["retry_at_tokens"] == 176_900
    records = (await client.get(f"/sessions/s-usage-{fmt}/compactions")).json()["records"]
    assert [(r["outcome"], r["tokens_before"]) for r in records] == [
        ("no_gain", 160_900),
        ("no_gain", 176_900),
    ]


def random_cases(count: int, seed: int = 24) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Usage blocks of either provider, pending input and thresholds around the boundary."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        window = rng.choice([400, 8_000, 200_000])
        share = rng.choice([0.5, 0.8, 0.95])
        edge = math.ceil(window * share)
        sent: dict[str, Any] = {}
        if rng.random() < 0.8:
            keys = rng.choice(
                [
                    ["input_tokens", "output_tokens"],
                    ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"],
                    ["prompt_tokens", "completion_tokens"],
                ]
            )
            total = max(0, edge + rng.randint(-60, 60))
            cuts = sorted(rng.randint(0, total) for _ in keys[1:])
            parts = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
            sent["last_usage"] = dict(zip(keys, parts, strict=True))
        if rng.random() < 0.5:
            sent["pending_input"] = "z" * rng.randint(0, 240)
        limits: dict[str, Any] = {"context_window": window, "threshold": share}
        if rng.random() < 0.2:
            limits["min_messages"] = rng.choice([2, 6, 40])
        cases.append((sent, limits))
    return cases


@pytest.mark.parametrize("fmt", FORMATS)
async def test_both_routes_agree_on_random_usage_pending_input_and_thresholds(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    seen = set()
    for sent, limits in random_cases(30):
        for raw in (SHORT, WORK):
            decision, answer = await both(client, shaped(raw, fmt), sent, limits)
            agree(decision, answer)
            seen.add(decision["reason"])
    assert {"below_threshold", "above_threshold", "below_min_messages"} <= seen
