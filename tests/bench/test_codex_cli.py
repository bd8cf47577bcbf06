"""The fake model `bench.codex_cli` runs the real Codex CLI against: it asks for each file
in turn, from the latest call in the input (which a compaction keeps), then ends."""

from __future__ import annotations

import orjson

from bench.codex_cli import FILES, RULE, _next_read, rules_after_compaction
from tests.fakes.provider import Received, Text, Thinking, ToolCall


def _received(*reads: int) -> Received:
    items = [{"type": "message", "role": "user", "content": "Read the files."}]
    for n in reads:
        arguments = orjson.dumps({"cmd": f"cat parts/part_{n:02d}.txt"}).decode()
        items.append({"type": "function_call", "call_id": f"c{n}", "name": "exec_command",
                      "arguments": arguments})  # fmt: skip
        items.append({"type": "function_call_output", "call_id": f"c{n}", "output": "..."})
    body = {"model": "m", "input": items}
    return Received("POST", "/v1/responses", "", (), orjson.dumps(body), body, 0.0)


def test_the_fake_model_reads_the_file_after_the_latest_read_then_ends() -> None:
    (_, first) = _next_read(_received()).blocks
    assert first == ToolCall("exec_command", {"cmd": "cat parts/part_00.txt"})
    # After a compaction only the latest calls are kept: the next file all the same.
    (thought, later) = _next_read(_received(6, 7)).blocks
    assert isinstance(thought, Thinking)
    assert later == ToolCall("exec_command", {"cmd": "cat parts/part_08.txt"})
    (last,) = _next_read(_received(FILES - 1)).blocks
    assert last == Text("Done.")


def test_the_rule_is_counted_from_the_first_compacted_request_on() -> None:
    def body(calls: int, rule: bool) -> dict[str, object]:
        items: list[object] = [{"type": "message", "role": "developer", "content": RULE}]
        items = items if rule else []
        items += [{"type": "function_call", "call_id": f"c{n}"} for n in range(calls)]
        return {"input": items}

    growing = [body(0, True), body(1, True), body(2, True)]
    assert rules_after_compaction(growing) == (0, 0)
    compacted = [*growing, body(1, True), body(2, False), body(3, True)]
    assert rules_after_compaction(compacted) == (2, 3)
