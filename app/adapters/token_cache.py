"""A bounded cache of token counts in front of any `Tokenizer`.

Agents send the whole history before every LLM call, and the history only grows: a count
of the same list plus one message should cost that message only. Counts are keyed by a hash
of the text (never the text itself, so memory stays ~150 bytes an entry whatever the message
size) and evicted least recently used beyond `max_entries`.

Every text is cached, however short: a key costs far less than tokenizing even a short
text (more so in a thread other than the one that first used the encoding).

The hash is Python's own `hash(str)`: SipHash-1-3 under a random per-process key, 64 bits.
On a repeated 200k-token history the keys are most of what is left to do, and it computes
them faster than a 16-byte blake2b (docs/design.md has the figures). A false
hit needs two texts with one key: ~3e-15 per lookup with 50,000 entries, and not something a
caller can aim for while the key stays secret (do not set PYTHONHASHSEED in production).

Counting runs in worker threads, so the cache is guarded by a lock; the tokenizer itself
runs outside it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from app.core.ports import Tokenizer


def text_key(text: str) -> int:
    return hash(text)


class CachingTokenizer:
    """Wraps a tokenizer; counts the same as it, caching the count of every text."""

    def __init__(self, inner: Tokenizer, max_entries: int) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive (disable the cache by not using it)")
        self._inner = inner
        self.max_entries = max_entries
        self._counts: OrderedDict[int, int] = OrderedDict()
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
        keys = [text_key(t) for t in texts]
        counts: list[int | None] = [None] * len(texts)
        with self._lock:
            for i, key in enumerate(keys):
                if (found := self._counts.get(key)) is not None:
                    self._counts.move_to_end(key)
                    counts[i] = found
            self.hits += sum(c is not None for c in counts)
        missing = [i for i, c in enumerate(counts) if c is None]
        if missing:
            fresh = self._inner.count_batch([texts[i] for i in missing])
            with self._lock:
                self.misses += len(missing)
                for i, n in zip(missing, fresh, strict=True):
                    counts[i] = n
                    self._counts[keys[i]] = n
                    self._counts.move_to_end(keys[i])
                while len(self._counts) > self.max_entries:
                    self._counts.popitem(last=False)
        return [c for c in counts if c is not None]
