"""Simulated prompt caching, per credential and model, so a proxy's cache-friendliness can be
measured in what the provider reports.

Anthropic (explicit breakpoints, docs "Prompt caching"): only a prefix that ends on a block
carrying `cache_control` (or the last block, with a top-level `cache_control`) is written,
and only when it is at least `min_cache_tokens` long. A request reads the longest prefix
that an earlier request wrote, looked up at each of its breakpoints and at up to 20 block
boundaries before each (the provider's look-back). Its usage then says: read = that
prefix, creation = from there to the last breakpoint, `input_tokens` = the rest. No
breakpoint: nothing read or written.

OpenAI (automatic, docs "Prompt caching"): the cached tokens are the longest common prefix
of this prompt and any earlier one of the same credential and model (whole segments, then
the characters the next segment shares), counted in tokens, reported only from 1024 tokens
on and in steps of 128 above that; what the prompt adds in those steps is reported written
(the Responses API's `cache_write_tokens`).

Entries never expire; `clear()` forgets them. A request sees only earlier requests.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from dataclasses import dataclass

from tests.fakes.provider.prompt import Segment, chain
from tests.fakes.provider.windows import Counter

LOOKBACK = 20  # block boundaries checked before each breakpoint
OPENAI_MIN = 1024
OPENAI_STEP = 128
_KEPT = 64  # earlier OpenAI prompts kept per credential and model


@dataclass(frozen=True)
class CacheUsage:
    total: int  # every prompt token
    read: int = 0
    written: int = 0

    @property
    def uncached(self) -> int:
        return self.total - self.read - self.written


@dataclass(frozen=True)
class _Seen:
    hashes: list[str]
    segments: list[Segment]
    sums: list[int]


class PromptCache:
    def __init__(self, counter: Counter, min_cache_tokens: int) -> None:
        self._counter = counter
        self._min = min_cache_tokens
        self._written: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._seen: dict[tuple[str, str], deque[_Seen]] = defaultdict(lambda: deque(maxlen=_KEPT))
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._written.clear()
            self._seen.clear()

    def anthropic(self, scope: tuple[str, str], segments: list[Segment]) -> CacheUsage:
        sums = self._counter.prefix_sums(segments)
        total = self._counter.scaled(sums[-1] if sums else 0)
        marks = [i for i, s in enumerate(segments) if s.breakpoint]
        if not marks:
            return CacheUsage(total)
        hashes = chain(segments)
        with self._lock:
            written = self._written[scope]
            hits = [
                j for b in marks for j in range(max(0, b - LOOKBACK), b + 1) if hashes[j] in written
            ]
            read = self._counter.scaled(sums[max(hits)]) if hits else 0
            for b in marks:
                if self._counter.scaled(sums[b]) >= self._min:
                    written.add(hashes[b])
        last = self._counter.scaled(sums[marks[-1]])
        creation = last - read if last >= self._min and last > read else 0
        return CacheUsage(total, read=read, written=creation)

    def openai(self, scope: tuple[str, str], segments: list[Segment]) -> CacheUsage:
        sums = self._counter.prefix_sums(segments)
        total = self._counter.scaled(sums[-1] if sums else 0)
        current = _Seen(chain(segments), segments, sums)
        with self._lock:
            earlier = list(self._seen[scope])
            self._seen[scope].append(current)
        common = max((self._common_raw(current, seen) for seen in earlier), default=0)
        read = _steps(min(self._counter.scaled(common), total))
        return CacheUsage(total, read=read, written=_steps(total) - read)

    def _common_raw(self, a: _Seen, b: _Seen) -> int:
        whole = 0
        while whole < min(len(a.hashes), len(b.hashes)) and a.hashes[whole] == b.hashes[whole]:
            whole += 1
        raw = a.sums[whole - 1] if whole else 0
        if whole < len(a.segments) and whole < len(b.segments):
            shared = _common_prefix(a.segments[whole].text, b.segments[whole].text)
            raw += self._counter.raw(shared) if shared else 0
        return raw


def _steps(tokens: int) -> int:
    """Tokens as OpenAI caches them: none under 1024, then in steps of 128."""
    if tokens < OPENAI_MIN:
        return 0
    return OPENAI_MIN + (tokens - OPENAI_MIN) // OPENAI_STEP * OPENAI_STEP


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]
