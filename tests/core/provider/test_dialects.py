from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message, ToolResultBlock, ToolUseBlock
from app.core.provider.dialects import (
    BOOKKEEPING,
    OpenAIForms,
    OpenAIMessage,
    detect_format,
    dump_as,
    from_openai,
    message_to_openai,
    parse_messages,
    to_anthropic,
    to_openai,
)
from app.core.provider.media import OPENAI_IMAGE_MAX_TOKENS
from app.core.tokens import MESSAGE_OVERHEAD, count_total
from tests.builders import assistant, parse, system, tool_result, tool_use, user

OPENAI = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": "Fix a.py", "name": "ann"},
    {
        "role": "assistant",
        "content": "Reading it.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "grep", "arguments": '{"q":"x",  "n": 1}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "def f(): ..."},
    {"role": "tool", "tool_call_id": "c2", "content": "no match", "name": "grep"},
    {"role": "user", "content": "Please continue."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "bash", "arguments": "not json"}}
        ],
        "refusal": None,
    },
    {"role": "tool", "tool_call_id": "c3", "content": [{"type": "text", "text": "ok"}]},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    },
    {"role": "assistant", "content": "Done."},
]


def test_openai_conversation_converts_to_the_canonical_shape() -> None:
    messages = from_openai(OPENAI)
    assert [m.role for m in messages] == [
        "system",
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    call = messages[3].content[1]
    assert isinstance(call, ToolUseBlock)
    assert (call.id, call.name, call.input) == ("c1", "read_file", {"path": "a.py"})
    results = messages[4].content
    assert isinstance(results, list)
    assert [b.tool_use_id for b in results if isinstance(b, ToolResultBlock)] == ["c1", "c2"]
    assert to_anthropic(messages[4:5]) == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "def f(): ..."},
                {"type": "tool_result", "tool_use_id": "c2", "content": "no match"},
                {"type": "text", "text": "Please continue."},
            ],
        }
    ]
    bad_json = messages[5].content[0]
    assert isinstance(bad_json, ToolUseBlock)
    assert bad_json.input == {}


def test_round_trip_returns_the_input_unchanged() -> None:
    assert to_openai(from_openai(OPENAI)) == OPENAI
    assert dump_as(from_openai(OPENAI), "openai") == OPENAI


def test_detects_the_format() -> None:
    assert detect_format(OPENAI) == "openai"
    assert detect_format([system("s"), user("hi"), assistant(tool_use("x"))]) == "anthropic"
    assert detect_format([{"role": "assistant", "content": None}]) == "openai"
    assert detect_format([user("plain"), {"role": "assistant", "content": "strings"}]) == (
        "anthropic"
    )


def test_detection_leaves_a_role_or_type_that_is_no_string_to_validation() -> None:
    assert detect_format([{"role": {}, "content": "x"}]) == "anthropic"
    assert detect_format([{"role": "user", "content": [{"type": {}}]}]) == "anthropic"
    assert detect_format([{"role": ["tool"], "content": [{"type": ["image_url"]}]}]) == (
        "anthropic"
    )


def test_plain_assembled_messages_convert_trivially() -> None:
    plain = [Message(role="user", content="S"), Message(role="assistant", content="ok")]
    assert to_openai(plain) == [
        {"role": "user", "content": "S"},
        {"role": "assistant", "content": "ok"},
    ]


def test_same_conversation_counts_the_same_in_both_formats(
    tokenizer: TiktokenTokenizer,
) -> None:
    call = tool_use("read_file", "t1", path="a.py")
    anthropic = parse(
        [system("s"), user("go"), assistant("Reading.", call), tool_result("t1", "body")]
    )
    openai = from_openai(
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": "Reading.",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "body"},
        ]
    )
    assert count_total(tokenizer, openai) == count_total(tokenizer, anthropic)


