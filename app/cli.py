"""`python -m app count` and `python -m app compact`: the service's own pipeline, no server.

The input is a message list as a JSON list, a JSON object with `messages` (a `/compact`
or `/count` body, or a corpus file), or JSONL with one message a line; from a file or
stdin. Request fields found in an object (`format`, `session_id`, `force`,
`instructions`, `options`, `tokenizer`) are used, and the flags override them; any other
key (a corpus file's `source`) is ignored. The output is the JSON the HTTP API answers.

Bad input raises `InputError` with a message naming the problem the way the API's 422
does (`messages[3].role: ...`); `__main__` prints it and exits 2.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app.api.answers import count_response
from app.api.dialect import compact_request
from app.api.errors import invalid_conversation, validation_details
from app.api.schemas import CompactRequestBody, CountRequest
from app.core.compaction import result_json
from app.core.errors import InvalidConversationError
from app.main import build_service, close_ports
from app.service.compaction import CompactionService
from app.settings import Settings

COMPACT_FIELDS = ("format", "session_id", "force", "instructions", "options")
COUNT_FIELDS = ("format", "tokenizer")
SHAPES = "a JSON list of messages, a JSON object with `messages`, or JSONL (a message a line)"

_T = TypeVar("_T")


class InputError(Exception):
    """The input cannot be read as a request; the message says where and why."""


def parse_input(text: str) -> dict[str, Any]:
    """The request fields of the input: `messages` always, plus any others it holds."""
    if not text.strip():
        raise InputError(f"no input: expected {SHAPES}")
    try:
        value = json.loads(text)
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


def _jsonl_messages(lines: Sequence[tuple[int, str]]) -> list[Any]:
    messages = []
    for number, line in lines:
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"line {number}: invalid JSON: {exc}") from None
        if not isinstance(message, dict):
            raise InputError(f"line {number}: expected a JSON object (one message a line)")
        messages.append(message)
    return messages


def request_fields(
    data: Mapping[str, Any], fields: Sequence[str], overrides: Mapping[str, Any]
) -> dict[str, Any]:
    """`messages`, the input's own values of `fields`, then the flags that were given."""
    chosen = {"messages": data["messages"], **{k: data[k] for k in fields if k in data}}
    chosen.update({k: v for k, v in overrides.items() if v is not None})
    return chosen


def count(data: Mapping[str, Any], overrides: Mapping[str, Any], settings: Settings) -> Any:
    """What `POST /count` would answer."""
    body = _validated(CountRequest, request_fields(data, COUNT_FIELDS, overrides))

    async def run(service: CompactionService) -> Any:
        return (await count_response(body, service)).model_dump(mode="json")

    return _with_service(settings, run)


def compact(data: Mapping[str, Any], overrides: Mapping[str, Any], settings: Settings) -> Any:
    """What `POST /compact` would answer. `overrides["strategy"]` sets `options.strategy`."""
    strategy = overrides.get("strategy")
    fields = request_fields(data, COMPACT_FIELDS, {**overrides, "strategy": None})
    if strategy is not None:
        options = fields.get("options")
        fields["options"] = {**(options if isinstance(options, dict) else {}), "strategy": strategy}
    body = _validated(CompactRequestBody, fields)

    async def run(service: CompactionService) -> Any:
        try:
            result = await service.compact(compact_request(body))
        except InvalidConversationError as exc:
            raise InputError(invalid_conversation(exc).message) from None
        return result_json(result)

    return _with_service(settings, run)


_M = TypeVar("_M", CountRequest, CompactRequestBody)


def _validated(model: type[_M], fields: Mapping[str, Any]) -> _M:
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise _input_error(exc.errors()) from None


def _input_error(errors: Sequence[Any]) -> InputError:
    details = validation_details(errors)
    return InputError("; ".join(f"{d.field}: {d.message}" for d in details[:5]))


def _with_service(settings: Settings, run: Callable[[CompactionService], Awaitable[_T]]) -> _T:
    async def main() -> _T:
        service = build_service(settings)
        try:
            return await run(service)
        except RequestValidationError as exc:  # a message failed its format's schema
            raise _input_error(exc.errors()) from None
        finally:
            await close_ports(service)

    return asyncio.run(main())
