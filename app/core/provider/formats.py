"""A message list in any of the three formats the API takes: which one it is, its
canonical messages, and its JSON in that format again.

    anthropic   Anthropic Messages: the canonical shape itself (`app.core.messages`)
    openai      OpenAI Chat Completions (`dialects`)
    responses   the OpenAI Responses API's `input` items (`responses`)

An OpenAI request's messages are remembered in the request's `forms` with the items they
were read from, so what is handed back unchanged is what was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from app.core.messages import Message, dump_message
from app.core.provider.dialects import OpenAIForms, OpenAIMessage, from_openai, to_openai
from app.core.provider.dialects import detect_format as chat_or_anthropic
from app.core.provider.responses import RESPONSES, ResponsesItem, is_responses_list, to_responses
from app.core.vocabulary import Format

_ANTHROPIC = TypeAdapter(list[Message])
_OPENAI = TypeAdapter(list[OpenAIMessage])
_RESPONSES = TypeAdapter(list[ResponsesItem])


def detect_format(raw: Sequence[Any]) -> Format:
    """`responses` when an item is typed as only that API types them, else `openai` when
    any message uses something only Chat has, else `anthropic`."""
    return "responses" if is_responses_list(raw) else chat_or_anthropic(raw)


def forms_for(fmt: Format) -> OpenAIForms:
    """Empty forms that convert in `fmt`'s dialect (a stored request run again)."""
    return OpenAIForms(RESPONSES if fmt == "responses" else None)


def dump_as(
    messages: Sequence[Message], fmt: Format, forms: OpenAIForms | None = None
) -> list[dict[str, Any]]:
    """Messages as JSON in the given format (Anthropic's keeps fields exactly as sent);
    an OpenAI format's from the request's `forms` when given."""
    if fmt == "anthropic":
        return [dump_message(m) for m in messages]
    if forms is not None:
        return forms.dump(messages)
    return to_openai(messages) if fmt == "openai" else to_responses(messages)


def parse_messages(
    raw: Sequence[dict[str, Any]], fmt: Format, forms: OpenAIForms | None = None
) -> list[Message]:
    """Canonical messages from JSON messages in `fmt`; pydantic's `ValidationError`, located
    inside the list (`3.role`), when they do not fit that format's schema. An OpenAI
    format's messages are remembered in `forms` with the items they came from."""
    if fmt == "anthropic":
        return _ANTHROPIC.validate_python(raw)
    if fmt == "openai":
        _OPENAI.validate_python(raw)
        return forms.read(raw) if forms is not None else from_openai(raw)
    _RESPONSES.validate_python(raw)
    return (forms or OpenAIForms()).read(raw, RESPONSES)
