"""Does the LLM server answer, and how large is its window? For `/readyz` and for fitting
chunks to the server (`app.core.window_fit`), cached.

The window: llama.cpp's server `GET /props` (`default_generation_settings.n_ctx`, at the
server's root, above `/v1`), else vLLM's `GET /v1/models` (`max_model_len`); a window once
read is kept, an unknown one is asked again after `ttl`.

Without it `/readyz` is ready while the LLM server is down and every compaction fails
(or falls back). The answer is kept `ttl` seconds, so probes every second from an
orchestrator cost one request to the LLM server per `ttl`; one call waits at most
`timeout`. Reasons carry the status or the exception class, never a body or the key.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

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
        self._root = base_url.rstrip("/").removesuffix("/v1")
        self._window: tuple[float, int | None] | None = None

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

    async def window(self) -> int | None:
        now = self._clock()
        if self._window is not None and (
            self._window[1] is not None or now - self._window[0] < self._ttl
        ):
            return self._window[1]
        found = await self._props_window() or await self._models_window()
        self._window = (now, found)
        return found

    async def _props_window(self) -> int | None:
        payload = await self._json(f"{self._root}/props")
        settings = payload.get("default_generation_settings") if payload else None
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None

    async def _models_window(self) -> int | None:
        payload = await self._json("/models")
        models = payload.get("data") if payload else None
        first = models[0] if isinstance(models, list) and models else None
        length = first.get("max_model_len") if isinstance(first, dict) else None
        return length if isinstance(length, int) and length > 0 else None

    async def _json(self, url: str) -> dict[str, Any] | None:
        try:
            response = await self._client.get(url)
            payload = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        return payload if isinstance(payload, dict) else None

    async def aclose(self) -> None:
        await self._client.aclose()
