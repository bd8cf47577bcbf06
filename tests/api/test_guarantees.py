"""The compaction an agent can trust in a loop: never bigger than sent, fallbacks that
reach the goal, `/should-compact` agreeing with `/compact`, thrash detected. Each test runs
in both message formats."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.messages import Message
from app.core.provider.dialects import from_openai, to_openai
from app.core.provider.rules import anthropic_violations, openai_violations
from app.core.vocabulary import Format
from tests.builders import assistant, parse, system, tool_result, tool_use, user

pytestmark = pytest.mark.anyio
FORMATS: list[Format] = ["anthropic", "openai"]


def shaped(raw: list[dict[str, Any]], fmt: Format) -> list[dict[str, Any]]:
    return raw if fmt == "anthropic" else to_openai(parse(raw))


def valid(messages: list[dict[str, Any]], fmt: Format) -> bool:
    if fmt == "openai":
        return (
            openai_violations(messages) == [] and anthropic_violations(from_openai(messages)) == []
        )
    return anthropic_violations([Message.model_validate(m) for m in messages]) == []


def archives(data_dir: Path) -> list[str]:
    directory = data_dir / "archives"
    return sorted(os.listdir(directory)) if directory.is_dir() else []


TINY = [
    system("You are a coding agent."),
    user("Rename x to y in a.py."),
    assistant("Done."),
]


def exchange(n: int, lines: int = 40) -> list[dict[str, Any]]:
    """One tool exchange: an assistant call and a long result."""
    call = tool_use("bash", f"t{n}", command=f"pytest -k case_{n}")
    output = "".join(f"case_{n}_{i:03d} PASSED\n" for i in range(lines))
    return [assistant(f"Step {n}.", call), tool_result(f"t{n}", output)]


def long_round(exchanges: int, lines: int = 40) -> list[dict[str, Any]]:
    """One request followed by many tool exchanges: the normal agent session."""
    out = [system("You are a coding agent."), user("Fix the failing tests.")]
    for n in range(1, exchanges + 1):
        out += exchange(n, lines)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_forced_compaction_that_would_grow_the_context_is_refused(
    client: httpx.AsyncClient, tmp_path: Path, fmt: Format
) -> None:
    messages = shaped(TINY, fmt)
    body = {"messages": messages, "force": True, "session_id": "s-grow"}
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["reason"], data["strategy"]) == (False, "no_gain", "full")
    assert data["messages"] == messages
    assert (data["stats"], data["archive"], data["fallbacks"]) == (None, None, [])
    assert data["summary_chunks"] == 1  # the summary was written, then refused
    assert data["warnings"][-1].startswith("full would leave ")
    assert archives(tmp_path / "data") == []
    (record,) = (await client.get("/sessions/s-grow/compactions")).json()["records"]
    assert (record["outcome"], record["strategy"], record["archive_id"]) == (
        "no_gain",
        "full",
        None,
    )


@pytest.mark.parametrize("fmt", FORMATS)
async def test_tail_on_one_long_round_keeps_the_latest_exchanges_and_gets_under_the_threshold(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    raw = long_round(30)
    messages = shaped(raw, fmt)
    options = {"strategy": "tail", "context_window": 4000, "threshold": 0.8}
    sent = (await client.post("/count", json={"messages": messages})).json()["token_count"]
    assert sent > 3200  # over the threshold: this used to be `too_few_rounds`
    data = (await client.post("/compact", json={"messages": messages, "options": options})).json()
    assert (data["compacted"], data["strategy"], data["fallbacks"]) == (True, "tail", [])
    assert data["stats"]["compacted_token_count"] < 3200
    out = data["messages"]
    assert valid(out, fmt)
    # The request is kept verbatim, then the latest exchanges, each call with its result.
    assert out[0] == messages[0]
    assert out[1]["role"] == "system"
    assert out[2] == messages[1]
    assert out[-4:] == messages[-4:]
    assert "most recent tool exchanges are kept verbatim" in data["warnings"][0]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_declining_strategy_falls_back_and_the_answer_names_the_chain(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    # One exchange and nothing older: `tail` has nothing to summarize besides what it keeps.
    messages = shaped(long_round(1, lines=200), fmt)
    options = {"strategy": "prune", "prune_min_tokens": 100_000, "tail_keep_recent_rounds": 5}
    body = {"messages": messages, "force": True, "options": options}
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["strategy"]) == (True, "full")
    assert [(f["strategy"], f["reason"]) for f in data["fallbacks"]] == [
        ("prune", "nothing_to_prune"),
        ("tail", "too_few_rounds"),
    ]
    assert data["fallbacks"][1]["detail"] == (
        "every round would be kept (tail_keep_recent_rounds 5): nothing older to archive"
    )
    assert valid(data["messages"], fmt)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_fallbacks_can_be_turned_off_per_request(
    client: httpx.AsyncClient, tmp_path: Path, fmt: Format
) -> None:
    messages = shaped(long_round(1, lines=200), fmt)
    options = {"strategy": "tail", "tail_keep_recent_rounds": 5, "fallback": False}
    body = {"messages": messages, "force": True, "options": options}
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["reason"], data["fallbacks"]) == (False, "too_few_rounds", [])
    grown = {"messages": shaped(TINY, fmt), "force": True, "options": {"fallback": False}}
    refused = (await client.post("/compact", json=grown)).json()
    assert (refused["compacted"], refused["reason"]) == (False, "no_gain")
    assert archives(tmp_path / "data") == []


HUGE_PROMPT = "Follow the house rules. " * 120  # a system prompt no strategy can shrink


@pytest.mark.parametrize("fmt", FORMATS)
async def test_after_a_refusal_should_compact_says_no_until_the_context_grew_or_changed(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    raw = [system(HUGE_PROMPT), user("Rename x."), assistant("Done.")]
    messages = shaped(raw, fmt)
    window = {"context_window": 800, "threshold": 0.5}  # threshold 400 tokens
    asked = {"messages": messages, "session_id": "s-1", **window}
    before = (await client.post("/should-compact", json=asked)).json()
    assert (before["should_compact"], before["reason"]) == (True, "above_threshold")

    body = {"messages": messages, "session_id": "s-1", "options": window}
    refused = (await client.post("/compact", json=body)).json()
    assert (refused["compacted"], refused["reason"]) == (False, "no_gain")

    more = shaped([*raw, user("And z.")], fmt)
    later = (await client.post("/should-compact", json=asked | {"messages": more})).json()
    assert (later["should_compact"], later["reason"]) == (False, "no_gain")
    assert later["retry_at_tokens"] == refused["token_count"] + 40
    assert f"worth another attempt at {later['retry_at_tokens']} tokens" in later["detail"]
    again = (await client.post("/compact", json=body | {"messages": more})).json()
    assert (again["compacted"], again["reason"]) == (False, "no_gain")
    assert again["retry_at_tokens"] == later["retry_at_tokens"]
    records = (await client.get("/sessions/s-1/compactions")).json()["records"]
    assert [r["outcome"] for r in records] == ["no_gain"]  # a hold is not a new attempt

    grown = shaped([*raw, user("And z. " * 60)], fmt)
    yes = (await client.post("/should-compact", json=asked | {"messages": grown})).json()
    assert (yes["should_compact"], yes["reason"]) == (True, "overflow")
    changed = shaped([system(HUGE_PROMPT), user("Something else."), assistant("Ok.")], fmt)
    fresh = (await client.post("/should-compact", json=asked | {"messages": changed})).json()
    assert fresh["should_compact"] is True


@pytest.mark.parametrize("fmt", FORMATS)
async def test_thrash_is_detected_named_and_held_until_the_context_changes(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    # threshold 2400 tokens, overflow at 7200: each 400-line result (~3200) refills it
    window = {"context_window": 8000, "threshold": 0.3}
    context = parse(long_round(1, lines=400))
    for n in range(2, 5):  # compact, then one turn refills the window: three times
        sent = (
            to_openai(context)
            if fmt == "openai"
            else [m.model_dump(exclude_none=True) for m in context]
        )
        body = {"messages": sent, "session_id": "s-t", "options": window}
        data = (await client.post("/compact", json=body)).json()
        assert data["compacted"] is True, data
        back = from_openai(data["messages"]) if fmt == "openai" else parse(data["messages"])
        context = [*back, *parse(exchange(n, lines=400))]
    sent = (
        to_openai(context)
        if fmt == "openai"
        else [m.model_dump(exclude_none=True) for m in context]
    )
    asked = {"messages": sent, "session_id": "s-t", **window}
    answer = (await client.post("/should-compact", json=asked)).json()
    assert (answer["should_compact"], answer["reason"]) == (False, "thrashing")
    largest = answer["refilling"][0]
    assert (largest["index"], largest["role"], largest["tool_name"]) == (
        len(context) - 1,
        "user",
        "bash",
    )
    assert largest["token_count"] > 1000
    held = (
        await client.post(
            "/compact", json={"messages": sent, "session_id": "s-t", "options": window}
        )
    ).json()
    assert (held["compacted"], held["reason"]) == (False, "thrashing")
    assert held["refilling"][0]["index"] == len(context) - 1
    still = (await client.post("/should-compact", json=asked)).json()
    assert still["reason"] == "thrashing"
    # The agent drops the large result for a short one: the context changed shape.
    short = [*context[:-1], Message.model_validate(tool_result("t4", "4 passed"))]
    trimmed = (
        to_openai(short) if fmt == "openai" else [m.model_dump(exclude_none=True) for m in short]
    )
    after = (await client.post("/should-compact", json=asked | {"messages": trimmed})).json()
    assert after["reason"] != "thrashing"


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_thrashing_context_that_overflows_is_compacted_anyway(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    """A hold must never leave the agent with a context its model cannot take."""
    window = {"context_window": 8000, "threshold": 0.3}  # threshold 2400, overflow 7200
    context = parse(long_round(1, lines=400))
    for n in range(2, 5):
        sent = shaped([m.model_dump(exclude_none=True) for m in context], fmt)
        body = {"messages": sent, "session_id": "s-o", "options": window}
        data = (await client.post("/compact", json=body)).json()
        assert data["compacted"] is True, data
        back = from_openai(data["messages"]) if fmt == "openai" else parse(data["messages"])
        context = [*back, *parse(exchange(n, lines=400))]
    held = shaped([m.model_dump(exclude_none=True) for m in context], fmt)
    asked = {"messages": held, "session_id": "s-o", **window}
    assert (await client.post("/should-compact", json=asked)).json()["reason"] == "thrashing"
    # The last result is larger still: the context reaches the overflow threshold.
    bigger = "".join(f"case_4_{i:03d} FAILED\n" for i in range(1000))
    dumped = [m.model_dump(exclude_none=True) for m in context[:-1]]
    over = shaped([*dumped, tool_result("t4", bigger)], fmt)
    answer = (await client.post("/should-compact", json=asked | {"messages": over})).json()
    assert (answer["should_compact"], answer["reason"]) == (True, "overflow")
    assert any(w.startswith("thrashing, compacted anyway") for w in answer["warnings"])
    body = {"messages": over, "session_id": "s-o", "options": window}
    data = (await client.post("/compact", json=body)).json()
    assert data["compacted"] is True, data
    assert data["stats"]["compacted_token_count"] < 2400
    assert any(w.startswith("thrashing, compacted anyway") for w in data["warnings"])
