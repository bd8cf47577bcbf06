"""OpenAI `POST /v1/responses` (JSON and SSE), in the shapes of the API reference ("The
response object", "Streaming events").

A stream is `response.created` and `response.in_progress`, then per output item
`response.output_item.added`; for a message `response.content_part.added`,
`response.output_text.delta` pieces, `response.output_text.done`,
`response.content_part.done`; for a function call `response.function_call_arguments.delta`
pieces and `.done`; then `response.output_item.done`; last `response.completed` with the
usage. Every event is named and numbered (`sequence_number` from 0). A `Thinking` block is
a reasoning item (its text the summary, `response.reasoning_summary_*` events), with the
block's signature as its `encrypted_content` when the request's `include` asks for it. An
over-long input is refused with a 400 when not streamed, and inside a 200 stream when
streamed: created, in progress, then the `error` event at `sequence_number` 2, as the API
does (or, with `state.responses_failed`, `response.failed` whose `response.error` holds it,
as a response that fails does). `input` is held to the API's rules (`validation.py`).
"""

from __future__ import annotations

from typing import Any

from tests.fakes.provider import errors
from tests.fakes.provider.caching import CacheUsage
from tests.fakes.provider.openai_chat import SERVER_ERROR, refusal
from tests.fakes.provider.prompt import openai_responses_segments
from tests.fakes.provider.records import Received
from tests.fakes.provider.reply import Reply, json_reply, raw_reply, stream_reply
from tests.fakes.provider.scripts import Answer, Text, Thinking, ToolCall
from tests.fakes.provider.state import State
from tests.fakes.provider.validation import responses_problem
from tests.fakes.provider.wire import CREATED, Ids, named_event


def responses(state: State, received: Received) -> Reply:
    if state.script.peek(received).is_raw:
        return raw_reply(state.script.pop(received))
    ids = Ids(received.path, received.body)
    headers = {"x-request-id": ids.make("req_")}
    refused = refusal(received, headers)
    if refused:
        return refused
    body = received.json
    problem = responses_problem(body, rules=state.validate)
    if problem is not None:
        message, param = problem
        return json_reply(400, errors.openai_error(message, param=param), headers)
    segments = openai_responses_segments(body)
    model = str(body["model"])
    total = state.counter.total(segments)
    limit = state.limits.input_limit(model) or state.limits.window(model)
    if total > min(limit, state.limits.window(model)):
        if not body.get("stream"):
            return json_reply(400, errors.responses_context_length(), headers)
        refused = _refused_stream(body, ids, model, failed=state.responses_failed)
        return stream_reply(refused, Answer(), headers)
    answer = state.script.pop(received)
    usage = _usage(
        state.cache.openai((received.api_key or "", model), segments),
        state.output_tokens(answer, thinking=False),
    )
    if body.get("stream"):
        return stream_reply(_events(answer, body, ids, model, usage), answer, headers)
    output = _items(answer, ids, encrypted=_encrypted(body))
    done = _response(body, ids, model, "completed", output, usage)
    return json_reply(200, done, headers, delay=answer.first_byte_delay)


def _usage(cache: CacheUsage, output: int) -> dict[str, Any]:
    return {
        "input_tokens": cache.total,
        "input_tokens_details": {"cached_tokens": cache.read, "cache_write_tokens": cache.written},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": cache.total + output,
    }


