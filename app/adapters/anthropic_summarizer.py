"""The Anthropic Messages API as a `Summarizer`: one attempt per call, errors translated.

The SDK's own retries are off (`max_retries=0`) and the timeout is ours: `RetryingSummarizer`
is the one retry loop of the service. Every failure leaves this module as a
`SummarizerError`, classified from the SDK's exception classes and status codes, never
from message text:

    retryable      timeout, connection error, 408, 409, 429, >= 500 (incl. 529 overloaded)
    not retryable  other 4xx, a body that is not a Message, empty text, and the stop
                   reasons `app.core.summary.check.stop_failure` names ("max_tokens":
                   a cut-off summary, "refusal", "tool_use"), and a `tool_use` block
                   in the content

Each error carries its `reason` (`timeout`, `connection`, `rate_limited`, `server_error`,
`client_error`, `bad_response`, `truncated`, `refusal`, `tool_calls`, `empty`); whether a
text that came back is a summary is `app.core.summary.check`'s call, applied around this adapter.

Error messages carry the exception class name, the status code and the server's own error
type and message (`app.adapters.provider_errors`: short, never quoting the prompt or the
key); the request holds the API key, so the SDK's exception is not chained.
"""

from __future__ import annotations

import json
import logging

import anthropic
import httpx
from anthropic.types import Message, TextBlock

from app.adapters.provider_errors import ERROR_BODY_BYTES, server_said, with_hint
from app.adapters.retry import RETRYABLE_4XX, parse_retry_after, status_reason
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.core.summary import signal_failure, stop_failure

# At DEBUG the SDK logs every request's options, the whole prompt (the agent's history)
# included. We never want that in our logs, whatever level the operator chose.
_SDK_LOGGER = "anthropic._base_client"


def _drop_request_bodies(record: logging.LogRecord) -> bool:
    return not (isinstance(record.msg, str) and record.msg.startswith("Request options"))


def quiet_sdk_request_logs() -> None:
    """Idempotent: installs the filter on the SDK logger that creates those records."""
    logger = logging.getLogger(_SDK_LOGGER)
    if _drop_request_bodies not in logger.filters:
        logger.addFilter(_drop_request_bodies)


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
        quiet_sdk_request_logs()
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=httpx.Timeout(timeout),
            max_retries=0,
        )

    @property
    def name(self) -> str:
        return "anthropic"

    @property
    def reads_prompt(self) -> bool:
        return True

    async def summarize(self, request: SummaryRequest) -> str:
        try:
            message = await self._client.messages.create(
                model=self._model,
                max_tokens=self._max_tokens,
                temperature=self._temperature,
                system=request.system or anthropic.omit,
                messages=[{"role": "user", "content": request.prompt}],
            )
        except anthropic.APIStatusError as exc:
            raise _status_error(exc, request.prompt, self._key) from None
        except anthropic.APITimeoutError as exc:
            raise SummarizerError(_describe(exc), retryable=True, reason="timeout") from None
        except anthropic.APIConnectionError as exc:
            raise SummarizerError(_describe(exc), retryable=True, reason="connection") from None
        except anthropic.AnthropicError as exc:  # APIResponseValidationError and the rest
            raise SummarizerError(_describe(exc), retryable=False, reason="bad_response") from None
        except ValueError as exc:  # the SDK lets a 200 with invalid JSON through as-is
            raise SummarizerError(_describe(exc), retryable=False, reason="bad_response") from None
        return _summary_text(message)

    async def aclose(self) -> None:
        await self._client.close()


def _summary_text(message: object) -> str:
    # Without strict validation the SDK returns a 200 with a non-JSON body as a `str`, and
    # builds a `Message` from any JSON object, missing fields as None: check the shape here.
    if not isinstance(message, Message) or not isinstance(message.content, list):
        raise SummarizerError(
            "Anthropic API returned an unexpected response", retryable=False, reason="bad_response"
        )
    stopped = stop_failure(message.stop_reason)
    if stopped is not None:
        raise stopped
    if any(getattr(block, "type", None) == "tool_use" for block in message.content):
        raise signal_failure("tool_calls")
    text = "".join(
        block.text
        for block in message.content
        if isinstance(block, TextBlock) and block.type == "text" and isinstance(block.text, str)
    ).strip()
    if not text:
        raise SummarizerError("empty summary", retryable=False, reason="empty")
    return text


def _status_error(exc: anthropic.APIStatusError, prompt: str, key: str) -> SummarizerError:
    """The status error with the server's code and message (short, never the prompt)."""
    status = exc.status_code
    body = _body_bytes(exc.body)
    described = with_hint(_describe(exc, status) + server_said(body, prompt, key), body, prompt)
    if status >= 500 or status in RETRYABLE_4XX:
        return SummarizerError(
            described,
            retryable=True,
            retry_after=parse_retry_after(exc.response.headers.get("retry-after")),
            reason=status_reason(status),
        )
    return SummarizerError(described, retryable=False, reason="client_error")


def _body_bytes(body: object) -> bytes:
    try:
        return json.dumps(body).encode()[:ERROR_BODY_BYTES]
    except (TypeError, ValueError):
        return b""


def _describe(exc: Exception, status: int | None = None) -> str:
    where = f" (HTTP {status})" if status is not None else ""
    return f"Anthropic API call failed: {type(exc).__name__}{where}"
