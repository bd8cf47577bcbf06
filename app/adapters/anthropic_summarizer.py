"""The Anthropic Messages API as a `Summarizer`: one attempt per call, errors translated.

Plain JSON over httpx (`app.adapters.anthropic_http`), no SDK, and the timeout is ours:
`RetryingSummarizer` is the one retry loop of the service. Every failure leaves this module
as a `SummarizerError`, classified from the failure's kind and status code, never from
message text:

    retryable      timeout, connection error, 408, 409, 429, >= 500 (incl. 529 overloaded)
    not retryable  other 4xx, a body that is not a Message, empty text, and the stop
                   reasons `app.core.gate.check.stop_failure` names ("max_tokens":
                   a cut-off summary, "refusal", "tool_use"), and a `tool_use` block
                   in the content

Each error carries its `reason` (`timeout`, `connection`, `rate_limited`, `server_error`,
`client_error`, `bad_response`, `truncated`, `refusal`, `tool_calls`, `empty`); whether a
text that came back is a summary is `app.core.gate.check`'s call, applied around this adapter.

Error messages carry the failure's name as the SDK named it, the status code and the
server's own error type and message (`app.adapters.provider_errors`: short, never quoting
the prompt or the key); nothing is chained, so no request (and no key) rides along.
"""

from __future__ import annotations

from typing import Any

from app.adapters.anthropic_http import AnthropicCallError, anthropic_client, post_json
from app.adapters.provider_errors import server_said, with_hint
from app.adapters.retry import RETRYABLE_4XX, parse_retry_after, status_reason
from app.core.errors import SummarizerError
from app.core.gate import signal_failure, stop_failure
from app.core.ports import SummaryRequest


class AnthropicSummarizer:
    """Asks a Claude model for the summary in `request.prompt`, under `request.system`."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_tokens: int = 4096,
        temperature: float = 0.0,
    ) -> None:
        self._key = api_key
        self._temperature = temperature
        self._model = model
        self._max_tokens = max_tokens
        self._client = anthropic_client(api_key, base_url, timeout)

    @property
    def name(self) -> str:
        return "anthropic"

    @property
    def reads_prompt(self) -> bool:
        return True

    async def summarize(self, request: SummaryRequest) -> str:
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "temperature": self._temperature,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if request.system:
            body["system"] = request.system
        try:
            message = await post_json(self._client, "/v1/messages", body)
        except AnthropicCallError as exc:
            raise _failure(exc, request.prompt, self._key) from None
        return _summary_text(message)

    async def aclose(self) -> None:
        await self._client.aclose()


def _summary_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        raise SummarizerError(
            "Anthropic API returned an unexpected response", retryable=False, reason="bad_response"
        )
    stopped = stop_failure(message.get("stop_reason"))
    if stopped is not None:
        raise stopped
    blocks = [b for b in content if isinstance(b, dict)]
    if any(b.get("type") == "tool_use" for b in blocks):
        raise signal_failure("tool_calls")
    text = "".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    ).strip()
    if not text:
        raise SummarizerError("empty summary", retryable=False, reason="empty")
    return text


def _failure(exc: AnthropicCallError, prompt: str, key: str) -> SummarizerError:
    """The failure with the server's code and message (short, never the prompt)."""
    described = f"Anthropic API call failed: {exc}"
    if exc.kind in ("timeout", "connection"):
        return SummarizerError(described, retryable=True, reason=exc.kind)
    if exc.status is None:  # a 200 whose body is not JSON
        return SummarizerError(
            "Anthropic API returned an unexpected response", retryable=False, reason="bad_response"
        )
    status = exc.status
    described = with_hint(described + server_said(exc.body, prompt, key), exc.body, prompt)
    if status >= 500 or status in RETRYABLE_4XX:
        return SummarizerError(
            described,
            retryable=True,
            retry_after=parse_retry_after(exc.headers.get("retry-after")),
            reason=status_reason(status),
        )
    return SummarizerError(described, retryable=False, reason="client_error")
