"""Message dialects: the OpenAI Chat Completions shape in and out of the canonical model.

The pipeline works on one shape (`app.core.messages`, Anthropic's). An OpenAI conversation
is converted in with `from_openai` and back with `to_openai`, and the trip is exact:
`to_openai(from_openai(raw)) == raw` for every conversation `OpenAIMessage` accepts.
What the canonical model cannot say natively rides along under the key `x-openai`, which
counting never reads:

    system / developer     system message; a developer message keeps {"role": "developer"}
    user                   user message; text parts are text blocks, other parts
                           (image_url, input_audio, file) are kept verbatim as unknown blocks
    assistant              text + tool_use blocks; each tool_use keeps its call verbatim
                           (`call`: the raw JSON arguments string, key order, odd JSON);
                           how `content` was sent (string, parts, null, absent) is noted
    tool                   a run of consecutive tool messages is one user message of
                           tool_result blocks, as Anthropic wants them; a user message right
                           after the run joins it (its first block notes how it was sent)

Other fields of a message (`name`, `refusal`, ...) are kept under `x-openai.extra`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, model_validator

from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.core.vocabulary import Format

BOOKKEEPING = "x-openai"
OPENAI_ONLY_ROLES = frozenset({"tool", "developer"})
OPENAI_ONLY_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call"})
OPENAI_ONLY_PARTS = frozenset(
    {"image_url", "input_audio", "file", "refusal", "input_text", "input_image"}
)
_BASE_KEYS = frozenset({"role", "content"})


class OpenAIFunction(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: str
    arguments: str


class OpenAIToolCall(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    id: str
    type: str = "function"
    function: OpenAIFunction


class OpenAIPart(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: str


class OpenAIMessage(BaseModel):
    """One Chat Completions message, as validated at the API edge (extra fields allowed)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[OpenAIPart] | None = None
    tool_calls: list[OpenAIToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _role_rules(self) -> OpenAIMessage:
        if self.role == "tool" and self.tool_call_id is None:
            raise ValueError("a tool message needs `tool_call_id`")
        if self.role != "assistant" and self.content is None:
            raise ValueError(f"a {self.role} message needs `content`")
        if self.tool_calls is not None and self.role != "assistant":
            raise ValueError("only assistant messages carry `tool_calls`")
        return self


def _named(value: Any, names: frozenset[str]) -> bool:
    """Membership for raw JSON: a role or type that is an object or list is no name (and
    unhashable), so validation, not detection, reports it."""
    return isinstance(value, str) and value in names


def detect_format(raw: Sequence[Any]) -> Format:
    """`openai` when any message uses something only OpenAI has, else `anthropic`.

    A conversation of plain strings reads the same in both, and both paths treat it alike.
    """
    for message in raw:
        if not isinstance(message, dict):
            continue
        if _named(message.get("role"), OPENAI_ONLY_ROLES) or OPENAI_ONLY_KEYS & message.keys():
            return "openai"
        if message.get("role") == "assistant" and message.get("content", "") is None:
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(p, dict) and _named(p.get("type"), OPENAI_ONLY_PARTS) for p in content
        ):
            return "openai"
    return "anthropic"


