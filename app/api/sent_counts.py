"""Counting a history that only grew (`/count`, `/should-compact`): a message sent before
costs one dictionary lookup.

An agent sends its whole history before every model call. The token cache spares
re-tokenizing a text, but each message would still be validated, turned into its count
text and hashed. Here the count of each message is remembered under a hash of the message
as sent (its JSON, re-serialized by orjson, numbers as sent), so only messages not seen
before are read: one seen before was valid then and counts the same now. Only counts are
kept, never text.

Only Anthropic-shape messages are remembered: there one message as sent is one message
counted, while OpenAI tool messages count inside the message they are merged into. A body
that orjson did not accept (NaN, `1e309`, lone surrogates) is never remembered: orjson
would re-serialize NaN as `null`, so two different messages could share a key.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from app.core.json_numbers import dumps


def sent_key(message: Any) -> int:
    """The memo key of one message as sent (the same hash as the token cache's keys)."""
    return hash(dumps(message))


class SentCounts:
    """Token counts of messages as sent, least recently used evicted beyond `max_entries`.

    Used from the event loop only (lookups and updates never await), so it needs no lock."""

    def __init__(self, max_entries: int) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive (disable the memo by not using it)")
        self.max_entries = max_entries
        self._counts: OrderedDict[int, int] = OrderedDict()

    def __len__(self) -> int:
        return len(self._counts)

    def known(self, keys: Sequence[int]) -> list[int | None]:
        """The remembered count of each key, None where there is none."""
        counts: list[int | None] = []
        for key in keys:
            found = self._counts.get(key)
            if found is not None:
                self._counts.move_to_end(key)
            counts.append(found)
        return counts

    def remember(self, keys: Sequence[int], counts: Sequence[int]) -> None:
        for key, count in zip(keys, counts, strict=True):
            self._counts[key] = count
            self._counts.move_to_end(key)
        while len(self._counts) > self.max_entries:
            self._counts.popitem(last=False)
