"""Does the LLM server answer, how large is its window, and how does it count? For `/readyz`
and for fitting chunks to the server (`app.core.summary.window_fit`), cached.

The window, first found of: llama.cpp's server `GET /props`
(`default_generation_settings.n_ctx`, at the server's root, above `/v1`); vLLM's
`GET /v1/models` (`max_model_len`); Ollama's `POST /api/show` for the configured model: the
`num_ctx` of its parameters (the window Ollama serves it with), at most the model's trained
`<arch>.context_length`; else the configured window (`COMPACT_SUMMARY_SERVER_WINDOW`). Ollama
without `num_ctx` serves the model with its server default (2048 or 4096 by version, or
`OLLAMA_CONTEXT_LENGTH`), which its API does not state: the trained length, often 32k or
more, would overstate the window, and Ollama cuts a prompt too long from its start without
an error, so that window is unknown (a warning is logged once) rather than guessed.
llama-cpp-python's server reports no window at all. A window once read is kept, an unknown
one is asked again after `ttl`.

The ratio of the server's tokens to cl100k (`app.core.summary.server_ratio`): its count of the
sample, from `POST /tokenize` (llama.cpp `{"content"}` → `tokens`, vLLM `{"prompt"}` →
`count`; one request carries both fields) or llama-cpp-python's `POST /extras/tokenize/count`
(`{"input"}` → `count`); kept once measured, asked again after `ttl` when unknown.

Without the reachability check `/readyz` is ready while the LLM server is down and every
compaction fails (or falls back). The answer is kept `ttl` seconds, so probes every second
from an orchestrator cost one request to the LLM server per `ttl`. Reasons carry the status
or the exception class, never a body or the key.

Each call is bounded as a whole by `timeout`, and by what is left of the deadline of the
request or job it serves (httpx's timeout bounds each read: a server that sends a byte a
second never trips it). These are metadata questions a server answers at once: one that
did not answer one in time is asked nothing more for `ttl` (its window and ratio are then
unknown), so a summary waits for a stalled server at most `timeout` before its own calls,
whose time the retry loop bounds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
import httpx

from app.adapters.openai_http import server_client
from app.core.request_context import time_left
from app.core.summary import measured_ratio, ratio_sample

log = logging.getLogger("context_compact.summarizer")
T = TypeVar("T")
# Seconds one question to the server may take, as a whole (see the module's docstring).
PROBE_TIMEOUT = 1.0
NO_ANSWER = "the summarizer's server did not answer"

UNSTATED_OLLAMA_WINDOW = (
    "Ollama serves the model {model} with its default context length (no num_ctx in its "
    "parameters, and its API does not state the default): prompts longer are cut from their "
    "start. Set COMPACT_SUMMARY_SERVER_WINDOW to that length (or num_ctx in the Modelfile)"
)


class _Found(Generic[T]):
    """A value read from the server: kept once found; asked again after `ttl` while the
    server has not said it."""

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self._ttl = ttl
        self._clock = clock
        self._kept: tuple[float, T | None] | None = None

    async def get(self, read: Callable[[], Awaitable[T | None]]) -> T | None:
        now = self._clock()
        kept = self._kept
        if kept is not None and (kept[1] is not None or now - kept[0] < self._ttl):
            return kept[1]
        found = await read()
        self._kept = (now, found)
        return found


@dataclass(frozen=True)
class ProbeTiming:
    """How long one question may take, as a whole (`timeout`), and how long an answer, or
    a server's silence, is kept (`ttl`), on `clock`."""

    timeout: float = PROBE_TIMEOUT
    ttl: float = 10.0
    clock: Callable[[], float] = time.monotonic


