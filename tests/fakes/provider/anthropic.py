"""The Anthropic Messages API: `POST /v1/messages` (JSON and SSE), `/v1/messages/count_tokens`
and `GET /v1/models`, in the shapes of docs.claude.com's API reference and streaming guide.

A stream is `message_start`, `ping`, then per content block `content_block_start`, its
deltas (`text_delta`; `thinking_delta` then one `signature_delta`; `input_json_delta`
fragments after an empty first one), `content_block_stop`, then `message_delta` (stop
reason and final usage) and `message_stop`. Refusals (size, shape, window) come before any
byte of a stream, as a JSON error with the status the API uses.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.provider import errors
from tests.fakes.provider.caching import CacheUsage
from tests.fakes.provider.prompt import anthropic_segments
from tests.fakes.provider.records import Received
from tests.fakes.provider.reply import Reply, json_reply, raw_reply, stream_reply
from tests.fakes.provider.scripts import Answer, Block, Text, Thinking, ToolCall
from tests.fakes.provider.state import State
from tests.fakes.provider.validation import anthropic_problem
from tests.fakes.provider.wire import Ids, named_event


def messages(state: State, received: Received) -> Reply:
    if state.script.peek(received).is_raw:
        return raw_reply(state.script.pop(received))
    ids = Ids(received.path, received.body)
    refused = _refusal(state, received, ids, needs_max_tokens=True)
    if refused:
        return refused
    body: dict[str, Any] = received.json
    segments = anthropic_segments(body)
    model = str(body["model"])
    total = state.counter.total(segments)
    window = state.limits.window(model)
    max_tokens = int(body.get("max_tokens") or 0)
    if total > window:
        return _error(400, "invalid_request_error", errors.prompt_too_long(total, window), ids)
    if total + max_tokens > window:
        overflow = errors.input_and_max_tokens(total, max_tokens, window)
        return _error(400, "invalid_request_error", overflow, ids)
    answer = state.script.pop(received)
    usage = state.cache.anthropic((received.api_key or "", model), segments)
    output = state.output_tokens(answer)
    headers = {"request-id": ids.make("req_")}
    if body.get("stream"):
        return stream_reply(_events(answer, model, usage, output, ids), answer, headers)
    message = _message(answer, model, ids) | {"usage": _usage(usage, output)}
    return json_reply(200, message, headers, delay=answer.first_byte_delay)


def count_tokens(state: State, received: Received) -> Reply:
    ids = Ids(received.path, received.body)
    refused = _refusal(state, received, ids, needs_max_tokens=False)
    if refused:
        return refused
    total = state.counter.total(anthropic_segments(received.json))
    return json_reply(200, {"input_tokens": total}, {"request-id": ids.make("req_")})


def models(state: State) -> Reply:
    data = [
        {
            "type": "model",
            "id": name,
            "display_name": name,
            "created_at": "2025-09-29T00:00:00Z",
        }
        for name in state.limits.windows
    ]
    page = {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
    return json_reply(200, page)


def not_found() -> Reply:
    return _error(404, "not_found_error", "Not Found", None)


def _refusal(state: State, received: Received, ids: Ids, *, needs_max_tokens: bool) -> Reply | None:
    if len(received.body) > state.limits.max_request_bytes:
        # Cloudflare answers before the API: no request id.
        return json_reply(
            413, errors.anthropic_error("request_too_large", errors.REQUEST_TOO_LARGE)
        )
    if not received.api_key:
        return _error(401, "authentication_error", "x-api-key header is required", ids)
    problem = anthropic_problem(
        received.json, needs_max_tokens=needs_max_tokens, rules=state.validate
    )
    if problem:
        return _error(400, "invalid_request_error", problem, ids)
    return None


def _error(status: int, kind: str, message: str, ids: Ids | None) -> Reply:
    request_id = ids.make("req_") if ids else None
    headers = {"request-id": request_id} if request_id else {}
    return json_reply(status, errors.anthropic_error(kind, message, request_id), headers)


def _usage(usage: CacheUsage, output: int) -> dict[str, Any]:
    return {
        "input_tokens": usage.uncached,
        "cache_creation_input_tokens": usage.written,
        "cache_read_input_tokens": usage.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.written,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": output,
        "service_tier": "standard",
    }


def _stop_reason(answer: Answer) -> str:
    return answer.stop_reason or ("tool_use" if answer.tool_calls() else "end_turn")


def _message(answer: Answer, model: str, ids: Ids) -> dict[str, Any]:
    return {
        "id": ids.make("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [_block(b, i, ids) for i, b in enumerate(answer.blocks)],
        "stop_reason": _stop_reason(answer),
        "stop_sequence": None,
    }


def _block(block: Block, index: int, ids: Ids) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return {
        "type": "tool_use",
        "id": ids.make("toolu_", index),
        "name": block.name,
        "input": dict(block.input),
    }


def _empty(block: Block, index: int, ids: Ids) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": ""}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {"type": "tool_use", "id": ids.make("toolu_", index), "name": block.name, "input": {}}


def _deltas(block: Block) -> list[dict[str, Any]]:
    if isinstance(block, Text):
        return [{"type": "text_delta", "text": piece} for piece in block.deltas()]
    if isinstance(block, Thinking):
        pieces = [{"type": "thinking_delta", "thinking": piece} for piece in block.deltas()]
        return [*pieces, {"type": "signature_delta", "signature": block.signature}]
    assert isinstance(block, ToolCall)
    return [{"type": "input_json_delta", "partial_json": p} for p in ("", *block.deltas())]


def _events(answer: Answer, model: str, usage: CacheUsage, output: int, ids: Ids) -> list[bytes]:
    start = _message(answer, model, ids) | {"content": [], "stop_reason": None}
    events = [
        named_event(
            "message_start",
            {"type": "message_start", "message": start | {"usage": _usage(usage, 1)}},
        ),
        named_event("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(answer.blocks):
        events.append(
            named_event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": _empty(block, index, ids),
                },
            )
        )
        for delta in _deltas(block):
            events.append(
                named_event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(
            named_event("content_block_stop", {"type": "content_block_stop", "index": index})
        )
    final = _usage(usage, output)
    del final["cache_creation"], final["service_tier"]
    delta = {"stop_reason": _stop_reason(answer), "stop_sequence": None}
    events.append(
        named_event("message_delta", {"type": "message_delta", "delta": delta, "usage": final})
    )
    events.append(named_event("message_stop", {"type": "message_stop"}))
    if answer.error_after is not None:
        kind = answer.error.type or "overloaded_error"
        error = errors.anthropic_error(kind, answer.error.message or "Overloaded")
        events = [*events[: answer.error_after], named_event("error", error)]
    return events
