"""The OpenAI Responses API's `input` items in and out of the canonical model.

A Responses request carries its conversation as `input`: typed items instead of role
messages. Read into the canonical (Anthropic) shape, a turn is what the pipeline already
knows how to keep, cut and summarize:

    message (user)             a user message; `input_text` parts are text blocks, other
                               parts (`input_image`, `input_file`, ...) kept verbatim
    message (system/developer) a system message (`developer` noted)
    message (assistant), reasoning, *_call, and any other item the model produced
                               one assistant message per run of them, in order: its text,
                               its tool calls (`call_id`, `name`, the parsed `arguments`)
                               and its reasoning items (verbatim blocks: `encrypted_content`
                               travels with the calls it came with)
    *_call_output              a run of them is one user message of tool results; a user
                               message right after the run joins it (as Chat tool runs do)

Each item read keeps its JSON under the dialect's bookkeeping key (counting never reads
it), so a message whose blocks are unchanged comes back item for item as sent, and one
that a strategy changed (a cleared output, a cut call) comes back as the same item with
that field replaced. A message built later (the summary, a restored file, `Continue.`)
becomes a plain role message (`{"role": "user", "content": "..."}`), which the API takes.
`OpenAIForms` read with the `RESPONSES` dialect remembers each message's items, as it
does for Chat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from app.core.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.core.provider.dialects import BOOKKEEPING, Dialect

Item = dict[str, Any]
ROLES = frozenset({"user", "assistant", "system", "developer"})
TEXT_PARTS = frozenset({"input_text", "output_text"})
PARTS = frozenset({*TEXT_PARTS, "input_image", "input_file"})
# Item types only the Responses API has: a list holding one is in its shape.
ITEM_TYPES = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "item_reference"}
)


class ResponsesItem(BaseModel):
    """One `input` item, validated for what the service reads (extra fields allowed)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: str | None = None
    role: str | None = None
    content: str | list[dict[str, Any]] | None = None
    call_id: str | None = None

    @model_validator(mode="after")
    def _item_rules(self) -> ResponsesItem:
        kind = self.type or ("message" if self.role is not None else None)
        if kind == "message":
            if self.role not in ROLES:
                raise ValueError(f"a message's `role` is one of {', '.join(sorted(ROLES))}")
            if self.content is None:
                raise ValueError("a message needs `content`")
        elif kind is None and "id" not in (self.model_extra or {}):
            raise ValueError("an item needs a `type`, or a `role` (a message)")
        if _is_call(kind) and self.call_id is None:
            raise ValueError(f"a {kind} item needs `call_id`")
        if _is_output(kind) and self.call_id is None:
            raise ValueError(f"a {kind} item needs `call_id`")
        if kind == "function_call":
            extra = self.model_extra or {}
            if not isinstance(extra.get("name"), str) or not isinstance(
                extra.get("arguments"), str
            ):
                raise ValueError("a function_call needs `name` and `arguments` (a string)")
        return self


def _kind(item: Item) -> str:
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else "item_reference"


def _is_output(kind: str | None) -> bool:
    return kind is not None and kind.endswith("_call_output")


def _is_call(kind: str | None) -> bool:
    return kind is not None and kind.endswith("_call") and kind != "image_generation_call"


def is_responses_list(raw: Sequence[Any]) -> bool:
    """Whether a list is Responses input: an item typed as only that API types them, or a
    content part only it has (`input_text`, `input_image`, ...)."""
    return any(isinstance(item, dict) and _responses_only(item) for item in raw)


def _responses_only(item: Item) -> bool:
    kind = item.get("type")
    if isinstance(kind, str) and (kind in ITEM_TYPES or _is_output(kind)):
        return True
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and isinstance(p.get("type"), str) and p["type"] in PARTS
        for p in content
    )


def _side(item: Item) -> str:
    """Which canonical message an item belongs to: `user`, `system`, `output`, `assistant`."""
    kind = _kind(item)
    if kind == "message":
        role = item.get("role")
        return "system" if role in ("system", "developer") else str(role)
    return "output" if _is_output(kind) else "assistant"


