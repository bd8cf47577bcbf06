"""OpenAI `POST /v1/chat/completions` (JSON and SSE) and `GET /v1/models`, in the shapes of
the API reference ("The chat completion object", "The chat completion chunk object").

A stream is one chunk with the role, `delta.content` pieces, `delta.tool_calls` fragments
(the first with id, type and name, the next ones with argument pieces only), a chunk with
the `finish_reason`, then, only when the request asked `stream_options.include_usage`, a
chunk with empty `choices` and the usage (every chunk then carries `"usage": null`), and
`data: [DONE]`. With `flavor="llamacpp"` an over-long prompt gets llama.cpp's error
instead of OpenAI's; the answers are OpenAI's either way.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.provider import errors
from tests.fakes.provider.caching import CacheUsage
from tests.fakes.provider.prompt import openai_chat_segments
from tests.fakes.provider.records import Received
from tests.fakes.provider.reply import Reply, json_reply, raw_reply, stream_reply
from tests.fakes.provider.scripts import Answer, Text
from tests.fakes.provider.state import State
from tests.fakes.provider.validation import openai_chat_problem
from tests.fakes.provider.wire import CREATED, DONE, Ids, data_event

# The start of OpenAI's answer to a request without a key (the rest points to its help pages).
NO_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)
SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"
FINGERPRINT = "fp_fake0001"


def chat_completions(state: State, received: Received) -> Reply:
    if state.script.peek(received).is_raw:
        return raw_reply(state.script.pop(received))
    ids = Ids(received.path, received.body)
    headers = {"x-request-id": ids.make("req_")}
    refused = refusal(received, headers) or _problem(state, received, headers)
    if refused:
        return refused
    body: dict[str, Any] = received.json
    segments = openai_chat_segments(body)
    model = str(body["model"])
    total = state.counter.total(segments)
    overflow = _overflow(
        state, model, total, body.get("max_completion_tokens") or body.get("max_tokens")
    )
    if overflow:
        return json_reply(400, overflow, headers)
    answer = state.script.pop(received)
    usage = _usage(
        state.cache.openai((received.api_key or "", model), segments),
        state.output_tokens(answer, thinking=False),
    )
    if body.get("stream"):
        options = body.get("stream_options") or {}
        events = _chunks(answer, model, ids, usage if options.get("include_usage") else None)
        return stream_reply(events, answer, headers)
    completion = _base(ids, model, "chat.completion") | {
        "choices": [
            {
                "index": 0,
                "message": _message(answer, ids),
                "logprobs": None,
                "finish_reason": _finish(answer),
            }
        ],
        "usage": usage,
    }
    return json_reply(200, completion, headers, delay=answer.first_byte_delay)


def models(state: State) -> Reply:
    data = [
        {"id": name, "object": "model", "created": CREATED, "owned_by": "system"}
        for name in state.limits.windows
    ]
    return json_reply(200, {"object": "list", "data": data})


def not_found(method: str, path: str) -> Reply:
    return json_reply(404, errors.openai_error(f"Invalid URL ({method} {path})"))


def refusal(received: Received, headers: dict[str, str]) -> Reply | None:
    if not received.api_key:
        return json_reply(401, errors.openai_error(NO_KEY), headers)
    return None


def _problem(state: State, received: Received, headers: dict[str, str]) -> Reply | None:
    problem = openai_chat_problem(received.json, rules=state.validate)
    if problem is None:
        return None
    message, param = problem
    return json_reply(400, errors.openai_error(message, param=param), headers)


def _overflow(state: State, model: str, total: int, max_out: Any) -> dict[str, Any] | None:
    window = state.limits.window(model)
    if state.flavor == "llamacpp":
        return errors.llamacpp_context_size(total, window) if total > window else None
    limit = state.limits.input_limit(model)
    if limit is not None and total > limit:
        return errors.chat_input_limit(total, limit)
    budget = max_out if isinstance(max_out, int) else None
    if total > window or (budget is not None and total + budget > window):
        return errors.chat_context_length(total, window, budget)
    return None


def _usage(cache: CacheUsage, output: int) -> dict[str, Any]:
    return {
        "prompt_tokens": cache.total,
        "completion_tokens": output,
        "total_tokens": cache.total + output,
        "prompt_tokens_details": {"cached_tokens": cache.read, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _base(ids: Ids, model: str, kind: str) -> dict[str, Any]:
    return {
        "id": ids.make("chatcmpl-"),
        "object": kind,
        "created": CREATED,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": FINGERPRINT,
    }


def _finish(answer: Answer) -> str:
    return answer.stop_reason or ("tool_calls" if answer.tool_calls() else "stop")


def _message(answer: Answer, ids: Ids) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": answer.text() or None,
        "refusal": None,
        "annotations": [],
    }
    calls = [
        {
            "id": ids.make("call_", i),
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments()},
        }
        for i, c in enumerate(answer.tool_calls())
    ]
    return message | ({"tool_calls": calls} if calls else {})


def _chunks(answer: Answer, model: str, ids: Ids, usage: dict[str, Any] | None) -> list[bytes]:
    base = _base(ids, model, "chat.completion.chunk")
    tail = {"usage": None} if usage is not None else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return data_event(base | {"choices": [choice]} | tail)

    texts = [b for b in answer.blocks if isinstance(b, Text)]
    events = [chunk({"role": "assistant", "content": "" if texts else None, "refusal": None})]
    for block in texts:
        events += [chunk({"content": piece}) for piece in block.deltas()]
    for i, call in enumerate(answer.tool_calls()):
        first = {
            "index": i,
            "id": ids.make("call_", i),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [first]}))
        events += [
            chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
            for piece in call.deltas()
        ]
    events.append(chunk({}, _finish(answer)))
    if usage is not None:
        events.append(data_event(base | {"choices": [], "usage": usage}))
    if answer.error_after is not None:
        error = errors.openai_error(
            answer.error.message or SERVER_ERROR,
            answer.error.type or "server_error",
            code=answer.error.code,
        )
        return [*events[: answer.error_after], data_event(error)]
    return [*events, DONE]
