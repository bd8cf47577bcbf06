"""A provider counter built when first used. Anthropic's SDK takes longer to import than a
command takes to count, and only a request with `tokenizer: anthropic` asks for the
provider's count: a key in the environment (often the SDK's own, set for the agent)
should not cost every `context-compact count` that import. The server builds it at
start-up (`load`), never on a request.

Each count is bounded as a whole by `timeout` (`COMPACT_COUNT_TIMEOUT`) and by what is left
of the request's deadline: the SDK's timeout bounds each read, and a server that sends a
byte a second never trips it. Past the bound the count fails (`CountError`) and the
service counts locally, saying so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import anyio
from anyio import to_thread

from app.core.errors import CountError
from app.core.messages import Message
from app.core.ports import ProviderCounter
from app.core.request_context import time_left

TIMEOUT_SETTING = "COMPACT_COUNT_TIMEOUT"


class LazyProviderCounter:
    """`build()` on first use (in a worker thread: the import is not the event loop's)."""

    def __init__(
        self, name: str, build: Callable[[], ProviderCounter], timeout: float | None = None
    ) -> None:
        self._name = name
        self._build = build
        self._timeout = timeout
        self._built: ProviderCounter | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def load(self) -> ProviderCounter:
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built

    async def count_tokens(self, messages: Sequence[Message]) -> int:
        counter = self._built
        if counter is None:
            counter = await to_thread.run_sync(self.load)
        left = time_left()
        bound = min(b for b in (self._timeout, left, float("inf")) if b is not None)
        try:
            with anyio.fail_after(bound):
                return await counter.count_tokens(messages)
        except TimeoutError:
            said = (
                f"took longer than {bound:g} s ({TIMEOUT_SETTING})"
                if bound == self._timeout
                else "cut at the request's deadline"
            )
            raise CountError(f"{self._name} count_tokens {said}") from None

    async def aclose(self) -> None:
        if self._built is not None:
            await self._built.aclose()
