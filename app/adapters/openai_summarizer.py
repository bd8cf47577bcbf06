"""Any OpenAI-compatible `/chat/completions` server as a `Summarizer` (vLLM, Ollama,
llama.cpp, OpenAI), over httpx: one attempt per call, errors translated.

Same rules as the Anthropic adapter; `RetryingSummarizer` owns the retries:

    retryable      timeout, connection error, 408, 409, 429, >= 500 (with `retry-after`)
    not retryable  other 4xx, a body that is not a chat completion (not JSON, no choices,
                   no message), empty text, and the finish reasons
                   `app.core.summary.check.stop_failure` names ("length": a cut-off
                   summary, "content_filter", "tool_calls"), and a message carrying a
                   `refusal` or `tool_calls` beside its text

Each error carries its `reason`, as in the Anthropic adapter (`filtered` for a content
filter).

The body of a 200 is read up to `BYTES_PER_TOKEN × max_tokens` (+ 64 KiB for the
envelope): a server that ignores `max_tokens` is cut off there (`oversized`) instead of
filling memory. The key is optional (local servers need none) and sent as a Bearer
token. Error messages carry the exception class name, or the status code with the
server's own code and message (`app.adapters.provider_errors`: short, never quoting the
prompt), never the key.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from app.adapters.openai_http import server_client
from app.adapters.provider_errors import ERROR_BODY_BYTES, describe_refusal
from app.adapters.retry import RETRYABLE_4XX, parse_retry_after, status_reason
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.core.summary import STOP_SEQUENCES, signal_failure, stop_failure

# A token of the answer is at most ~16 characters, each at most 6 bytes once JSON-escaped
# (`\\uXXXX`), and thinking models may add as much reasoning: far above any real answer.
BYTES_PER_TOKEN = 128
ENVELOPE_BYTES = 64 * 1024


class OpenAICompatibleSummarizer:
    """POSTs `request.prompt` under `request.system` to `{base_url}/chat/completions`, at
    `temperature` (0: the same history gives the same kind of answer, not a copy one time
    and a refusal the next) and stopped where the answer turns into a transcript copy."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_tokens: int = 4096,
        temperature: float = 0.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._key = api_key
        self._model = model
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._max_body = BYTES_PER_TOKEN * max_tokens + ENVELOPE_BYTES
        self._client = server_client(base_url, api_key, timeout, transport)

    @property
    def name(self) -> str:
        return "openai"

    @property
    def reads_prompt(self) -> bool:
        return True

    async def summarize(self, request: SummaryRequest) -> str:
        messages = [{"role": "user", "content": request.prompt}]
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        body = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "temperature": self._temperature,
            "stop": list(STOP_SEQUENCES),
            "messages": messages,
        }
        try:
            async with self._client.stream("POST", "/chat/completions", json=body) as response:
                raw = await self._read(response, request.prompt)
        except httpx.TimeoutException as exc:
            raise SummarizerError(_describe(exc), retryable=True, reason="timeout") from None
        except httpx.TransportError as exc:  # connection errors
            raise SummarizerError(_describe(exc), retryable=True, reason="connection") from None
        except httpx.HTTPError as exc:
            raise SummarizerError(_describe(exc), retryable=False, reason="bad_response") from None
        try:
            payload = json.loads(raw)
        except ValueError:
            raise SummarizerError(
                "chat completion API returned a body that is not JSON",
                retryable=False,
                reason="bad_response",
            ) from None
        return _summary_text(payload)

    async def _read(self, response: httpx.Response, prompt: str) -> bytes:
        """The body of a successful answer, at most `_max_body` bytes; a status error
        raises with the server's code and message (`describe_refusal`: short, never the
        prompt), reading at most `ERROR_BODY_BYTES` of its body."""
        status = response.status_code
        if status < 400:
            return await self._read_answer(response)
        body = await _error_body(response)
        said = describe_refusal(status, body, prompt, self._key, window_setting=True)
        if status >= 500 or status in RETRYABLE_4XX:
            raise SummarizerError(
                _describe_status(said),
                retryable=True,
                retry_after=parse_retry_after(response.headers.get("retry-after")),
                reason=status_reason(status),
            )
        raise SummarizerError(_describe_status(said), retryable=False, reason="client_error")

    async def _read_answer(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max_body:
                raise SummarizerError(
                    f"chat completion API answer over {self._max_body} bytes",
                    retryable=False,
                    reason="oversized",
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def aclose(self) -> None:
        await self._client.aclose()


def _summary_text(payload: Any) -> str:
    choices = payload.get("choices") if isinstance(payload, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise SummarizerError(
            "chat completion API returned an unexpected response",
            retryable=False,
            reason="bad_response",
        )
    stopped = stop_failure(choice.get("finish_reason") if isinstance(choice, dict) else None)
    if stopped is not None:
        raise stopped
    signal = _message_signal(message)
    if signal is not None:
        raise signal
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        content = "".join(t for t in texts if isinstance(t, str))
    text = content.strip() if isinstance(content, str) else ""
    if not text:
        raise SummarizerError("empty summary", retryable=False, reason="empty")
    return text


def _message_signal(message: dict[str, Any]) -> SummarizerError | None:
    """A refusal (`message.refusal`) or a tool call (`tool_calls`, `function_call`) beside
    whatever text came with it: the model did not write a summary, whatever the text says."""
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        return signal_failure("refusal")
    if message.get("tool_calls") or message.get("function_call"):
        return signal_failure("tool_calls")
    return None


def _describe(exc: Exception) -> str:
    return f"chat completion API call failed: {type(exc).__name__}"


def _describe_status(said: str) -> str:
    return f"chat completion API call failed: {said}"


async def _error_body(response: httpx.Response) -> bytes:
    """The start of an error body: its message comes first; the rest is not read."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= ERROR_BODY_BYTES:
            break
    return b"".join(chunks)[:ERROR_BODY_BYTES]
