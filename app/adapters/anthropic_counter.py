"""Anthropic's `/v1/messages/count_tokens` as a `ProviderCounter`: one attempt, short timeout.

Plain JSON over httpx (`app.adapters.anthropic_http`). The leading system messages become
the `system` parameter; the rest are sent as Anthropic messages without the OpenAI
bookkeeping. Every failure (connection, timeout, any status, an unexpected body) leaves as
a `CountError` naming the failure and status only; the service then counts locally and
says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.adapters.anthropic_http import AnthropicCallError, anthropic_client, post_json
from app.core.errors import CountError
from app.core.messages import Message, message_text
from app.core.provider import to_anthropic


class AnthropicCounter:
    def __init__(
        self, *, api_key: str, model: str, base_url: str | None = None, timeout: float = 10.0
    ) -> None:
        self._model = model
        self._client = anthropic_client(api_key, base_url, timeout)

    @property
    def name(self) -> str:
        return "anthropic"

    async def count_tokens(self, messages: Sequence[Message]) -> int:
        split = 0
        while split < len(messages) and messages[split].role == "system":
            split += 1
        system = [{"type": "text", "text": message_text(m)} for m in messages[:split]]
        body: dict[str, Any] = {"model": self._model, "messages": to_anthropic(messages[split:])}
        if system:
            body["system"] = system
        try:
            result = await post_json(self._client, "/v1/messages/count_tokens", body)
        except AnthropicCallError as exc:
            if exc.kind == "bad_response":
                raise CountError("Anthropic count_tokens returned an unexpected response") from None
            raise CountError(f"Anthropic count_tokens failed: {exc}") from None
        tokens = result.get("input_tokens") if isinstance(result, dict) else None
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            raise CountError("Anthropic count_tokens returned an unexpected response")
        return tokens

    async def aclose(self) -> None:
        await self._client.aclose()
