"""Anthropic's `messages.count_tokens` as a `ProviderCounter`: one attempt, short timeout.

The leading system messages become the `system` parameter; the rest are sent as Anthropic
messages without the OpenAI bookkeeping. Every failure (connection, timeout, any status, an
unexpected body) leaves as a `CountError` naming the exception class and status only; the
service then counts locally and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import anthropic
import httpx
from anthropic.types import MessageTokensCount

from app.adapters.anthropic_summarizer import quiet_sdk_request_logs
from app.core.errors import CountError
from app.core.messages import Message, message_text
from app.core.provider import to_anthropic


class AnthropicCounter:
    def __init__(
        self, *, api_key: str, model: str, base_url: str | None = None, timeout: float = 10.0
    ) -> None:
        self._model = model
        quiet_sdk_request_logs()  # the SDK would log the messages at DEBUG
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=httpx.Timeout(timeout), max_retries=0
        )

    @property
    def name(self) -> str:
        return "anthropic"

    async def count_tokens(self, messages: Sequence[Message]) -> int:
        split = 0
        while split < len(messages) and messages[split].role == "system":
            split += 1
        system = [{"type": "text", "text": message_text(m)} for m in messages[:split]]
        try:
            result = await self._client.messages.count_tokens(
                model=self._model,
                messages=to_anthropic(messages[split:]),  # type: ignore[arg-type]
                system=system or anthropic.omit,  # type: ignore[arg-type]
            )
        except anthropic.APIStatusError as exc:
            raise CountError(_describe(exc, exc.status_code)) from None
        except (anthropic.AnthropicError, ValueError) as exc:
            raise CountError(_describe(exc)) from None
        if not isinstance(result, MessageTokensCount) or not isinstance(result.input_tokens, int):
            raise CountError("Anthropic count_tokens returned an unexpected response")
        return result.input_tokens

    async def aclose(self) -> None:
        await self._client.close()


def _describe(exc: Exception, status: int | None = None) -> str:
    where = f" (HTTP {status})" if status is not None else ""
    return f"Anthropic count_tokens failed: {type(exc).__name__}{where}"
