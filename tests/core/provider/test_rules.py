from __future__ import annotations

from typing import Any

import pytest

from app.core.provider.dialects import OpenAIForms
from app.core.provider.rules import anthropic_violations, openai_violations, violations
from tests.builders import assistant, parse, system, tool_result, tool_use, user


def rules(messages: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(v.rule, v.index) for v in anthropic_violations(parse(messages))]


def test_a_well_formed_conversation_has_no_violations() -> None:
    call = tool_use("read_file", "t1", path="a")
    assert rules([system("s"), user("go"), assistant(call), tool_result("t1", "x")]) == []


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([system("s"), assistant("hi")], [("first_message_user", 1)]),
        ([user("a"), user("b")], [("roles_alternate", 1)]),
        ([user("a"), system("late")], [("system_not_leading", 1)]),
        (
            [user("a"), assistant(tool_use("x", "t1")), user("no result")],
            [("tool_use_unanswered", 1)],
        ),
        ([user("a"), assistant(tool_use("x", "t1"))], [("tool_use_unanswered", 1)]),
        ([user("a"), assistant("no call"), tool_result("t9", "x")], [("tool_result_orphaned", 2)]),
    ],
)
def test_each_anthropic_rule_names_the_message(
    messages: list[dict[str, Any]], expected: list[tuple[str, int]]
) -> None:
    assert rules(messages) == expected


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_openai_every_tool_call_is_answered_by_a_tool_message() -> None:
    raw = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "user", "content": "next"},
    ]
    assert [(v.rule, v.index) for v in openai_violations(raw)] == [("tool_call_unanswered", 1)]


def test_openai_tool_message_must_answer_a_call() -> None:
    raw = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "tool", "tool_call_id": "zz", "content": "x"},
        {"role": "tool", "tool_call_id": "a", "content": "again"},
    ]
    found = [(v.rule, v.index) for v in openai_violations(raw)]
    assert found == [("tool_message_orphaned", 3)]


def test_openai_allows_what_anthropic_forbids() -> None:
    messages = parse([user("a"), user("b")])
    assert violations(messages, "openai") == []
    assert [v.rule for v in violations(messages, "anthropic")] == ["roles_alternate"]


def test_violation_reads_as_rule_and_detail() -> None:
    (violation,) = anthropic_violations(parse([user("a"), user("b")]))
    assert str(violation) == "roles_alternate: two user messages in a row"


def test_a_pending_tool_call_at_the_end_is_allowed_only_when_asked() -> None:
    messages = parse([user("a"), assistant(tool_use("x", "t1"), tool_use("y", "t2"))])
    assert [v.rule for v in anthropic_violations(messages)] == ["tool_use_unanswered"] * 2
    assert anthropic_violations(messages, pending_tail_ok=True) == []


def test_a_pending_tool_call_is_still_refused_when_anything_follows() -> None:
    messages = parse([user("a"), assistant(tool_use("x", "t1")), user("b")])
    broken = anthropic_violations(messages, pending_tail_ok=True)
    assert [(v.rule, v.index) for v in broken] == [("tool_use_unanswered", 1)]


def test_openai_partially_answered_calls_at_the_end_are_pending() -> None:
    raw = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
    ]
    assert [v.rule for v in openai_violations(raw)] == ["tool_call_unanswered"]
    assert openai_violations(raw, pending_tail_ok=True) == []


def test_an_openai_violation_names_the_sent_item_and_the_canonical_message_holding_it() -> None:
    # Two tool messages and a stray one become one canonical user message (index 3): a 422
    # names the item the caller sent (5), a strategy compares plans with the message (3).
    raw = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "tool", "tool_call_id": "b", "content": "y"},
        {"role": "tool", "tool_call_id": "stray", "content": "z"},
        {"role": "assistant", "content": "done"},
    ]
    forms = OpenAIForms()
    messages = forms.read(raw)
    assert len(messages) == 5
    found = [(v.rule, v.index, v.canonical) for v in violations(messages, "openai", forms=forms)]
    assert found == [("tool_message_orphaned", 5, 3)]
    # Converted back without the request's forms, the same item and message.
    again = [(v.index, v.canonical) for v in violations(messages, "openai")]
    assert again == [(5, 3)]


def test_an_anthropic_violation_is_at_its_own_message() -> None:
    messages = parse([user("a"), assistant("no call"), tool_result("t9", "x")])
    assert [(v.index, v.canonical) for v in violations(messages, "anthropic")] == [(2, 2)]