def _note(raw: Any) -> dict[str, Any]:
    return {BOOKKEEPING: raw}


def _text_block(text: str, note: Any) -> Item:
    return {"type": "text", "text": text, **_note(note)}


def _part_blocks(content: Any) -> list[Item]:
    """A message's parts as blocks: text parts as text blocks (noting the part), others as
    they are."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [
        _text_block(str(p.get("text", "")), {"part": p})
        if p.get("type") in TEXT_PARTS and isinstance(p.get("text"), str)
        else p
        for p in content
    ]


def _assistant_blocks(item: Item) -> list[Item]:
    kind = _kind(item)
    if kind == "message":
        content = item.get("content")
        parts = [content] if isinstance(content, str) else content or []
        text = "".join(
            p if isinstance(p, str) else str(p.get("text", ""))
            for p in parts
            if isinstance(p, str) or p.get("type") in TEXT_PARTS
        )
        return [_text_block(text, {"item": item})]
    if _is_call(kind) and isinstance(item.get("call_id"), str):
        return [
            {
                "type": "tool_use",
                "id": item["call_id"],
                "name": str(item.get("name") or kind),
                "input": _arguments(item),
                **_note({"item": item}),
            }
        ]
    return [item if isinstance(item.get("type"), str) else {"type": kind, **_note({"item": item})}]


def _arguments(item: Item) -> dict[str, Any]:
    raw = item.get("arguments", item.get("input"))
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {}


def _output_block(item: Item) -> Item:
    output = item.get("output")
    content: Any = output if isinstance(output, (str, list)) else None
    if isinstance(output, dict) and isinstance(output.get("type"), str):
        content = [output]
    block: Item = {"type": "tool_result", "tool_use_id": item["call_id"], **_note({"item": item})}
    return block if content is None else block | {"content": content}


def _message(role: str, blocks: list[Item], note: dict[str, Any] | None = None) -> Message:
    return Message.model_validate(
        {"role": role, "content": blocks, **(_note(note) if note else {})}
    )


def read_items(raw: Sequence[Item]) -> Iterator[tuple[Message, list[Item]]]:
    """Each canonical message with the items it is read from, in order."""
    at = 0
    while at < len(raw):
        side = _side(raw[at])
        end = at + 1
        while end < len(raw) and side in ("output", "assistant") and _side(raw[end]) == side:
            end += 1
        run = list(raw[at:end])
        if side == "assistant":
            yield _message("assistant", [b for i in run for b in _assistant_blocks(i)]), run
        elif side == "output":
            blocks = [_output_block(i) for i in run]
            if end < len(raw) and _side(raw[end]) == "user" and raw[end].get("content"):
                user = raw[end]
                own = _part_blocks(user.get("content"))
                note = own[0].get(BOOKKEEPING)
                own[0] = own[0] | _note((note if isinstance(note, dict) else {}) | {"user": user})
                blocks += own
                run.append(user)
                end += 1
            yield _message("user", blocks), run
        else:
            item = run[0]
            role = "system" if side == "system" else "user"
            yield _message(role, _part_blocks(item.get("content")), {"item": item}), run
        at = end


def from_responses(raw: Sequence[Item]) -> list[Message]:
    return [message for message, _ in read_items(raw)]


def _noted(value: BaseModel) -> dict[str, Any]:
    note = (value.model_extra or {}).get(BOOKKEEPING)
    return note if isinstance(note, dict) else {}


def _plain(block: ContentBlock) -> Item:
    data = block.model_dump(exclude_unset=True)
    data.pop(BOOKKEEPING, None)
    return data


def _part(block: ContentBlock) -> Item:
    """A block as a Responses content part: a text block as the part it was read from (or
    `input_text`), any other block as it is."""
    if isinstance(block, TextBlock):
        part = _noted(block).get("part")
        base = part if isinstance(part, dict) else {"type": "input_text"}
        return base | {"text": block.text}
    return _plain(block)


def _role_item(role: str, blocks: Sequence[ContentBlock], sent: Any) -> Item:
    """A role message: the item it was read from with its content as it is now."""
    content: Any = [_part(b) for b in blocks]
    original = sent.get("content") if isinstance(sent, dict) else None
    if isinstance(original, str) or (not isinstance(sent, dict) and _all_plain_text(blocks)):
        content = "".join(b.text for b in blocks if isinstance(b, TextBlock))
    if isinstance(sent, dict):
        return sent if sent.get("content") == content else sent | {"content": content}
    return {"role": role, "content": content}


def _all_plain_text(blocks: Sequence[ContentBlock]) -> bool:
    return all(isinstance(b, TextBlock) and not _noted(b) for b in blocks)


def _call_item(block: ToolUseBlock) -> Item:
    item = _noted(block).get("item")
    if not isinstance(item, dict):
        arguments = json.dumps(block.input, ensure_ascii=False)
        return {
            "type": "function_call",
            "call_id": block.id,
            "name": block.name,
            "arguments": arguments,
        }
    if _arguments(item) == block.input:
        return item
    field = "arguments" if "arguments" in item or "input" not in item else "input"
    value = json.dumps(block.input, ensure_ascii=False)
    return item | {field: value if isinstance(item.get(field, ""), str) else block.input}


def _output_item(block: ToolResultBlock) -> Item:
    item = _noted(block).get("item")
    content: Any = block.content
    if isinstance(content, list):
        content = [_plain(b) for b in content]
    if not isinstance(item, dict):
        output = content if content is not None else ""
        return {"type": "function_call_output", "call_id": block.tool_use_id, "output": output}
    if _output_block(item).get("content") == content:
        return item
    return item | {"output": content if content is not None else ""}


def _assistant_items(message: Message) -> list[Item]:
    if isinstance(message.content, str):
        return [{"role": "assistant", "content": message.content}]
    items: list[Item] = []
    for block in message.content:
        item = _noted(block).get("item")
        if isinstance(block, ToolUseBlock):
            items.append(_call_item(block))
        elif isinstance(block, TextBlock) and isinstance(item, dict):
            items.append(_assistant_text(item, block.text))
        elif isinstance(block, TextBlock):
            items.append({"role": "assistant", "content": block.text})
        else:
            items.append(item if isinstance(item, dict) else _plain(block))
    return items


def _assistant_text(item: Item, text: str) -> Item:
    if _assistant_blocks(item)[0]["text"] == text:
        return item
    if isinstance(item.get("content"), str):
        return item | {"content": text}
    return item | {"content": [{"type": "output_text", "text": text, "annotations": []}]}


def message_to_responses(message: Message) -> list[Item]:
    """One canonical message as `input` items."""
    if message.role == "assistant":
        return _assistant_items(message)
    sent = _noted(message).get("item")
    blocks = list(message.blocks())
    if message.role == "system":
        role = sent.get("role") if isinstance(sent, dict) else "system"
        return [_role_item(str(role), blocks, sent)]
    outputs = [_output_item(b) for b in blocks if isinstance(b, ToolResultBlock)]
    own = [b for b in blocks if not isinstance(b, ToolResultBlock)]
    if not own:
        return outputs
    joined = _noted(own[0]).get("user")
    if isinstance(joined, dict):
        sent = joined
    if isinstance(message.content, str):
        return [
            *outputs,
            sent if isinstance(sent, dict) else {"role": "user", "content": message.content},
        ]
    return [*outputs, _role_item("user", own, sent)]


def to_responses(messages: Sequence[Message]) -> list[Item]:
    return [item for message in messages for item in message_to_responses(message)]


class _Responses:
    """The Responses dialect of `OpenAIForms` (`forms.read(raw, RESPONSES)`)."""

    def items(self, raw: Sequence[Item]) -> Iterator[tuple[Message, list[Item]]]:
        return read_items(raw)

    def convert(self, message: Message) -> list[Item]:
        return message_to_responses(message)

    def as_sent(self, item: Item) -> bool:
        content = item.get("content")
        return not (isinstance(content, list) and any(BOOKKEEPING in p for p in content))


RESPONSES: Dialect = _Responses()
