"""The input of `context-compact count` and `context-compact compact`, read as the API reads
a body; each command runs in its own module (`app.cli.count`, `app.cli.compact`) and
imports only what it needs, so that `count` loads a tokenizer and nothing of the pipeline.

The input is a message list as a JSON list, a JSON object with `messages` (a `/compact`
or `/count` body, or a corpus file), or JSONL with one message a line; from a file or
stdin. Request fields found in an object (`format`, `session_id`, `force`,
`instructions`, `options`, `reason`, `tokenizer`, and a provider request's own: `model`,
`system`, `tools`, `max_tokens`, ...) are used, and the flags override them; any other
key (a corpus file's `source`) is ignored. The output is the JSON the HTTP API answers.

A `--format` that the messages contradict is refused, not converted: OpenAI-only roles,
keys or parts under `anthropic`, Anthropic-only blocks (`tool_use`, `tool_result`,
`thinking`, ...) under `openai`, whether the format came from the flag or the file.

Bad input raises `InputError` with a message naming the problem the way the API's 422
does (`messages[3].role: ...`); `__main__` prints it and exits 2. The commands call the
service layer directly: no route function, no web framework exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.api.fields import validation_details
from app.api.provider import PROVIDER_FIELDS
from app.api.text import NOT_TEXT, unencodable_at
from app.core.json_numbers import MAX_NUMBER_CHARS, NumberTooLongError, loads_keeping_literals
from app.core.messages import KNOWN_BLOCK_TYPES, Message
from app.core.provider import OpenAIForms, detect_format, parse_messages
from app.core.vocabulary import Format

# The provider request's own fields: an SDK's whole request body is read as the API reads it.
REQUEST_FIELDS = ("model", "system", "tools", *sorted(PROVIDER_FIELDS))
# Block types only the Anthropic shape has (`text` is in both).
ANTHROPIC_ONLY_BLOCKS = KNOWN_BLOCK_TYPES - {"text"}
SHAPES = "a JSON list of messages, a JSON object with `messages`, or JSONL (a message a line)"

_M = TypeVar("_M", bound=BaseModel)


class InputError(Exception):
    """The input cannot be read as a request; the message says where and why."""


@dataclass(frozen=True)
class Answer:
    """The JSON the API would answer, and a note for the person at the terminal."""

    json: Any
    note: str | None = None


def parse_input(text: str) -> dict[str, Any]:
    """The request fields of the input: `messages` always, plus any others it holds. A
    lone surrogate escape is refused as the API refuses it."""
    fields = _parse_input(text)
    refused = unencodable_at(fields)
    if refused is not None:
        raise InputError(f"{refused}: {NOT_TEXT}")
    return fields


def _parse_input(text: str) -> dict[str, Any]:
    if not text.strip():
        raise InputError(f"no input: expected {SHAPES}")
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":  # JSONL reads as one value followed by more
            raise InputError(f"invalid JSON: {exc}") from None
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        return {"messages": _jsonl_messages(lines)}
    if isinstance(value, list):
        return {"messages": value}
    if isinstance(value, dict) and "messages" in value:
        return value
    if isinstance(value, dict) and "role" in value:
        return {"messages": [value]}  # JSONL of one line
    raise InputError(f"expected {SHAPES}")


def _loads(text: str) -> Any:
    """JSON with its numbers as sent, as the API reads a body (app/core/json_numbers.py)."""
    try:
        return loads_keeping_literals(text, MAX_NUMBER_CHARS)
    except NumberTooLongError as exc:
        raise InputError(f"{exc.path}: {exc}") from None


def _jsonl_messages(lines: Sequence[tuple[int, str]]) -> list[Any]:
    messages = []
    for number, line in lines:
        try:
            message = _loads(line)
        except InputError as exc:
            raise InputError(f"line {number}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"line {number}: invalid JSON: {exc}") from None
        if not isinstance(message, dict):
            raise InputError(f"line {number}: expected a JSON object (one message a line)")
        messages.append(message)
    return messages


def request_fields(
    data: Mapping[str, Any], fields: Sequence[str], overrides: Mapping[str, Any]
) -> dict[str, Any]:
    """`messages` and the input's own values of `fields`, in the input's order (a provider
    request comes back in it), then the flags that were given."""
    chosen = {k: v for k, v in data.items() if k == "messages" or k in fields}
    chosen.update({k: v for k, v in overrides.items() if v is not None})
    return chosen


def asked(overrides: Mapping[str, Any]) -> str:
    """Where the format came from, for a refusal."""
    return "--format" if overrides.get("format") is not None else "the file's `format`"


def read_messages(
    raw: Sequence[dict[str, Any]],
    requested: str,
    asked: str = "--format",
    forms: OpenAIForms | None = None,
) -> tuple[list[Message], Format]:
    """Canonical messages in the requested format; a format the messages contradict is
    refused (the API reads them as asked; at a terminal it is a mistake to point out).
    OpenAI messages are remembered in `forms` with the items they were read from."""
    detected = detect_format(raw)
    if requested == "anthropic" and detected == "openai":
        raise InputError(
            f"{asked} anthropic, but the messages are in the OpenAI Chat Completions shape "
            "(a tool or developer role, `tool_calls`, `tool_call_id` or an OpenAI-only "
            "content part); use --format openai or auto"
        )
    if requested == "openai":
        found = _anthropic_only_block(raw)
        if found is not None:
            raise InputError(
                f"{asked} openai, but {found} is an Anthropic Messages block; "
                "use --format anthropic or auto"
            )
    fmt: Format = "openai" if requested == "openai" else "anthropic"
    if requested == "auto":
        fmt = detected
    try:
        return parse_messages(raw, fmt, forms), fmt
    except ValidationError as exc:
        located = [{**e, "loc": ("messages", *e["loc"])} for e in exc.errors()]
        raise input_error(located) from None


def _anthropic_only_block(raw: Sequence[Any]) -> str | None:
    """`messages[i].content[j] (tool_use)` for the first Anthropic-only block, or None."""
    for i, message in enumerate(raw):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if isinstance(kind, str) and kind in ANTHROPIC_ONLY_BLOCKS:
                return f"messages[{i}].content[{j}] ({kind})"
    return None


def validated(model: type[_M], fields: Mapping[str, Any]) -> _M:
    """The request body `model` of `fields`; a field it refuses is an `InputError`."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise input_error(exc.errors()) from None


def input_error(errors: Sequence[Any]) -> InputError:
    """pydantic's errors (or the API's, alike) as one `InputError`, the first five named."""
    details = validation_details(errors)
    return InputError("; ".join(f"{d.field}: {d.message}" for d in details[:5]))
