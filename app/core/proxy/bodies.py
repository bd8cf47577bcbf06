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
from app.core.provider import BOOKKEEPING, message_to_responses, read_items

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


def counted_json(shape: Shape, message: Mapping[str, Any]) -> str:
    """What our count reads of one message: its JSON, without the dialect's note of the
    items it came from (which repeats its text for the trip back)."""
    return orjson.dumps(_unnoted(message) if shape == "input" else message).decode()


def _unnoted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _unnoted(v) for k, v in value.items() if k != BOOKKEEPING}
    if isinstance(value, list):
        return [_unnoted(v) for v in value]
    return value
