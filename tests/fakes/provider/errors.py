"""The providers' own error bodies, word for word, with where each was seen.

Anthropic (every error also carries a top-level `request_id`, docs.claude.com/en/api/errors):
- `prompt is too long: N tokens > M maximum`, 400 `invalid_request_error`: as Claude Code and
  other clients print it (earendil-works/pi#102, boldsoftware/exe.dev#62).
- ``input length and `max_tokens` exceed context limit: N + K > M, decrease input length or
  `max_tokens` and try again``, 400 (docker/docker-agent#569, continuedev/continue#6080).
- 413 `request_too_large` `Request exceeds the maximum allowed number of bytes.` over 32 MB,
  sent by Cloudflare before the API (docs.claude.com/en/api/errors).
- A stream's `error` event: `{"type":"error","error":{"type":"overloaded_error",...}}`
  (the streaming docs' error example).

OpenAI:
- Chat: `This model's maximum context length is M tokens. However, your messages resulted in
  N tokens. Please reduce the length of the messages.`, code `context_length_exceeded`,
  param `messages` (chathub-dev/chathub#126, vercel/ai#428); with an output budget,
  `However, you requested T tokens (N in the messages, K in the completion). Please reduce
  the length of the messages or completion.` (sean1832/GPT-Brain#20); over a model's input
  limit, `Input tokens exceed the configured limit of L tokens. Your messages resulted in N
  tokens. Please reduce the length of the messages.` (cline/cline#5474).
- Responses: `Your input exceeds the context window of this model. Please adjust your input
  and try again.`, code `context_length_exceeded`, param `input`; streamed, as an `error`
  event at `sequence_number` 2 whose `error` object holds it (dyad-sh/dyad#1672,
  maximhq/bifrost#4413, james-6-23/codex2api#415).

llama.cpp's server (ggml-org/llama.cpp#15780 added the type, #16486 made it a 400; the
message as arbs-io/github-copilot-llm-gateway#73 and ggml-org/llama.cpp#19774 show it):
`{"error":{"code":400,"message":"request (N tokens) exceeds the available context size (M
tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":N,"n_ctx":M}}`.
"""

from __future__ import annotations

from typing import Any


def anthropic_error(kind: str, message: str, request_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


def prompt_too_long(tokens: int, window: int) -> str:
    return f"prompt is too long: {tokens} tokens > {window} maximum"


def input_and_max_tokens(tokens: int, max_tokens: int, window: int) -> str:
    return (
        f"input length and `max_tokens` exceed context limit: {tokens} + {max_tokens} > "
        f"{window}, decrease input length or `max_tokens` and try again"
    )


REQUEST_TOO_LARGE = "Request exceeds the maximum allowed number of bytes."


def openai_error(
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def chat_context_length(tokens: int, window: int, max_tokens: int | None) -> dict[str, Any]:
    if max_tokens is None or tokens > window:
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages."
        )
    else:
        message = (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{tokens + max_tokens} tokens ({tokens} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion."
        )
    return openai_error(message, param="messages", code="context_length_exceeded")


def chat_input_limit(tokens: int, limit: int) -> dict[str, Any]:
    message = (
        f"Input tokens exceed the configured limit of {limit} tokens. Your messages resulted "
        f"in {tokens} tokens. Please reduce the length of the messages."
    )
    return openai_error(message, param="messages", code="context_length_exceeded")


RESPONSES_CONTEXT_MESSAGE = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)


def responses_context_length() -> dict[str, Any]:
    return openai_error(RESPONSES_CONTEXT_MESSAGE, param="input", code="context_length_exceeded")


def responses_context_event(sequence_number: int) -> dict[str, Any]:
    return {
        "type": "error",
        "sequence_number": sequence_number,
        "error": {
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
            "message": RESPONSES_CONTEXT_MESSAGE,
            "param": "input",
        },
    }


def llamacpp_context_size(tokens: int, window: int) -> dict[str, Any]:
    return {
        "error": {
            "code": 400,
            "message": (
                f"request ({tokens} tokens) exceeds the available context size ({window} "
                "tokens), try increasing it"
            ),
            "type": "exceed_context_size_error",
            "n_prompt_tokens": tokens,
            "n_ctx": window,
        }
    }
