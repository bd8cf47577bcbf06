"""A proxied request's conversation as the compactor reads it, and the body to send with
the conversation it chose.

Anthropic Messages and OpenAI Chat bodies hold their messages in `messages`, which the
compactor reads as they are. A Responses body holds its conversation in `input` as items
(`message`, `function_call`, `function_call_output`, `reasoning`, ...): it is read with
the Responses dialect the `/compact` route uses (`app.core.provider.responses`), each
canonical message grouping the items it came from (a call's arguments, the reasoning
before it, its output in the next user message), and written back with the same dialect,
so an item nothing changed goes back as it was sent. Cuts then fall between canonical
messages only: never between a `function_call` and its output, nor between a reasoning
item and the item that follows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson

from app.core.messages import Message, dump_message
from app.core.provider import (
    BOOKKEEPING,
    MEDIA_PLACEHOLDER,
    media_tokens,
    message_to_responses,
    read_items,
)

Shape = Literal["messages", "input"]
JsonDict = dict[str, Any]
RESPONSES_PATH = "/v1/responses"


def conversation(path: str, body: Mapping[str, Any]) -> tuple[list[JsonDict], Shape] | None:
    """The messages the compactor reads in `body`, and where they came from; None when
    the body holds no conversation. A Responses `input` that is a string is one user
    message, as the `/compact` route reads it (the body goes as sent while it is one)."""
    if path == RESPONSES_PATH:
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            return None
        return [dump_message(m) for m, _ in read_items(items)], "input"
    messages = body.get("messages")
    return (messages, "messages") if isinstance(messages, list) else None


def with_conversation(
    body: Mapping[str, Any], shape: Shape, messages: Sequence[JsonDict]
) -> JsonDict:
    """`body` with `messages` in its conversation's place, every other field as sent."""
    if shape == "messages":
        return {**body, "messages": list(messages)}
    return {**body, "input": input_items(messages)}


def input_items(messages: Sequence[JsonDict]) -> list[JsonDict]:
    """Canonical messages (read by `conversation`, or made by a compaction) as `input`
    items."""
    return [i for m in messages for i in message_to_responses(Message.model_validate(m))]


# Where a message's JSON may hold a media block (`media_tokens`), read only then.
_MEDIA_MARKS = (b'"image', b'"document"', b'"file"', b'"input_file"', b'"input_image"')
_PAYLOAD_CHARS = 256  # a media block's strings past this are its payload (base64, data URLs)


def counted_json(shape: Shape, message: Mapping[str, Any]) -> tuple[str, int]:
    """What our count reads of one message: its JSON, without the dialect's note of the
    items it came from (which repeats its text for the trip back), and the tokens of its
    media. A media block's payload is left out of the JSON for what its provider bills it
    (`media_tokens`): the tokens of a screenshot's base64 are a hundred times those."""
    value = _unnoted(message) if shape == "input" else message
    dumped = orjson.dumps(value)
    if not any(mark in dumped for mark in _MEDIA_MARKS):
        return dumped.decode(), 0
    media: list[int] = []
    return orjson.dumps(_without_media(value, media)).decode(), sum(media)


def _without_media(message: Mapping[str, Any], media: list[int]) -> Mapping[str, Any]:
    """`message` with its content's media blocks (a tool result's too) left out, their
    tokens in `media`. Only content blocks are read: a call's arguments may say `"type":
    "file"` of anything."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks: list[Any] = []
    for block in content:
        tokens = media_tokens(block) if isinstance(block, Mapping) else None
        if tokens is not None:
            media.append(tokens)
            blocks.append(_payload_left_out(block))
        elif isinstance(block, Mapping) and isinstance(block.get("content"), list):
            blocks.append(_without_media(block, media))
        else:
            blocks.append(block)
    return {**message, "content": blocks}


def _payload_left_out(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _PAYLOAD_CHARS:
        return MEDIA_PLACEHOLDER
    if isinstance(value, Mapping):
        return {k: _payload_left_out(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_payload_left_out(v) for v in value]
    return value


def _unnoted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _unnoted(v) for k, v in value.items() if k != BOOKKEEPING}
    if isinstance(value, list):
        return [_unnoted(v) for v in value]
    return value
