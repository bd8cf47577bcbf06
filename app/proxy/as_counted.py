"""What `/count` says of a proxied request, for its answer's `x-compact-count-tokens`.

The compactor decides on a fast count of its own (each message's JSON, raised by the ratio
the provider's answers showed: `app.proxy.counted`), which reads JSON punctuation `/count`
does not and so differs from it for the same body. An agent's operator who reads both
numbers needs them to be comparable, so the answer also carries `/count`'s: the canonical
messages counted by the model's tokenizer, its tools, its margin and the reply's priming.

It is counted while the provider answers (`started` before the request is forwarded,
read when the answer's headers go out), so the request leaves no later for it; and only
for a request the compactor counted, so a small body is never read twice. An agent resends
its whole history every turn, so an Anthropic-shape message's count is remembered under
the hash of its JSON (`Memo`): only the messages not seen before are read again. (An
OpenAI tool message counts inside the message it is merged into, so that shape is read
whole.)
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Sequence

import orjson
from anyio import to_thread

from app.core.decide import Basis
from app.core.messages import Message
from app.core.model_table import with_margin
from app.core.ports import Tokenizer
from app.core.provider import parse_messages
from app.core.proxy import JsonDict
from app.core.tokens import count_messages, count_total, tool_texts
from app.proxy.exchange import Exchange
from app.service.counting import CountingService

MEMO_ENTRIES = 20_000  # a few long sessions; a count and its key, no text


class Memo:
    """Counts of messages as sent, by tokenizer and the hash of their JSON; the least
    recently used beyond `max_entries` forgotten. Counted in worker threads, hence the lock."""

    def __init__(self, max_entries: int = MEMO_ENTRIES) -> None:
        self.max_entries = max_entries
        self._counts: OrderedDict[tuple[str, int], int] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._counts)

    def known(self, keys: Sequence[tuple[str, int]]) -> list[int | None]:
        with self._lock:
            found = [self._counts.get(key) for key in keys]
            for key, count in zip(keys, found, strict=True):
                if count is not None:
                    self._counts.move_to_end(key)
            return found

    def remember(self, keys: Sequence[tuple[str, int]], counts: Sequence[int]) -> None:
        with self._lock:
            for key, count in zip(keys, counts, strict=True):
                self._counts[key] = count
                self._counts.move_to_end(key)
            while len(self._counts) > self.max_entries:
                self._counts.popitem(last=False)


def _system(ex: Exchange) -> list[Message]:
    """The top-level system prompt as `/count` reads it (a Responses body's `instructions`
    only when a string)."""
    field = "instructions" if ex.shape == "input" else "system"
    system = ex.body.get(field)
    if system and (field == "system" or isinstance(system, str)):
        return parse_messages([{"role": "system", "content": system}], "anthropic")
    return []


def canonical(ex: Exchange) -> list[Message]:
    """The request's messages as `/count` reads them: the system prompt ahead of the
    conversation."""
    if ex.conversation is not None:  # `input`, already read by the Responses dialect
        return [*_system(ex), *(Message.model_validate(m) for m in ex.conversation)]
    return [*_system(ex), *parse_messages(ex.messages, ex.format)]


def _messages_count(tokenizer: Tokenizer, ex: Exchange, memo: Memo | None) -> int:
    if memo is None or ex.format != "anthropic" or ex.conversation is not None:
        return count_total(tokenizer, canonical(ex))
    raw: list[JsonDict] = ex.messages
    keys = [(tokenizer.name, hash(orjson.dumps(m))) for m in raw]
    counts = memo.known(keys)
    unseen = [i for i, n in enumerate(counts) if n is None]
    fresh = count_messages(tokenizer, parse_messages([raw[i] for i in unseen], "anthropic"))
    memo.remember([keys[i] for i in unseen], fresh)
    return count_total(tokenizer, _system(ex)) + sum(n for n in counts if n) + sum(fresh)


def count_of(tokenizer: Tokenizer, ex: Exchange, memo: Memo | None = None) -> int:
    """`/count`'s `token_count` of the request as `ex` holds it (with its live messages)."""
    tools = ex.body.get("tools")
    listed = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    margin = ex.spec.margin
    tool_tokens = sum(tokenizer.count_batch(tool_texts(listed))) if listed else 0
    basis = Basis(margin=margin, fixed_tokens=with_margin(tool_tokens, margin))
    return basis.raised(_messages_count(tokenizer, ex, memo), local=True)


def started(service: CountingService, ex: Exchange, memo: Memo | None) -> asyncio.Task[int]:
    """`count_of` by the model's tokenizer (as the compactor's own count picks it) begun in
    a worker thread, to be read by `read` when the answer goes out."""
    o200k = service.o200k if ex.spec.tokenizer == "o200k" else None
    tokenizer = o200k or service.tokenizer
    return asyncio.ensure_future(to_thread.run_sync(count_of, tokenizer, ex, memo))


async def read(task: asyncio.Task[int] | None) -> int | None:
    """The count `task` made; None without one or when it failed (the header is left out:
    a body the compactor could read but `/count` refuses answers as `/count` would not)."""
    if task is None:
        return None
    try:
        return await task
    except Exception:  # a header left out, never a failed answer
        return None


def cancel(task: asyncio.Task[int] | None) -> None:
    """`task` let go when the answer went out without reading it (the client left)."""
    if task is not None and not task.done():
        task.cancel()