def _response(
    body: dict[str, Any],
    ids: Ids,
    model: str,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "id": ids.make("resp_"),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": body.get("store", True),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": body.get("tools", []),
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _encrypted(body: dict[str, Any]) -> bool:
    """Whether the request asked for its reasoning back (`include`), as a stateless client
    does to send it again."""
    include = body.get("include")
    return isinstance(include, list) and "reasoning.encrypted_content" in include


def _summary(out: _Numbered, where: dict[str, Any], text: str, pieces: tuple[str, ...]) -> None:
    part = {"type": "summary_text", "text": ""}
    out.add("response.reasoning_summary_part.added", **where, summary_index=0, part=part)
    for piece in pieces:
        out.add("response.reasoning_summary_text.delta", **where, summary_index=0, delta=piece)
    out.add("response.reasoning_summary_text.done", **where, summary_index=0, text=text)
    done = {"type": "summary_text", "text": text}
    out.add("response.reasoning_summary_part.done", **where, summary_index=0, part=done)


def _items(
    answer: Answer, ids: Ids, *, done: bool = True, encrypted: bool = False
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i, block in enumerate(answer.blocks):
        status = "completed" if done else "in_progress"
        if isinstance(block, Text):
            content = [_part(block.text)] if done else []
            items.append(
                {
                    "id": ids.make("msg_", i),
                    "type": "message",
                    "status": status,
                    "role": "assistant",
                    "content": content,
                }
            )
        elif isinstance(block, Thinking):
            summary = [{"type": "summary_text", "text": block.thinking}] if done else []
            items.append(
                {
                    "id": ids.make("rs_", i),
                    "type": "reasoning",
                    "summary": summary,
                    **({"encrypted_content": block.signature} if encrypted else {}),
                }
            )
        elif isinstance(block, ToolCall):
            arguments = block.arguments() if done else ""
            items.append(
                {
                    "id": ids.make("fc_", i),
                    "type": "function_call",
                    "status": status,
                    "arguments": arguments,
                    "call_id": ids.make("call_", i),
                    "name": block.name,
                }
            )
    return items


class _Numbered:
    def __init__(self) -> None:
        self.events: list[bytes] = []

    def add(self, kind: str, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": len(self.events), **fields}
        self.events.append(named_event(kind, data))


def _refused_stream(body: dict[str, Any], ids: Ids, model: str, *, failed: bool) -> list[bytes]:
    out = _Numbered()
    started = _response(body, ids, model, "in_progress", [], None)
    out.add("response.created", response=started)
    out.add("response.in_progress", response=started)
    if failed:
        response = _response(body, ids, model, "failed", [], None)
        response["error"] = errors.responses_context_length()["error"]
        out.add("response.failed", response=response)
        return out.events
    error = errors.responses_context_event(len(out.events))
    out.events.append(named_event("error", error))
    return out.events


def _events(
    answer: Answer, body: dict[str, Any], ids: Ids, model: str, usage: dict[str, Any]
) -> list[bytes]:
    out = _Numbered()
    started = _response(body, ids, model, "in_progress", [], None)
    out.add("response.created", response=started)
    out.add("response.in_progress", response=started)
    blocks = list(answer.blocks)
    encrypted = _encrypted(body)
    opened = _items(answer, ids, done=False, encrypted=encrypted)
    finished = _items(answer, ids, encrypted=encrypted)
    for index, (block, item, full) in enumerate(zip(blocks, opened, finished, strict=True)):
        out.add("response.output_item.added", output_index=index, item=item)
        where = {"item_id": item["id"], "output_index": index}
        if isinstance(block, Thinking):
            _summary(out, where, block.thinking, block.deltas())
        elif isinstance(block, Text):
            out.add("response.content_part.added", **where, content_index=0, part=_part(""))
            for piece in block.deltas():
                out.add(
                    "response.output_text.delta", **where, content_index=0, delta=piece, logprobs=[]
                )
            out.add(
                "response.output_text.done", **where, content_index=0, text=block.text, logprobs=[]
            )
            out.add("response.content_part.done", **where, content_index=0, part=_part(block.text))
        else:
            for piece in block.deltas():
                out.add("response.function_call_arguments.delta", **where, delta=piece)
            out.add(
                "response.function_call_arguments.done",
                **where,
                arguments=block.arguments(),
                name=block.name,
            )
        out.add("response.output_item.done", output_index=index, item=full)
    out.add(
        "response.completed", response=_response(body, ids, model, "completed", finished, usage)
    )
    if answer.error_after is None:
        return out.events
    error = {
        "type": answer.error.type or "server_error",
        "code": answer.error.code or "server_error",
        "message": answer.error.message or SERVER_ERROR,
        "param": None,
    }
    kept = out.events[: answer.error_after]
    return [
        *kept,
        named_event("error", {"type": "error", "sequence_number": len(kept), "error": error}),
    ]
