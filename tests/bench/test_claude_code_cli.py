"""The pure parts of `bench.claude_code_cli`: the fake model that asks Claude Code for each
part in turn (from the latest read its history still holds), what counts as a compacted
request, and how many requests from the first compacted one on carried the CLAUDE.md rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from bench.claude_code_cli import (
    FILES,
    RULE,
    RuleCount,
    is_compacted,
    next_read,
    rule_after_compaction,
    table,
)
from tests.fakes.provider import Received, Text, ToolCall

WORK = Path("/tmp/claude-code-bench/work")
TOOLS = [{"name": "Read", "input_schema": {"type": "object"}}]


def _body(*parts: int, rule: bool = True, summary: bool = False) -> dict[str, Any]:
    first = [{"type": "text", "text": f"<system-reminder>\n{RULE}\n</system-reminder>"}] * rule
    first.append({"type": "text", "text": "Read each of the files in parts/."})
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    if summary:
        messages.append({"role": "assistant", "content": "Summary: the earlier parts read."})
    for n in parts:
        call = {"type": "tool_use", "id": f"t{n}", "name": "Read",
                "input": {"file_path": str(WORK / "parts" / f"part_{n:02d}.txt")}}  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "..."}
        messages += [{"role": "assistant", "content": [call]},
                     {"role": "user", "content": [result]}]  # fmt: skip
    return {"model": "m", "max_tokens": 32000, "tools": TOOLS, "messages": messages}


def _received(body: dict[str, Any]) -> Received:
    return Received("POST", "/v1/messages", "beta=true", (), orjson.dumps(body), body, 0.0)


def test_the_fake_model_reads_the_part_after_the_latest_read_then_ends() -> None:
    (_, first) = next_read(WORK, _received(_body())).blocks
    assert first == ToolCall("Read", {"file_path": str(WORK / "parts" / "part_00.txt")})
    # After a compaction only the latest reads are kept: the next part all the same.
    (_, later) = next_read(WORK, _received(_body(6, 7, summary=True))).blocks
    assert later == ToolCall("Read", {"file_path": str(WORK / "parts" / "part_08.txt")})
    (last,) = next_read(WORK, _received(_body(FILES - 1))).blocks
    assert last == Text("Done.")
    # A side request (no tools: a title, a summary of its own) is not the conversation.
    side = {"model": "m", "max_tokens": 512, "messages": [{"role": "user", "content": "hi"}]}
    assert not next_read(WORK, _received(side)).tool_calls()


def test_a_request_is_compacted_when_it_holds_fewer_reads_than_were_made() -> None:
    assert not is_compacted(_body())
    assert not is_compacted(_body(0, 1, 2))
    assert is_compacted(_body(2, 3, summary=True))


def test_the_rule_is_counted_from_the_first_compacted_request_on() -> None:
    bodies = [
        orjson.dumps(_body(0)),
        orjson.dumps(_body(0, 1)),
        orjson.dumps(_body(1, summary=True)),  # the first compacted: rule kept
        orjson.dumps(_body(1, 2, summary=True, rule=False)),  # rule lost
        orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "title?"}]}),
    ]
    assert rule_after_compaction(bodies) == RuleCount(first_compacted=2, after=2, with_rule=1)
    assert rule_after_compaction(bodies[:2]) == RuleCount(None, 0, 0)


def test_the_table_has_a_column_per_run_and_marks_what_a_run_lacks() -> None:
    rows = table([{"run": "direct", "requests": 60, "actions": {}},
                  {"run": "proxy", "requests": 41, "actions": {"applied": 28}}])  # fmt: skip
    lines = rows.splitlines()
    assert lines[0] == "| measure | direct | proxy |"
    assert "| 60 | 41 |" in rows
    assert "| – | applied 28 |" in rows