def test_an_image_url_part_whose_size_is_unreadable_costs_the_most_an_image_can(
    tokenizer: TiktokenTokenizer,
) -> None:
    url = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 50_000}}
    (message,) = from_openai([{"role": "user", "content": [url]}])
    assert count_total(tokenizer, [message]) == (
        tokenizer.count("user\n[media]") + MESSAGE_OVERHEAD + OPENAI_IMAGE_MAX_TOKENS
    )


_text = st.text(max_size=30)
_ids = st.text("abcdef0123456789", min_size=1, max_size=6)
_arguments = st.one_of(
    st.dictionaries(st.sampled_from(["path", "q", "n", "file_path"]), _text).map(json.dumps),
    st.dictionaries(st.text(max_size=5), st.integers()).map(
        lambda d: json.dumps(d, indent=1, sort_keys=False)
    ),
    _text,
)
_parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, _text),
        st.builds(lambda u: {"type": "image_url", "image_url": {"url": u}}, _text),
        st.builds(lambda d: {"type": "input_audio", "input_audio": {"data": d}}, _text),
    ),
    min_size=1,
    max_size=3,
)
_content = st.one_of(_text, _parts)
_extra = st.one_of(st.just({}), st.builds(lambda n: {"name": n}, _text))


@st.composite
def _step(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One agent turn: a user message, or an assistant message with its tool answers."""
    if draw(st.booleans()):
        return [{"role": "user", "content": draw(_content)} | draw(_extra)]
    ids = draw(st.lists(_ids, max_size=3, unique=True))
    message: dict[str, Any] = {"role": "assistant"}
    content_kind = draw(st.sampled_from(["string", "null", "absent", "parts"]))
    if content_kind == "string":
        message["content"] = draw(_text)
    elif content_kind == "null":
        message["content"] = None
    elif content_kind == "parts":
        message["content"] = draw(_parts)
    calls = draw(st.sampled_from(["list", "null", "absent"]))
    if ids or calls == "list":
        message["tool_calls"] = [
            {
                "id": i,
                "type": "function",
                "function": {"name": draw(_text), "arguments": draw(_arguments)},
            }
            for i in ids
        ]
    elif calls == "null":
        message["tool_calls"] = None
    message |= draw(_extra)
    answers = [
        {"role": "tool", "tool_call_id": i, "content": draw(_content)} | draw(_extra) for i in ids
    ]
    return [message, *answers]


_conversations = st.builds(
    lambda head, steps: head + [m for step in steps for m in step],
    st.lists(
        st.builds(
            lambda role, text: {"role": role, "content": text},
            st.sampled_from(["system", "developer"]),
            _text,
        ),
        max_size=2,
    ),
    st.lists(_step(), max_size=6),
)


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations)
def test_any_openai_conversation_round_trips_exactly(raw: list[dict[str, Any]]) -> None:
    for message in raw:
        OpenAIMessage.model_validate(message)
    assert to_openai(from_openai(raw)) == raw


@pytest.mark.slow
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(_conversations)
def test_a_read_conversation_is_its_own_openai_form(raw: list[dict[str, Any]]) -> None:
    """What `OpenAIForms` hands back for the messages read is the items sent, the very
    objects: nothing is converted."""
    forms = OpenAIForms()
    messages = forms.read(raw)
    assert messages == from_openai(raw)
    sent = forms.dump(messages)
    assert len(sent) == len(raw)
    assert all(a is b for a, b in zip(sent, raw, strict=True))


_odd_parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, _text),
        st.builds(lambda i: {"type": "tool_use", "id": i, "name": "f", "input": {}}, _ids),
        st.builds(
            lambda i, flag: {"type": "tool_result", "tool_use_id": i} | flag,
            _ids,
            st.sampled_from([{}, {"is_error": 1}, {"is_error": "yes"}]),
        ),
        st.builds(
            lambda t: {"type": "text", "text": t, BOOKKEEPING: {"user": {"content": "string"}}},
            _text,
        ),
    ),
    min_size=1,
    max_size=3,
)


@st.composite
def _odd_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Conversations with what the canonical model rewrites: Anthropic blocks or the
    bookkeeping key as parts."""
    out = []
    for message in draw(_conversations):
        if message["role"] != "system" and draw(st.booleans()):
            message = message | {"content": draw(_odd_parts)}
        out.append(message)
    return out


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_odd_conversations())
def test_each_message_s_form_is_its_conversion(raw: list[dict[str, Any]]) -> None:
    """Whether a message's form is the items sent or a conversion, it is what converting
    it gives: the answer, the archive and the checks never see a difference."""
    parse_messages(raw, "openai")  # valid OpenAI
    forms = OpenAIForms()
    messages = forms.read(raw)
    assert messages == from_openai(raw)
    for message in messages:
        assert forms.of(message) == message_to_openai(message)
    assert forms.dump(messages) == to_openai(messages)