class ModelsProbe:
    """`SummarizerProbe` of an OpenAI-compatible server (llama.cpp, vLLM, Ollama, OpenAI)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        count: Callable[[str], int] | None = None,
        configured_window: int | None = None,
        timing: ProbeTiming = ProbeTiming(),
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`model`: the summarizer's, named to Ollama and the tokenize endpoints; `count`:
        cl100k's count, without which no ratio is measured; `configured_window`: the window
        of a server that reports none."""
        self._client = server_client(base_url, api_key, timing.timeout, transport)
        self._timeout = timing.timeout
        self._silent: tuple[float, str] | None = None  # when and why a call ran out of time
        self._ttl = timing.ttl
        self._clock = timing.clock
        self._kept: tuple[float, str | None] | None = None
        self._root = base_url.rstrip("/").removesuffix("/v1")
        self._window: _Found[int] = _Found(timing.ttl, timing.clock)
        self._model = model
        self._count = count
        self._configured_window = configured_window
        self._ratio: _Found[float] = _Found(timing.ttl, timing.clock)
        self._warned = False

    async def unreachable_reason(self) -> str | None:
        now = self._clock()
        if self._kept is not None and now - self._kept[0] < self._ttl:
            return self._kept[1]
        reason = await self._ask()
        self._kept = (now, reason)
        return reason

    async def _ask(self) -> str | None:
        try:
            response = await self._call("/models")
        except httpx.HTTPError as exc:
            return f"the summarizer's server did not answer: {type(exc).__name__}"
        except _NoTimeError as exc:
            return str(exc)
        if response.status_code != 200:
            return f"the summarizer's server answered HTTP {response.status_code} to GET /models"
        return None

    async def _call(self, url: str, body: dict[str, Any] | None = None) -> httpx.Response:
        """One GET (or POST of `body`), read whole within the call's bound (the module's
        docstring); raises `_NoTimeError` past it, or at once while the server is silent."""
        silent = self._silent
        if silent is not None and self._clock() - silent[0] < self._ttl:
            raise _NoTimeError(silent[1])
        left = time_left()
        bound = self._timeout if left is None else min(self._timeout, left)
        try:
            with anyio.fail_after(bound):
                if body is None:
                    return await self._client.get(url)
                return await self._client.post(url, json=body)
        except TimeoutError:
            if bound < self._timeout:  # the request's end, not the server's doing
                raise _NoTimeError(NO_ANSWER + " before the deadline of the request") from None
            reason = f"{NO_ANSWER} within {bound:g} s"
            self._silent = (self._clock(), reason)
            raise _NoTimeError(reason) from None

    async def window(self) -> int | None:
        return await self._window.get(self._read_window)

    async def _read_window(self) -> int | None:
        return (
            await self._props_window()
            or await self._models_window()
            or await self._ollama_window()
            or self._configured_window
        )

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

    async def _ollama_window(self) -> int | None:
        if self._model is None:
            return None
        body = {"model": self._model, "name": self._model}  # `name`: older Ollama versions
        payload = await self._json(f"{self._root}/api/show", body)
        if payload is None:
            return None
        found = ollama_window(payload)
        if found is None and self._configured_window is None and not self._warned:
            self._warned = True
            log.warning(UNSTATED_OLLAMA_WINDOW.format(model=self._model))
        return found

    async def ratio(self) -> float | None:
        return None if self._count is None else await self._ratio.get(self._measure_ratio)

    async def _measure_ratio(self) -> float | None:
        sample = ratio_sample()
        server = await self.server_tokens(sample)
        if server is None or self._count is None:
            return None
        return measured_ratio(server, self._count(sample))

    async def server_tokens(self, text: str) -> int | None:
        """The server's count of `text`; None when it has no such endpoint."""
        model = {"model": self._model} if self._model is not None else {}
        payload = await self._json(
            f"{self._root}/tokenize", {"content": text, "prompt": text, **model}
        )
        if payload is None:
            payload = await self._json(
                f"{self._root}/extras/tokenize/count", {"input": text, **model}
            )
        if payload is None:
            return None
        count, tokens = payload.get("count"), payload.get("tokens")
        if isinstance(count, int) and not isinstance(count, bool):
            return count
        return len(tokens) if isinstance(tokens, list) else None

    async def _json(self, url: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The JSON object a 200 answers to a GET (or a POST of `body`); None otherwise."""
        try:
            response = await self._call(url, body)
            payload = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, _NoTimeError):
            return None
        return payload if isinstance(payload, dict) else None

    async def aclose(self) -> None:
        await self._client.aclose()


class _NoTimeError(Exception):
    """A question to the server ran out of time, or was not asked: the server is silent."""


def ollama_window(show: dict[str, Any]) -> int | None:
    """The window Ollama serves a model with, from its `/api/show` answer: `num_ctx` in
    `parameters` (a text of `name value` lines), at most the trained `<arch>.context_length`
    of `model_info`; None without `num_ctx` (the module's docstring says why)."""
    parameters = show.get("parameters")
    num_ctx = None
    for line in parameters.splitlines() if isinstance(parameters, str) else ():
        words = line.split()
        if len(words) == 2 and words[0] == "num_ctx" and words[1].isdigit():
            num_ctx = int(words[1])
    if not num_ctx:
        return None
    info = show.get("model_info")
    trained = [
        v
        for k, v in (info.items() if isinstance(info, dict) else ())
        if k.endswith(".context_length") and isinstance(v, int) and v > 0
    ]
    return min(num_ctx, *trained) if trained else num_ctx
