"""A provider counter built when first used. Its HTTP client (httpx, about 0.1 s to import)
takes as long to load as a command takes to count, and only a request with
`tokenizer: anthropic` asks for the provider's count: a key in the environment (often the
SDK's own, set for the agent) should not cost every `context-compact count` that import.
The server builds it at start-up (`load`), never on a request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from anyio import to_thread

from app.core.messages import Message
from app.core.ports import ProviderCounter


class LazyProviderCounter:
    """`build()` on first use (in a worker thread: the import is not the event loop's)."""

    def __init__(self, name: str, build: Callable[[], ProviderCounter]) -> None:
        self._name = name
        self._build = build
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
        return await counter.count_tokens(messages)

    async def aclose(self) -> None:
        if self._built is not None:
            await self._built.aclose()
