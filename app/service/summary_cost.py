"""The summarizer's cost, tallied per compaction without threading it through every step.

A compaction opens a tally (`metering`) and every summarizer call made inside it, however
deep (chunks, the digest's sections, the fallback), adds its call, tokens and time to it
(`charge`), through a context variable: the steps and strategies stay as they are. Tallies
nest: a call counts in every tally open around it, so the proxy can tally one head (made
of a service compaction that tallies its own) with the same calls.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from anyio import to_thread

from app.core.cost import SummarizerCost
from app.core.messages import Message
from app.core.ports import SummaryRequest, Tokenizer
from app.core.summary import serialize_for_summary
from app.core.tokens import count_messages


@dataclass
class Tally:
    """One open tally and the one it is nested in."""

    parent: Tally | None = None
    cost: SummarizerCost = field(default_factory=SummarizerCost)

    def add(self, cost: SummarizerCost) -> None:
        tally: Tally | None = self
        while tally is not None:
            tally.cost = tally.cost.plus(cost)
            tally = tally.parent


_open: ContextVar[Tally | None] = ContextVar("summarizer_tally", default=None)
# The counts the service has of the messages being summarized (by identity), so that a
# call's input is counted without tokenizing its transcript once more.
_known: ContextVar[Mapping[int, int] | None] = ContextVar("summarized_counts", default=None)


@contextmanager
def known_counts(messages: Sequence[Message], counts: Sequence[int] | None) -> Iterator[None]:
    """Inside the block, `messages`' token counts are `counts` (when given)."""
    if counts is None or len(counts) != len(messages):
        yield
        return
    token = _known.set({id(m): n for m, n in zip(messages, counts, strict=True)})
    try:
        yield
    finally:
        _known.reset(token)


@contextmanager
def metering() -> Iterator[Tally]:
    """A tally of the summarizer calls made inside the block (in this task)."""
    tally = Tally(_open.get())
    token = _open.set(tally)
    try:
        yield tally
    finally:
        _open.reset(token)


def charge(cost: SummarizerCost) -> None:
    """`cost` added to every tally open here (none: nothing to do)."""
    tally = _open.get()
    if tally is not None:
        tally.add(cost)


async def charged(
    tokenizer: Tokenizer,
    request: SummaryRequest,
    reads_prompt: bool,
    call: Callable[[], Awaitable[str]],
) -> str:
    """`call()`'s answer, its cost charged: one call, the tokens of what the summarizer
    reads (the system prompt and prompt; the messages when it reads those, as the
    extractive one does) and of its answer, and its time. A failed call is charged too (a
    provider bills it), without an answer."""
    started = time.perf_counter()
    try:
        text = await call()
    except Exception:
        await _charge(tokenizer, request, reads_prompt, "", time.perf_counter() - started)
        raise
    await _charge(tokenizer, request, reads_prompt, text, time.perf_counter() - started)
    return text


async def _charge(
    tokenizer: Tokenizer, request: SummaryRequest, reads_prompt: bool, text: str, seconds: float
) -> None:
    if _open.get() is None:
        return
    known = _known.get() or {}
    read, wrote = await to_thread.run_sync(_tokens, tokenizer, request, reads_prompt, text, known)
    charge(SummarizerCost(calls=1, input_tokens=read, output_tokens=wrote, seconds=seconds))


def _tokens(
    tokenizer: Tokenizer,
    request: SummaryRequest,
    reads_prompt: bool,
    text: str,
    known: Mapping[int, int],
) -> tuple[int, int]:
    """The tokens a call read and wrote. Its messages by the counts the service has (the
    others counted), and for a summarizer that reads the prompt, the prompt around their
    transcript (all of the prompt when it holds no transcript of them); a message whose
    tool results the prompt clips (`serialize_for_summary`'s `clip`) by its clipped form."""
    wrote = tokenizer.count(text) if text else 0
    messages = request.messages
    if not reads_prompt:
        return _counted(tokenizer, messages, known), wrote
    forms = [serialize_for_summary([m], clip=True) for m in messages]
    transcript = "\n\n".join(forms)
    if not transcript or transcript not in request.prompt:
        return tokenizer.count(f"{request.system}\n{request.prompt}"), wrote
    whole: list[Message] = []
    cut: list[str] = []
    for message, form in zip(messages, forms, strict=True):
        if form == serialize_for_summary([message]):
            whole.append(message)
        else:
            cut.append(form)
    read = _counted(tokenizer, whole, known) + sum(tokenizer.count_batch(cut) if cut else [])
    frame = request.prompt.replace(transcript, "", 1)
    return read + tokenizer.count(f"{request.system}\n{frame}"), wrote


def _counted(tokenizer: Tokenizer, messages: Sequence[Message], known: Mapping[int, int]) -> int:
    """`messages`' tokens: the service's counts where it has them, the others counted."""
    unknown = [m for m in messages if id(m) not in known]
    read = sum(known[id(m)] for m in messages if id(m) in known)
    return read + sum(count_messages(tokenizer, unknown))
