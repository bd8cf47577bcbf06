"""Summarizing a rest of any length within the summarizer's input budget
(`app.core.summary.chunking`).

One chunk when the rest fits (the request is exactly the unchunked one); otherwise one
summarizer call per chunk, each carrying the summary so far. Counting and cutting run in a
worker thread. After a chunk whose summary fails no chunk is sent again: the fallback
summarizer, when there is one, summarizes the whole rest in one pass (the final summary
always covers the whole history); without one the whole summary fails (the caller then
returns the input unchanged, as for any failed summary).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from anyio import to_thread

from app.core.messages import Message
from app.core.ports import SummaryRequest, Tokenizer
from app.core.summary import (
    EXACT_CHECK_SHARE,
    Unit,
    carried_pair,
    cut_unit,
    next_chunk,
    prompt_overhead,
    prompt_tokens,
    transcript_bound,
    transcript_costs,
    units_of,
)
from app.core.tokens import count_messages

BuildRequest = Callable[[Sequence[Message]], SummaryRequest]
_PLAN_ATTEMPTS = 16


@dataclass(frozen=True)
class ChunkedSummary:
    text: str
    summarizer: str
    chunks: int


@dataclass(frozen=True)
class SummaryOutcome:
    """A summary step's answer: the summary (None when it failed), the warnings met on the
    way (returned with it rather than appended to a list the caller passed), and the calls
    made to the configured summarizer, the failed one included (the fallback's are not
    counted; retries of one call are one call): what `summary_chunks` reports, whether
    the summary was written or not."""

    summary: ChunkedSummary | None
    warnings: tuple[str, ...] = ()
    calls: int = 0


Summarize = Callable[[SummaryRequest], Awaitable[SummaryOutcome]]
FallBack = Callable[[], Awaitable[SummaryOutcome]]


@dataclass(frozen=True)
class ChunkPlan:
    """What one summarizer call gets, and the unit where the next chunk starts."""

    messages: tuple[Message, ...]
    next_unit: int


@dataclass(frozen=True)
class ChunkedInput:
    """What is summarized in chunks: `rest`, within `budget` tokens a call, in at most
    `max_words` words, with the caller's `instructions`; `counts`: the token counts of
    `rest`'s messages when the caller has them (they are not made again)."""

    rest: Sequence[Message]
    budget: int
    max_words: int
    instructions: str | None
    counts: Sequence[int] | None = None


async def summarize_in_chunks(
    given: ChunkedInput,
    *,
    tokenizer: Tokenizer,
    build_request: BuildRequest,
    summarize: Summarize,
    fall_back: FallBack | None = None,
) -> SummaryOutcome:
    """The summary of `given.rest`; none when a chunk's summary failed with no fallback, or
    the budget cannot hold even the prompt (both with a warning). `fall_back`: the summary
    of the whole rest by the fallback summarizer, called once after a failed chunk."""
    rest, budget = given.rest, given.budget
    planner = _Planner(rest, budget, given.max_words, given.instructions, tokenizer, given.counts)
    await to_thread.run_sync(planner.prepare)
    if planner.room <= 0:
        return SummaryOutcome(
            None,
            (
                f"summary_input_budget {budget} is smaller than the summary prompt itself "
                f"({planner.overhead} tokens)",
            ),
        )
    warnings: list[str] = []
    summary: ChunkedSummary | None = None
    chunks, start = 0, 0
    while start < len(planner.units):
        carried = summary.text if summary else None
        plan = await to_thread.run_sync(planner.plan, start, carried)
        if plan is None:
            warnings.append(f"summary_input_budget {budget} cannot hold chunk {chunks + 1}")
            return SummaryOutcome(None, tuple(warnings))
        request = await to_thread.run_sync(build_request, plan.messages)
        outcome = await summarize(request)
        warnings.extend(outcome.warnings)
        calls = chunks + 1
        if outcome.summary is None:
            if chunks:
                made = f"{calls} summarizer call{'s' if calls > 1 else ''} made"
                warnings.append(f"summary failed at chunk {chunks + 1} ({made})")
            if fall_back is None:
                return SummaryOutcome(None, tuple(warnings), calls)
            whole = await fall_back()
            warnings.extend(whole.warnings)
            if whole.summary is None:
                return SummaryOutcome(None, tuple(warnings), calls)
            return SummaryOutcome(replace(whole.summary, chunks=calls), tuple(warnings), calls)
        summary = outcome.summary
        chunks, start = calls, plan.next_unit
    if summary is None:
        return SummaryOutcome(None, tuple(warnings), chunks)
    return SummaryOutcome(
        ChunkedSummary(summary.text, summary.summarizer, chunks), tuple(warnings), chunks
    )


class _Planner:
    """Chunk planning state; every method is CPU work meant for a worker thread."""

    def __init__(
        self,
        rest: Sequence[Message],
        budget: int,
        max_words: int,
        instructions: str | None,
        tokenizer: Tokenizer,
        counts: Sequence[int] | None = None,
    ) -> None:
        self.rest = tuple(rest)
        self.counts = None if counts is None else tuple(counts)
        self.budget = budget
        self.max_words = max_words
        self.instructions = instructions
        self.tokenizer = tokenizer
        self.units: list[Unit] = []
        self.overhead = 0
        self.room = 0

    def prepare(self) -> None:
        count = self.tokenizer.count
        self.overhead = prompt_overhead(self.max_words, self.instructions, count)
        self.room = self.budget - self.overhead
        # The usual case, a rest far within the budget, is decided from the counts the
        # service already made (cached); the transcript is tokenized only when chunking.
        counted = (
            self.counts if self.counts is not None else count_messages(self.tokenizer, self.rest)
        )
        bound = sum(transcript_bound(m, n) for m, n in zip(self.rest, counted, strict=True))
        if self.overhead + bound <= EXACT_CHECK_SHARE * self.budget:
            self.units = [Unit(self.rest, bound, True)]
            return
        self.units = units_of(self.rest, transcript_costs(self.rest, self.tokenizer.count_batch))

    def plan(self, start: int, summary: str | None) -> ChunkPlan | None:
        """The next chunk; None when not even a cut unit fits beside the carried summary."""
        count, count_batch = self.tokenizer.count, self.tokenizer.count_batch
        carry = carried_pair(summary, self.room, count) if summary is not None else ()
        room = self.room - sum(transcript_costs(carry, count_batch))
        end = next_chunk(self.units, start, room)
        for _ in range(_PLAN_ATTEMPTS):
            if end == start:
                body = cut_unit(self.units[start].messages, room, count, count_batch)
                end, body_cost = start + 1, sum(transcript_costs(body, count_batch))
            else:
                body = tuple(m for unit in self.units[start:end] for m in unit.messages)
                body_cost = sum(u.cost for u in self.units[start:end])
                left = room - body_cost
                if end < len(self.units) and self.units[end].cost > room and left >= room // 4:
                    # the next unit must be cut anyway: cut it into this chunk's space
                    cut = cut_unit(self.units[end].messages, left, count, count_batch)
                    body, end = (*body, *cut), end + 1
                    body_cost += sum(transcript_costs(cut, count_batch))
            messages = (*carry, *body)
            if self.budget - room + body_cost <= EXACT_CHECK_SHARE * self.budget:
                return ChunkPlan(messages, end)
            exact = prompt_tokens(messages, self.max_words, self.instructions, count)
            if exact <= self.budget:
                return ChunkPlan(messages, end)
            # the tokens of the parts did not add up exactly: plan again in less room
            room -= exact - self.budget
            if room <= 0:
                return None
            end = next_chunk(self.units, start, room)
        return None
