"""What `/count` says of a proxied request, for its answer's `x-compact-count-tokens`.

The compactor decides on a fast count of its own (each message's JSON, raised by the ratio
the provider's answers showed: `app.proxy.counted`), which reads JSON punctuation `/count`
does not and so differs from it for the same body. An agent's operator who reads both
numbers needs them to be comparable, so the answer also carries `/count`'s: the canonical
messages counted by the model's tokenizer, its tools, its margin and the reply's priming.

It is counted while the provider answers (`started` before the request is forwarded,
read when the answer's headers go out), so the request leaves no later for it; and only
for a request the compactor counted, so a small body is never read twice.
"""

from __future__ import annotations

import asyncio

from anyio import to_thread

from app.core.decide import Basis
from app.core.messages import Message
from app.core.model_table import with_margin
from app.core.ports import Tokenizer
from app.core.provider import parse_messages
from app.core.tokens import count_total, tool_texts
from app.proxy.exchange import Exchange
from app.service.counting import CountingService


def canonical(ex: Exchange) -> list[Message]:
    """The request's messages as `/count` reads them: the top-level system prompt (a
    Responses body's `instructions`, when a string) ahead of the conversation."""
    field = "instructions" if ex.shape == "input" else "system"
    system = ex.body.get(field)
    head: list[Message] = []
    if system and (field == "system" or isinstance(system, str)):
        head = parse_messages([{"role": "system", "content": system}], "anthropic")
    if ex.conversation is not None:  # `input`, already read by the Responses dialect
        return [*head, *(Message.model_validate(m) for m in ex.conversation)]
    return [*head, *parse_messages(ex.messages, ex.format)]


def count_of(tokenizer: Tokenizer, ex: Exchange) -> int:
    """`/count`'s `token_count` of the request as `ex` holds it (with its live messages)."""
    messages = canonical(ex)
    tools = ex.body.get("tools")
    listed = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    margin = ex.spec.margin
    tool_tokens = sum(tokenizer.count_batch(tool_texts(listed))) if listed else 0
    basis = Basis(margin=margin, fixed_tokens=with_margin(tool_tokens, margin))
    return basis.raised(count_total(tokenizer, messages), local=True)


def started(service: CountingService, ex: Exchange) -> asyncio.Task[int]:
    """`count_of` by the model's tokenizer (as the compactor's own count picks it) begun in
    a worker thread, to be read by `read` when the answer goes out."""
    o200k = service.o200k if ex.spec.tokenizer == "o200k" else None
    tokenizer = o200k or service.tokenizer
    return asyncio.ensure_future(to_thread.run_sync(count_of, tokenizer, ex))


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
