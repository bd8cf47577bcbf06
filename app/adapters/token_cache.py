"""A bounded cache of token counts in front of any `Tokenizer`.

Agents send the whole history before every LLM call, and the history only grows: a count
of the same list plus one message should cost that message only. Counts are keyed by a
16-byte blake2b digest of the text (never the text itself, so memory stays ~200 bytes an
entry whatever the message size) and evicted least recently used beyond `max_entries`.

Counting runs in worker threads, so the cache is guarded by a lock; the tokenizer itself
runs outside it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from hashlib import blake2b

from app.core.ports import Tokenizer

# Below this length hashing and the lock cost about as much as tokenizing.
MIN_CACHED_CHARS = 64


def text_key(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CachingTokenizer:
    """Wraps a tokenizer; counts the same as it, caching the counts of longer texts."""

    def __init__(self, inner: Tokenizer, max_entries: int) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive (disable the cache by not using it)")
        self._inner = inner
        self.max_entries = max_entries
        self._counts: OrderedDict[bytes, int] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self._inner.name

    def __len__(self) -> int:
        return len(self._counts)

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        keys = [text_key(t) if len(t) >= MIN_CACHED_CHARS else None for t in texts]
        counts: list[int | None] = [None] * len(texts)
        with self._lock:
            for i, key in enumerate(keys):
                if key is not None and (found := self._counts.get(key)) is not None:
                    self._counts.move_to_end(key)
                    counts[i] = found
            self.hits += sum(c is not None for c in counts)
        missing = [i for i, c in enumerate(counts) if c is None]
        if missing:
            fresh = self._inner.count_batch([texts[i] for i in missing])
            with self._lock:
                self.misses += sum(keys[i] is not None for i in missing)
                for i, n in zip(missing, fresh, strict=True):
                    counts[i] = n
                    key = keys[i]
                    if key is not None:
                        self._counts[key] = n
                        self._counts.move_to_end(key)
                while len(self._counts) > self.max_entries:
                    self._counts.popitem(last=False)
        return [c for c in counts if c is not None]
