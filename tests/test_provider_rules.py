"""The strict provider-rule validator (`tests/provider_rules.py`) catches every rule it
names: each captured body passes as sent, and each body broken one way is caught, by that
rule."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests import provider_rules
from tests.provider_rules import check
from tests.sdk_bodies import NAMES, api_of, body, messages_key

Json = dict[str, Any]
Break = Callable[[Json], None]


def size(request: Json) -> int:
    return len(json.dumps(request)) // 4


def first(items: list[Json], test: Callable[[Json], bool]) -> int:
    return next(i for i, item in enumerate(items) if test(item))


def blocks(message: Json) -> list[Json]:
    content = message["content"]
    return content if isinstance(content, list) else []


def has(kind: str) -> Callable[[Json], bool]:
    return lambda m: any(b.get("type") == kind for b in blocks(m))


def typed(kind: str) -> Callable[[Json], bool]:
    return lambda item: item.get("type") == kind


@pytest.mark.parametrize("name", NAMES)
def test_every_captured_body_passes_as_sent(name: str) -> None:
    sent = body(name)
    assert check(sent, api_of(name), sent=body(name), window=10**6, count=size) == []


def _system_inside(b: Json) -> None:
    b["messages"].insert(1, {"role": "system", "content": "Summary of earlier work."})


def _starts_with_assistant(b: Json) -> None:
    del b["messages"][0]


def _two_users(b: Json) -> None:
    b["messages"].insert(0, {"role": "user", "content": "Hello."})


def _empty_text(b: Json) -> None:
    at = first(b["messages"], has("text"))
    next(x for x in blocks(b["messages"][at]) if x["type"] == "text")["text"] = ""


def _text_before_results(b: Json) -> None:
    at = first(b["messages"], has("tool_result"))
    b["messages"][at]["content"].insert(0, {"type": "text", "text": "Results:"})


def _result_renamed(b: Json) -> None:
    at = first(b["messages"], has("tool_result"))
    b["messages"][at]["content"][0]["tool_use_id"] = "toolu_other"


def _signature_changed(b: Json) -> None:
    at = first(b["messages"], has("thinking"))
    blocks(b["messages"][at])[0]["signature"] = "forged"


def _pending_thinking_dropped(b: Json) -> None:
    pending = b["messages"][-2]["content"]
    b["messages"][-2]["content"] = [x for x in pending if x["type"] not in ("thinking",)]


def _five_breakpoints(b: Json) -> None:
    for message in [m for m in b["messages"] if blocks(m)][:2]:
        blocks(message)[0]["cache_control"] = {"type": "ephemeral"}


def _first_image_dropped(b: Json) -> None:
    at = first(b["messages"], has("image"))
    b["messages"][at]["content"] = [x for x in blocks(b["messages"][at]) if x["type"] != "image"]


def _newest_words_dropped(b: Json) -> None:
    last = b["messages"][-1]
    last["content"] = [x for x in last["content"] if x.get("type") != "image"]


def _ends_on_assistant(b: Json) -> None:
    del b["messages"][-1]


def _fields_reordered(b: Json) -> None:
    model = b.pop("model")
    b["model"] = model


def _field_changed(b: Json) -> None:
    b["max_tokens"] = 1


ANTHROPIC: list[tuple[str, str, Break]] = [
    ("anthropic_messages_tools", "roles", _system_inside),
    ("anthropic_messages_tools", "first_user", _starts_with_assistant),
    ("anthropic_messages_tools", "alternation", _two_users),
    ("anthropic_messages_tools", "empty", _empty_text),
    ("anthropic_messages_tools", "results_first", _text_before_results),
    ("anthropic_messages_tools", "result_orphaned", _result_renamed),
    ("anthropic_messages_tools", "call_unanswered", _result_renamed),
    ("anthropic_thinking_tool_loop", "thinking_changed", _signature_changed),
    ("anthropic_thinking_tool_loop", "thinking_dropped", _pending_thinking_dropped),
    ("anthropic_cache_control", "cache_breakpoints", _five_breakpoints),
    ("anthropic_images_user_words", "media_dropped", _first_image_dropped),
    ("anthropic_images_user_words", "newest_request", _newest_words_dropped),
    ("anthropic_images_user_words", "ends_on_assistant", _ends_on_assistant),
    ("anthropic_beta_fields", "fields_changed", _fields_reordered),
    ("anthropic_pdf_document", "fields_changed", _field_changed),
]


def _function_role(b: Json) -> None:
    b["messages"][1]["role"] = "function"


def _assistant_says_nothing(b: Json) -> None:
    at = first(b["messages"], lambda m: m["role"] == "assistant")
    b["messages"][at] = {"role": "assistant", "content": None}


def _tool_message_dropped(b: Json) -> None:
    del b["messages"][first(b["messages"], lambda m: m["role"] == "tool")]


def _tool_message_renamed(b: Json) -> None:
    b["messages"][first(b["messages"], lambda m: m["role"] == "tool")]["tool_call_id"] = "x"


def _chat_image_dropped(b: Json) -> None:
    at = first(b["messages"], lambda m: any(p.get("type") == "image_url" for p in blocks(m)))
    b["messages"][at]["content"] = [p for p in blocks(b["messages"][at]) if p["type"] == "text"]


def _chat_newest_dropped(b: Json) -> None:
    b["messages"][-1] = {"role": "user", "content": "Continue."}


def _chat_ends_on_assistant(b: Json) -> None:
    b["messages"].append({"role": "assistant", "content": "Done."})


CHAT: list[tuple[str, str, Break]] = [
    ("openai_chat_tools", "roles", _function_role),
    ("openai_chat_tools", "empty", _assistant_says_nothing),
    ("openai_chat_tools", "call_unanswered", _tool_message_dropped),
    ("openai_chat_tools", "result_orphaned", _tool_message_renamed),
    ("openai_chat_images_user_words", "media_dropped", _chat_image_dropped),
    ("openai_chat_images_user_words", "newest_request", _chat_newest_dropped),
    ("openai_chat_images_user_words", "ends_on_assistant", _chat_ends_on_assistant),
    ("openai_chat_tools", "fields_changed", _fields_reordered),
]


def _tool_role_item(b: Json) -> None:
    b["input"].insert(0, {"type": "message", "role": "tool", "content": "x"})


def _output_dropped(b: Json) -> None:
    del b["input"][first(b["input"], typed("function_call_output"))]


def _output_renamed(b: Json) -> None:
    b["input"][first(b["input"], typed("function_call_output"))]["call_id"] = "call_other"


def _reasoning_alone(b: Json) -> None:
    at = first(b["input"], typed("reasoning"))
    b["input"].insert(at + 1, {"role": "user", "content": "Wait."})


def _encrypted_changed(b: Json) -> None:
    b["input"][first(b["input"], typed("reasoning"))]["encrypted_content"] = "forged"


def _pending_reasoning_dropped(b: Json) -> None:
    last = max(i for i, item in enumerate(b["input"]) if item.get("type") == "reasoning")
    del b["input"][last]


def _input_image_dropped(b: Json) -> None:
    item = b["input"][0]
    item["content"] = [p for p in item["content"] if p["type"] != "input_image"]


def _responses_newest_dropped(b: Json) -> None:
    del b["input"][-1]


def _responses_ends_on_assistant(b: Json) -> None:
    b["input"].append({"role": "assistant", "content": "Done."})


def _instructions_changed(b: Json) -> None:
    b["instructions"] = "Summary of earlier work.\n\n" + b["instructions"]


RESPONSES: list[tuple[str, str, Break]] = [
    ("openai_responses_tool_loop", "roles", _tool_role_item),
    ("openai_responses_tool_loop", "call_unanswered", _output_dropped),
    ("openai_responses_tool_loop", "result_orphaned", _output_renamed),
    ("openai_responses_tool_loop", "reasoning_alone", _reasoning_alone),
    ("openai_responses_tool_loop", "thinking_changed", _encrypted_changed),
    ("openai_responses_tool_loop", "thinking_dropped", _pending_reasoning_dropped),
    ("openai_responses_images_user_words", "media_dropped", _input_image_dropped),
    ("openai_responses_images_user_words", "newest_request", _responses_newest_dropped),
    ("openai_responses_images_user_words", "ends_on_assistant", _responses_ends_on_assistant),
    ("openai_responses_tool_loop", "fields_changed", _instructions_changed),
]


@pytest.mark.parametrize(
    ("name", "rule", "breaking"),
    [*ANTHROPIC, *CHAT, *RESPONSES],
    ids=[f"{n}-{r}" for n, r, _ in [*ANTHROPIC, *CHAT, *RESPONSES]],
)
def test_a_body_broken_one_way_is_caught_by_that_rule(
    name: str, rule: str, breaking: Break
) -> None:
    broken = body(name)
    breaking(broken)
    found = check(broken, api_of(name), sent=body(name), window=10**6, count=size)
    assert rule in {f.rule for f in found}, [str(f) for f in found]


@pytest.mark.parametrize("name", NAMES)
def test_a_request_over_the_window_with_its_output_budget_is_caught(name: str) -> None:
    sent = body(name)
    budget = next(
        sent[k] for k in ("max_tokens", "max_completion_tokens", "max_output_tokens") if k in sent
    )
    window = size(sent) + budget // 2  # the input alone fits; with its output budget it does not
    found = check(sent, api_of(name), window=window, count=size)
    assert [f.rule for f in found] == ["over_window"]
    assert check(sent, api_of(name), window=size(sent) + budget, count=size) == []


def test_every_rule_of_the_validator_is_exercised() -> None:
    """The rules the validator's docstring names are the rules broken above."""
    lines = (provider_rules.__doc__ or "").splitlines()
    named = {line.split()[0] for line in lines if line.startswith("    ") and line[4] != " "}
    exercised = {rule for _, rule, _ in [*ANTHROPIC, *CHAT, *RESPONSES]} | {"over_window"}
    assert named == exercised
    assert all(messages_key(n) in body(n) for n in NAMES)