def test_an_assistant_s_null_tool_calls_come_back_as_sent() -> None:
    raw = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "Going.", "tool_calls": None},
        {"role": "assistant", "content": None, "tool_calls": None, "name": "a"},
    ]
    messages = from_openai(raw)
    assert [m.content for m in messages] == ["Go.", "Going.", []]
    assert to_openai(messages) == raw
    forms = OpenAIForms()
    assert all(a is b for a, b in zip(forms.dump(forms.read(raw)), raw, strict=True))


def test_what_does_not_come_back_as_sent_is_converted() -> None:
    """Items the round trip does not give back as sent: each is converted, so the answer
    and the archive stay what they were before items were reused."""
    raw = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "Going."},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "is_error": 1}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "y", "name": "f"}]},
        {"role": "user", "content": [{"type": "text", "text": "Hi.", BOOKKEEPING: {}}]},
    ]
    forms = OpenAIForms()
    messages = forms.read(raw)
    assert forms.dump(messages) == [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "Going."},
        {"role": "tool", "tool_call_id": "x"},
        {
            "role": "assistant",
            "content": [],
            "tool_calls": [
                {"id": "y", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "Hi."}]},
    ]
    assert forms.of(messages[0])[0] is raw[0]
    assert forms.of(messages[2]) == message_to_openai(messages[2])


@pytest.mark.slow
@settings(max_examples=100)
@given(_conversations)
def test_conversion_never_adds_counted_text(raw: list[dict[str, Any]]) -> None:
    """Bookkeeping stays out of counting but for one thing: an OpenAI call's arguments are
    counted as sent. Converted to Anthropic JSON and back, the count differs from the
    original's by exactly the difference between those strings and the arguments written
    again from the parsed input."""
    internal = from_openai(raw)
    reparsed = [Message.model_validate(m) for m in to_anthropic(internal)]
    tokenizer = _CountingChars()
    sent = [
        (call["function"]["arguments"], block)
        for message, original in zip(internal, _calls_by_message(raw, internal), strict=True)
        for call, block in zip(original, _tool_uses(message), strict=True)
    ]
    written_again = sum(
        len(json.dumps(block.input, ensure_ascii=False)) - len(arguments)
        for arguments, block in sent
    )
    assert count_total(tokenizer, internal) + written_again == count_total(tokenizer, reparsed)


def _tool_uses(message: Message) -> list[Any]:
    content = message.content if isinstance(message.content, list) else []
    return [block for block in content if block.type == "tool_use"]


def _calls_by_message(raw: list[dict[str, Any]], internal: list[Message]) -> list[list[Any]]:
    """Each canonical message's OpenAI calls, in order (only assistant messages carry any)."""
    calls = iter([m.get("tool_calls") or [] for m in raw if m.get("role") == "assistant"])
    return [next(calls) if m.role == "assistant" else [] for m in internal]


class _CountingChars:
    """A tokenizer stand-in: one token per character (exact enough to compare texts)."""

    @property
    def name(self) -> str:
        return "chars"

    def count(self, text: str) -> int:
        return len(text)

    def count_batch(self, texts: Any) -> list[int]:
        return [len(t) for t in texts]