def _parts_to_blocks(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text parts are text blocks as they are; any other part is kept as an unknown block."""
    return list(parts)


def _extra(raw: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in known}


def _with_note(note: dict[str, Any]) -> dict[str, Any]:
    return {BOOKKEEPING: note} if note else {}


def _tool_result(raw: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {"type": "tool_result", "tool_use_id": raw["tool_call_id"]}
    if "content" in raw:
        content = raw["content"]
        fields["content"] = _parts_to_blocks(content) if isinstance(content, list) else content
    extra = _extra(raw, frozenset({"role", "content", "tool_call_id"}))
    return fields | _with_note({"extra": extra} if extra else {})


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    function = call["function"]
    try:
        parsed = json.loads(function["arguments"])
    except ValueError:
        parsed = None
    return {
        "type": "tool_use",
        "id": call["id"],
        "name": function["name"],
        "input": parsed if isinstance(parsed, dict) else {},
        BOOKKEEPING: {"call": call},
    }


def _content_kind(raw: dict[str, Any]) -> str:
    if "content" not in raw:
        return "absent"
    content = raw["content"]
    if content is None:
        return "null"
    return "parts" if isinstance(content, list) else "string"


def _assistant(raw: dict[str, Any]) -> Message:
    kind = _content_kind(raw)
    content: Any = raw.get("content")
    calls = raw.get("tool_calls")
    note: dict[str, Any] = {}
    extra = _extra(raw, frozenset({"role", "content", "tool_calls"}))
    if extra:
        note["extra"] = extra
    if calls is not None:
        note["tool_calls"] = True
    blocks: list[Any] = []
    if kind == "parts":
        blocks = _parts_to_blocks(content)
    elif kind == "string" and (content or not calls):
        blocks = [{"type": "text", "text": content}]
    blocks += [_tool_use(c) for c in calls or ()]
    if kind == "string" and calls is None:
        body: str | list[Any] = content
    else:
        body = blocks
        note["content"] = kind
    return Message.model_validate({"role": "assistant", "content": body} | _with_note(note))


def _plain(raw: dict[str, Any]) -> Message:
    role = raw["role"]
    note: dict[str, Any] = {}
    if role == "developer":
        note["role"] = "developer"
    extra = _extra(raw, _BASE_KEYS)
    if extra:
        note["extra"] = extra
    content = raw["content"]
    body = _parts_to_blocks(content) if isinstance(content, list) else content
    internal_role = "system" if role == "developer" else role
    return Message.model_validate({"role": internal_role, "content": body} | _with_note(note))


def _joined_user_blocks(raw: dict[str, Any]) -> list[dict[str, Any]]:
    content = raw["content"]
    note: dict[str, Any] = {"content": "parts" if isinstance(content, list) else "string"}
    extra = _extra(raw, _BASE_KEYS)
    if extra:
        note["extra"] = extra
    blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": content}]
    first = blocks[0]
    return [first | {BOOKKEEPING: {"user": note}}, *blocks[1:]]


def from_openai(raw: Sequence[dict[str, Any]]) -> list[Message]:
    """Canonical messages of an OpenAI conversation (validate with `OpenAIMessage` first)."""
    messages: list[Message] = []
    results: list[dict[str, Any]] = []
    for item in raw:
        if item["role"] == "tool":
            results.append(_tool_result(item))
            continue
        if results and item["role"] == "user" and item["content"] not in ("", []):
            results.extend(_joined_user_blocks(item))
            messages.append(Message.model_validate({"role": "user", "content": results}))
            results = []
            continue
        if results:
            messages.append(Message.model_validate({"role": "user", "content": results}))
            results = []
        messages.append(_assistant(item) if item["role"] == "assistant" else _plain(item))
    if results:
        messages.append(Message.model_validate({"role": "user", "content": results}))
    return messages


def _note(model: BaseModel) -> dict[str, Any]:
    note = (model.model_extra or {}).get(BOOKKEEPING)
    return note if isinstance(note, dict) else {}


def _extra_of(note: dict[str, Any]) -> dict[str, Any]:
    extra = note.get("extra")
    return dict(extra) if isinstance(extra, dict) else {}


def _dump(model: BaseModel) -> dict[str, Any]:
    data = model.model_dump(mode="json", exclude_unset=True)
    data.pop(BOOKKEEPING, None)
    return data


def _blocks_to_parts(blocks: Sequence[Any]) -> list[dict[str, Any]]:
    return [_dump(b) for b in blocks]


def _tool_message(block: ToolResultBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool", "tool_call_id": block.tool_use_id}
    if "content" in block.model_fields_set:
        content = block.content
        out["content"] = _blocks_to_parts(content) if isinstance(content, list) else content
    return out | _extra_of(_note(block))


def _tool_call(block: ToolUseBlock) -> dict[str, Any]:
    call = _note(block).get("call")
    if isinstance(call, dict):
        return dict(call)
    arguments = json.dumps(block.input, ensure_ascii=False)
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": arguments},
    }


def _assistant_to_openai(message: Message, note: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant"}
    if isinstance(message.content, str):
        out["content"] = message.content
        return out | _extra_of(note)
    calls = [_tool_call(b) for b in message.content if isinstance(b, ToolUseBlock)]
    others = [b for b in message.content if not isinstance(b, ToolUseBlock)]
    kind = note.get("content")
    if kind == "null":
        out["content"] = None
    elif kind == "parts":
        out["content"] = _blocks_to_parts(others)
    elif kind == "string" or (
        kind is None and all(isinstance(b, TextBlock) for b in others) and others
    ):
        out["content"] = "\n".join(b.text for b in others if isinstance(b, TextBlock))
    elif kind is None:
        out["content"] = _blocks_to_parts(others) if others else None
    if calls or note.get("tool_calls"):
        out["tool_calls"] = calls
    return out | _extra_of(note)


def _message_extra(message: Message) -> dict[str, Any]:
    data = _dump(message)
    return {k: v for k, v in data.items() if k not in _BASE_KEYS}


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions messages; the exact inverse of `from_openai`."""
    out: list[dict[str, Any]] = []
    for message in messages:
        note = _note(message)
        extra = _extra_of(note) | _message_extra(message)
        if message.role == "assistant":
            out.append(_assistant_to_openai(message, note | {"extra": extra}))
            continue
        if message.role == "user" and not isinstance(message.content, str):
            results = [b for b in message.content if isinstance(b, ToolResultBlock)]
            out.extend(_tool_message(b) for b in results)
            rest = [b for b in message.content if not isinstance(b, ToolResultBlock)]
            if results and not rest:
                continue
            joined = _note(rest[0]).get("user", {}) if rest else {}
            body: str | list[dict[str, Any]] = _blocks_to_parts(rest)
            if joined.get("content") == "string" and isinstance(rest[0], TextBlock):
                body = rest[0].text
            out.append({"role": "user", "content": body} | extra | _extra_of(joined))
            continue
        content = message.content
        plain = content if isinstance(content, str) else _blocks_to_parts(content)
        out.append({"role": note.get("role", message.role), "content": plain} | extra)
    return out


def to_anthropic(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Anthropic-shaped JSON of canonical messages, without the OpenAI bookkeeping."""
    return [_strip(m.model_dump(mode="json", exclude_unset=True)) for m in messages]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != BOOKKEEPING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def dump_as(messages: Sequence[Message], fmt: Format) -> list[dict[str, Any]]:
    """Messages as JSON in the given format (Anthropic's keeps fields exactly as sent)."""
    if fmt == "openai":
        return to_openai(messages)
    return [m.model_dump(mode="json", exclude_unset=True) for m in messages]


_ANTHROPIC = TypeAdapter(list[Message])
_OPENAI = TypeAdapter(list[OpenAIMessage])


def parse_messages(raw: Sequence[dict[str, Any]], fmt: Format) -> list[Message]:
    """Canonical messages from JSON messages in `fmt`; pydantic's `ValidationError`, located
    inside the list (`3.role`), when they do not fit that format's schema."""
    if fmt == "openai":
        _OPENAI.validate_python(raw)
        return from_openai(raw)
    return _ANTHROPIC.validate_python(raw)
