"""`strategy: selective` over HTTP, in both formats, and over every corpus transcript.

The bodies send the options' former names (`keep_recent`, `tool_call_threshold`, ...) on
purpose, as clients written before the rename do; tests/api/test_option_names.py sends the
`selective_*` names and checks that both compact alike."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.assemble import SUMMARY_ACK, summary_turn
from app.core.compact_json import compact_json
from app.core.cut import cut_note, cut_text
from app.core.messages import Message
from app.core.provider.dialects import from_openai
from app.core.provider.rules import anthropic_violations, openai_violations
from tests.builders import assistant, system, tool_result, tool_use, user
from tests.corpus import FILES, load

pytestmark = pytest.mark.anyio


def block(n: int, output: str = "ok") -> list[dict[str, Any]]:
    call = tool_use("bash", f"t{n}", command=f"step {n}")
    return [assistant(f"Step {n}.", call), tool_result(f"t{n}", output)]


async def test_selective_drops_old_tool_blocks_and_reports_its_phases(
    client: httpx.AsyncClient,
) -> None:
    output = "one line of output\n" * 8
    raw = [
        system("s"),
        user("Fix it."),
        *block(1, output),
        *block(2, output),
        *block(3, output),
        assistant("Done."),
    ]
    body = {
        "messages": raw,
        "force": True,
        "options": {"strategy": "selective", "keep_recent": 1},
    }
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["compacted"] is True
    assert data["strategy"] == "selective"
    # What the dropped blocks held stays as a ledger right after the system prompt (the
    # commands differ only in a number: one line, the program written once).
    ledger = "## Ledger\n- [commands] step: 1 · 2"
    assert data["messages"] == [
        system("s"),
        user(summary_turn(ledger)),
        {"role": "assistant", "content": SUMMARY_ACK},
        user("Fix it."),
        *block(3, output),
        assistant("Done."),
    ]
    assert data["compacted_indexes"] == [2, 3, 4, 5]
    assert [p["phase"] for p in data["phases"]] == [
        "selective_start",
        "tool_blocks",
        "skill_prompt",
        "assistant_message",
        "skill_metadata",
        "user_message",
        "selective_done",
        "ledger",
    ]
    assert data["phases"][1]["detail"] == "dropped 2 tool blocks, cut 0 inputs and 0 results"
    assert data["phases"][-1]["detail"] == "2 facts of what the rules removed"
    assert data["summary"] == ledger
    archive = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archive["messages"] == raw[1:]


async def test_selective_cuts_openai_tool_arguments_in_the_openai_answer(
    client: httpx.AsyncClient, tokenizer: TiktokenTokenizer
) -> None:
    words = " ".join(f"w{i}" for i in range(400))
    raw = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "Write it."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "write", "arguments": json.dumps({"text": words})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "written"},
    ]
    body = {
        "messages": raw,
        "force": True,
        "options": {"strategy": "selective", "tool_call_threshold": 50, "preview_tokens": 5},
    }
    data = (await client.post("/compact", json=body)).json()
    assert data["format"] == "openai"
    preview = cut_text(compact_json({"text": words}), 5, tokenizer.count)
    assert preview.endswith(cut_note(tokenizer.count(compact_json({"text": words})), 5))
    assert data["messages"][2]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "write", "arguments": json.dumps({"_preview": preview})},
        }
    ]
    assert data["messages"][3] == raw[3]
    assert openai_violations(data["messages"]) == []


async def test_unknown_strategy_options_are_a_422_naming_the_field(
    client: httpx.AsyncClient,
) -> None:
    body = {"messages": [user("hi")], "options": {"strategy": "selective", "keep_recent": -1}}
    response = await client.post("/compact", json=body)
    assert response.status_code == 422
    assert "options.keep_recent" in response.text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
async def test_every_transcript_compacts_selectively_smaller_and_valid(
    path: Path, client: httpx.AsyncClient
) -> None:
    messages = load(path)
    body = {
        "messages": messages,
        "force": True,
        "options": {"strategy": "selective", "keep_recent": 2, "fallback_to_summary": False},
    }
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["compacted"] is True
    out = data["messages"]
    if data["format"] == "openai":
        assert openai_violations(out) == []
        assert anthropic_violations(from_openai(out)) == []
    else:
        assert anthropic_violations([Message.model_validate(m) for m in out]) == []
    stats = data["stats"]
    assert stats["compacted_token_count"] < stats["original_token_count"]
    counted = (await client.post("/count", json={"messages": out})).json()["token_count"]
    assert counted == stats["compacted_token_count"]
    print(f"{path.name}: selective ratio {stats['compaction_ratio']}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
async def test_a_transcript_no_strategy_gets_under_a_tiny_window_comes_back_unchanged(
    path: Path, client: httpx.AsyncClient
) -> None:
    """A 500-token threshold: the rules, their summary fallback and `full` all leave more
    than that, so the answer is the input as sent (`no_gain`) and every step is named."""
    messages = load(path)
    options = {
        "strategy": "selective",
        "keep_recent": 2,
        "context_window": 1000,
        "threshold": 0.5,
        "summary_input_budget": 2000,
    }
    body = {"messages": messages, "force": True, "options": options}
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["reason"], data["strategy"]) == (False, "no_gain", "full")
    assert data["messages"] == messages
    assert data["stats"] is None
    assert data["archive"] is None
    (tried,) = data["fallbacks"]
    assert (tried["strategy"], tried["reason"]) == ("selective", "no_gain")
    assert tried["tokens_after"] >= 500


DOC_EXAMPLE = re.search(
    r"-d '(\{\n  \"force\".*?\n\})'",
    (Path(__file__).resolve().parents[2] / "docs" / "strategies.md").read_text(encoding="utf-8"),
    re.DOTALL,
)


async def test_the_documented_example_answers_as_docs_strategies_says(
    client: httpx.AsyncClient,
) -> None:
    assert DOC_EXAMPLE is not None
    body = json.loads(DOC_EXAMPLE.group(1))
    data = (await client.post("/compact", json=body)).json()
    sent = body["messages"]
    gap = {"role": "assistant", "content": "[Earlier messages compacted]"}
    ledger = [
        {
            "role": "user",
            "content": summary_turn("## Ledger\n- [command] find . -type f"),
        },
        {"role": "assistant", "content": SUMMARY_ACK},
    ]
    assert data["messages"] == [sent[0], *ledger, sent[1], gap, sent[3], *sent[6:]]
    assert data["compacted_indexes"] == [2, 4, 5]
    assert data["phases"][1]["detail"] == "dropped 1 tool blocks, cut 0 inputs and 0 results"
    assert [p["phase"] for p in data["phases"]][-2:] == ["selective_done", "ledger"]
