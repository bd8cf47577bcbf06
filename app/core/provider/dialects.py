"""Message dialects: the OpenAI Chat Completions shape in and out of the canonical model.

The pipeline works on one shape (`app.core.messages`, Anthropic's). An OpenAI conversation
is converted in with `from_openai` and back with `to_openai`, and the trip is exact:
`to_openai(from_openai(raw)) == raw` for every conversation `OpenAIMessage` accepts, except
where Anthropic blocks or our bookkeeping key are sent as parts. So a request's messages are
their own OpenAI form: `OpenAIForms` hands them back as sent and converts only the rest,
each message once.

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
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, model_validator

from app.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    dump_message,
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
    # `tool_calls: null` says nothing the canonical model holds: it rides along as sent.
    read = {"role", "content"} if calls is None else {"role", "content", "tool_calls"}
    extra = _extra(raw, frozenset(read))
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


def _tool_run(run: Sequence[dict[str, Any]], user: dict[str, Any] | None = None) -> Message:
    blocks = [_tool_result(item) for item in run]
    if user is not None:
        blocks.extend(_joined_user_blocks(user))
    return Message.model_validate({"role": "user", "content": blocks})


def _read(raw: Sequence[dict[str, Any]]) -> Iterator[tuple[Message, list[dict[str, Any]]]]:
    """Each canonical message with the items of `raw` it is read from, in order."""
    run: list[dict[str, Any]] = []
    for item in raw:
        if item["role"] == "tool":
            run.append(item)
            continue
        if run and item["role"] == "user" and item["content"] not in ("", []):
            yield _tool_run(run, item), [*run, item]
            run = []
            continue
        if run:
            yield _tool_run(run), run
            run = []
        yield (_assistant(item) if item["role"] == "assistant" else _plain(item)), [item]
    if run:
        yield _tool_run(run), run


def from_openai(raw: Sequence[dict[str, Any]]) -> list[Message]:
    """Canonical messages of an OpenAI conversation (validate with `OpenAIMessage` first)."""
    return [message for message, _ in _read(raw)]


def _note(model: BaseModel) -> dict[str, Any]:
    note = (model.model_extra or {}).get(BOOKKEEPING)
    return note if isinstance(note, dict) else {}


def _extra_of(note: dict[str, Any]) -> dict[str, Any]:
    extra = note.get("extra")
    return dict(extra) if isinstance(extra, dict) else {}


def _dump(model: BaseModel) -> dict[str, Any]:
    data = model.model_dump(exclude_unset=True)  # numbers kept as sent stay so
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


def message_to_openai(message: Message) -> list[dict[str, Any]]:
    """One canonical message as OpenAI messages: a user message of tool results is one tool
    message per result (then the user message of its other blocks, if any)."""
    note = _note(message)
    extra = _extra_of(note) | _message_extra(message)
    if message.role == "assistant":
        return [_assistant_to_openai(message, note | {"extra": extra})]
    if message.role == "user" and not isinstance(message.content, str):
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        out = [_tool_message(b) for b in results]
        rest = [b for b in message.content if not isinstance(b, ToolResultBlock)]
        if results and not rest:
            return out
        joined = _note(rest[0]).get("user", {}) if rest else {}
        body: str | list[dict[str, Any]] = _blocks_to_parts(rest)
        if joined.get("content") == "string" and isinstance(rest[0], TextBlock):
            body = rest[0].text
        return [*out, {"role": "user", "content": body} | extra | _extra_of(joined)]
    content = message.content
    plain = content if isinstance(content, str) else _blocks_to_parts(content)
    return [{"role": note.get("role", message.role), "content": plain} | extra]


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions messages; the exact inverse of `from_openai`."""
    return [item for message in messages for item in message_to_openai(message)]


def to_anthropic(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Anthropic-shaped JSON of canonical messages, without the OpenAI bookkeeping."""
    return [_strip(dump_message(m)) for m in messages]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != BOOKKEEPING}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


class OpenAIForms:
    """Each canonical message's OpenAI JSON, computed at most once for a request.

    An OpenAI request's messages are their own OpenAI form: `read` keeps, for each
    canonical message, the items it was read from, so the input check, the archive, a
    job's hashes and an unchanged answer use what was sent instead of converting it back.
    A message built later (a summary, a restored file, a pruned copy) is converted the
    first time it is asked for. An item reused keeps its keys in the order sent. Keyed by
    identity: each message is held with its form, so its id cannot be reused by another
    object while the request lives."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Message, list[dict[str, Any]]]] = {}

    def read(self, raw: Sequence[dict[str, Any]]) -> list[Message]:
        """`from_openai(raw)`, each message remembered with the items it came from."""
        messages: list[Message] = []
        for message, items in _read(raw):
            messages.append(message)
            if all(map(_as_sent, items)):
                self._known[id(message)] = (message, items)
        return messages

    def of(self, message: Message) -> list[dict[str, Any]]:
        known = self._known.get(id(message))
        if known is None:
            known = self._known[id(message)] = (message, message_to_openai(message))
        return known[1]

    def dump(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """`to_openai(messages)`, each message's part computed at most once."""
        return [item for message in messages for item in self.of(message)]


def _as_sent(item: dict[str, Any]) -> bool:
    """Whether `to_openai` gives the item back exactly as it is (`==`). Not when the
    canonical model reads a part as one of its own blocks (a `tool_use` or `tool_result`
    part is moved or re-typed) or when a part carries the bookkeeping key (dropped): those
    are converted like any other."""
    content = item.get("content")
    return not (isinstance(content, list) and any(map(_rewritten, content)))


def _rewritten(part: Any) -> bool:
    if not isinstance(part, dict):
        return True
    return part.get("type") in ("tool_use", "tool_result") or BOOKKEEPING in part


def dump_as(
    messages: Sequence[Message], fmt: Format, forms: OpenAIForms | None = None
) -> list[dict[str, Any]]:
    """Messages as JSON in the given format (Anthropic's keeps fields exactly as sent);
    OpenAI's from the request's `forms` when given."""
    if fmt == "openai":
        return forms.dump(messages) if forms is not None else to_openai(messages)
    return [dump_message(m) for m in messages]


_ANTHROPIC = TypeAdapter(list[Message])
_OPENAI = TypeAdapter(list[OpenAIMessage])


def parse_messages(
    raw: Sequence[dict[str, Any]], fmt: Format, forms: OpenAIForms | None = None
) -> list[Message]:
    """Canonical messages from JSON messages in `fmt`; pydantic's `ValidationError`, located
    inside the list (`3.role`), when they do not fit that format's schema. An OpenAI
    conversation's messages are remembered in `forms` with the items they came from."""
    if fmt == "openai":
        _OPENAI.validate_python(raw)
        return forms.read(raw) if forms is not None else from_openai(raw)
    return _ANTHROPIC.validate_python(raw)
