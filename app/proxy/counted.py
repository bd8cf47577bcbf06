"""Our count of a proxied request: each message's JSON and, as one more text, the rest of
what the provider reads (system, tools, instructions); and the small helpers the compactor
reads counts and heads with."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import orjson
from anyio import to_thread

from app.core.ports import Tokenizer
from app.core.proxy import Head, JsonDict
from app.proxy.exchange import Exchange


@dataclass(frozen=True)
class Count:
    messages: list[int]
    fixed: int

    @property
    def raw(self) -> int:
        return self.fixed + sum(self.messages)


async def request_count(tokenizer: Tokenizer, ex: Exchange, messages: Sequence[JsonDict]) -> Count:
    """Our count of `ex` with `messages` (tokenized in a worker thread)."""
    fixed = {k: ex.body.get(k) for k in ("system", "tools", "instructions") if ex.body.get(k)}
    fixed |= {"live": list(ex.live)} if ex.live else {}  # what the agent rebuilds each turn
    read = [ex.counted_json(m) for m in messages]
    read.append((orjson.dumps(fixed).decode() if fixed else "", 0))
    counts = await _counted(tokenizer, read)
    return Count(counts[:-1], counts[-1])


async def message_counts(
    tokenizer: Tokenizer, ex: Exchange, messages: Sequence[JsonDict]
) -> list[int]:
    """Our count of each of `messages` as `ex`'s dialect sends them (tokenized in a worker
    thread)."""
    return await _counted(tokenizer, [ex.counted_json(m) for m in messages])


async def _counted(tokenizer: Tokenizer, read: Sequence[tuple[str, int]]) -> list[int]:
    """Each text's tokens (in a worker thread) and its media's."""
    counts = await to_thread.run_sync(tokenizer.count_batch, [text for text, _ in read])
    return [n + media for n, (_, media) in zip(counts, read, strict=True)]


def since(count: Count, added: int) -> int:
    """Our count of the last `added` messages sent (the client's own, after any head);
    past what was counted, all of it."""
    if added <= 0:
        return 0
    return sum(count.messages[-added:]) if added < len(count.messages) else count.raw


async def each(heads: Sequence[Head | None]) -> AsyncIterator[Head | None]:
    for head in heads:
        yield head
