"""Does the LLM server answer? A `GET {base_url}/models` for `/readyz`, cached.

Without it `/readyz` is ready while the LLM server is down and every compaction fails
(or falls back). The answer is kept `ttl` seconds, so probes every second from an
orchestrator cost one request to the LLM server per `ttl`; one call waits at most
`timeout`. Reasons carry the status or the exception class, never a body or the key.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx


class ModelsProbe:
    """`SummarizerProbe` of an OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenAI)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 2.0,
        ttl: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout),
            transport=transport,
        )
        self._ttl = ttl
        self._clock = clock
        self._kept: tuple[float, str | None] | None = None

    async def unreachable_reason(self) -> str | None:
        now = self._clock()
        if self._kept is not None and now - self._kept[0] < self._ttl:
            return self._kept[1]
        reason = await self._ask()
        self._kept = (now, reason)
        return reason

    async def _ask(self) -> str | None:
        try:
            response = await self._client.get("/models")
        except httpx.HTTPError as exc:
            return f"the summarizer's server did not answer: {type(exc).__name__}"
        if response.status_code != 200:
            return f"the summarizer's server answered HTTP {response.status_code} to GET /models"
        return None

    async def aclose(self) -> None:
        await self._client.aclose()
