from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from app.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, text_message
from app.core.provider.dialects import OpenAIForms
from app.core.provider.formats import detect_format, dump_as, parse_messages
from app.core.provider.responses import RESPONSES, from_responses, to_responses
from app.core.provider.rules import responses_violations, violations
from tests.sdk_bodies import body

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Look at the file."}],
    "encrypted_content": "gAAAAB...",
}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "read_file",
    "arguments": '{"path": "a.py"}',
    "status": "completed",
}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "print(1)\n" * 50}
ASK = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix a.py."}]}
SAID = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}],
}
ITEMS: list[dict[str, Any]] = [ASK, REASONING, SAID, CALL, OUTPUT]


@pytest.mark.parametrize(
    "name", ["openai_responses_tool_loop", "openai_responses_images_user_words"]
)
def test_every_captured_input_comes_back_item_for_item(name: str) -> None:
    items = body(name)["input"]
    assert to_responses(from_responses(items)) == items
    forms = OpenAIForms()
    assert dump_as(parse_messages(items, "responses", forms), "responses", forms) == items


def test_a_turn_is_one_assistant_message_with_its_reasoning_text_and_calls() -> None:
    ask, turn, results = from_responses(ITEMS)
    assert ask.role == "user"
    assert ask.blocks()[0] == TextBlock.model_validate(
        {"type": "text", "text": "Fix a.py.", "x-openai": {"part": ASK["content"][0]}}
    )
    assert turn.role == "assistant"
    assert [b.type for b in turn.blocks()] == ["reasoning", "text", "tool_use"]
    reasoning, _text, call = turn.blocks()
    assert reasoning.model_dump() == REASONING  # the encrypted content travels with its call
    assert isinstance(call, ToolUseBlock)
    assert (call.id, call.name, call.input) == ("call_1", "read_file", {"path": "a.py"})
    assert isinstance(results.blocks()[0], ToolResultBlock)


def test_outputs_and_the_user_message_after_them_are_one_user_message() -> None:
    words = {"role": "user", "content": "Now run the tests."}
    messages = from_responses([*ITEMS, words])
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert [b.type for b in messages[-1].blocks()] == ["tool_result", "text"]
    assert to_responses(messages) == [*ITEMS, words]


def test_a_changed_output_is_the_same_item_with_the_output_replaced() -> None:
    messages = from_responses(ITEMS)
    result = messages[2].blocks()[0]
    assert isinstance(result, ToolResultBlock)
    cleared = messages[2].model_copy(
        update={"content": [result.model_copy(update={"content": "[cleared]"})]}
    )
    assert to_responses([cleared]) == [OUTPUT | {"output": "[cleared]"}]


def test_a_changed_call_input_is_the_same_item_with_new_arguments() -> None:
    turn = from_responses(ITEMS)[1]
    call = turn.blocks()[2]
    assert isinstance(call, ToolUseBlock)
    cut = turn.model_copy(
        update={"content": [*turn.blocks()[:2], call.model_copy(update={"input": {"path": "b"}})]}
    )
    assert to_responses([cut])[2] == CALL | {"arguments": '{"path": "b"}'}


def test_messages_built_later_are_plain_role_messages() -> None:
    built = [
        text_message("user", "[Conversation compressed]\n\nS"),
        text_message("assistant", "OK"),
    ]
    assert to_responses(built) == [
        {"role": "user", "content": "[Conversation compressed]\n\nS"},
        {"role": "assistant", "content": "OK"},
    ]


def test_system_and_developer_messages_come_back_in_their_role() -> None:
    items = [{"role": "developer", "content": "Be brief."}, {"role": "system", "content": "Hi."}]
    messages = from_responses(items)
    assert [m.role for m in messages] == ["system", "system"]
    assert to_responses(messages) == items


def test_the_format_is_detected_from_typed_items_or_responses_parts() -> None:
    assert detect_format(ITEMS) == "responses"
    assert detect_format([{"role": "user", "content": [{"type": "input_text", "text": "x"}]}]) == (
        "responses"
    )
    assert detect_format([{"role": "user", "content": "x"}]) == "anthropic"
    assert detect_format([{"role": "tool", "tool_call_id": "a", "content": "x"}]) == "openai"


@pytest.mark.parametrize(
    ("item", "where"),
    [
        ({"type": "message", "role": "tool", "content": "x"}, "role"),
        ({"type": "message", "role": "user"}, "content"),
        ({"type": "function_call", "name": "f", "arguments": "{}"}, "call_id"),
        ({"type": "function_call", "call_id": "c", "arguments": {}}, "arguments"),
        ({"type": "function_call_output", "output": "x"}, "call_id"),
        ({"content": "no role, no type"}, "type"),
    ],
)
def test_an_item_missing_what_is_read_is_refused(item: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError, match=where):
        parse_messages([item], "responses")


def test_an_unknown_item_type_passes_through() -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {}}
    items = [ASK, search, SAID]
    assert to_responses(from_responses(items)) == items


def test_responses_rules_name_unanswered_calls_orphaned_outputs_and_lone_reasoning() -> None:
    assert responses_violations(ITEMS) == []
    assert [v.rule for v in responses_violations([ASK, REASONING, CALL])] == [
        "tool_call_unanswered"
    ]
    assert responses_violations([ASK, REASONING, CALL], pending_tail_ok=True) == []
    assert [v.rule for v in responses_violations([ASK, OUTPUT])] == ["tool_message_orphaned"]
    assert [v.rule for v in responses_violations([ASK, REASONING, ASK])] == ["reasoning_separated"]


def test_violations_of_a_responses_list_name_the_canonical_message() -> None:
    forms = OpenAIForms()
    messages = forms.read([ASK, REASONING, CALL, ASK], RESPONSES)
    [found] = violations(messages, "responses", forms=forms)
    assert (found.rule, found.index, found.canonical) == ("tool_call_unanswered", 2, 1)
    assert isinstance(messages[0], Message)
