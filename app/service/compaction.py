"""The compaction pipeline: prepare → session gate → summary slot → strategy → record.

1. Prepare (`_prepare`): validate, count, decide, partition; answer unchanged
   when below the threshold, with nothing to compact, or with tool calls still pending.
2. Session gate (`app.service.sessions.session_gate`): from the session's records, past
   `max_iterations` the answer is unchanged; during the cooldown after a failed summary a
   summarizing strategy becomes `prune`.
3. Summary slot (`app.service.slots`): a strategy that may summarize holds one of the
   bounded slots from its archive write to its result.
4. Strategy (`app.service.registry`): each one a peer in `app.service.strategies`, run
   with the shared `Steps`; it archives what it replaces and builds its answer with them.
   A run that does not compact leaves no archive (`app.service.attempt`). A result not smaller than
   the input and under the threshold is refused (`no_gain`, archive removed) and the next
   strategy of its fallbacks runs, until one reaches it.
5. Record (`app.service.sessions.record`): the session's record of the attempt.

A dependency's failure is an outcome, never an exception to the caller: an archive failure
or a failed summary returns the input unchanged with a reason (`Prepared.unchanged`).
Tokenizing and file reads run in worker threads so one large request never stalls the
event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from anyio import to_thread

from app.core.decide import (
    Basis,
    Decision,
    Thresholds,
    decide,
    estimate_pending_input,
)
from app.core.errors import (
    InvalidConversationError,
    InvalidRequestError,
    RecordStoreError,
)
from app.core.messages import Message
from app.core.model_table import MODELS, ModelSpec
from app.core.options import RunParams, former_name_warnings
from app.core.ports import (
    Archive,
    ArchiveStore,
    ProviderCounter,
    Summarizer,
    Tokenizer,
    WorkdirReader,
)
from app.core.provider import OutputBudget, violations
from app.core.result import CompactResult, FallbackInfo
from app.core.sessions import CompactionRecord, RecordStore, refilling
from app.service.answers import Count, Held, HoldCheck, Judged
from app.service.attempt import FALLS_THROUGH, attempt, fallback_info, kept_or_refused
from app.service.clock import time_sortable_id, utc_now
from app.service.counting import CountingService
from app.service.defaults import Defaults
from app.service.freshness import Freshness
from app.service.overrides import pick
from app.service.prepared import CompactRequest, Prepared, prepared_for, refuse
from app.service.registry import FALLBACKS, STRATEGIES
from app.service.sessions import (
    Admitted,
    Declined,
    context_hold,
    last_output_end,
    record,
    refill_info,
    session_gate,
)
from app.service.slots import SummarySlots
from app.service.steps import Encodings, Steps
from app.service.strategy import Strategy
from app.service.summaries import Summaries
from app.service.summary_cache import reuse_within
from app.service.summary_cost import metering

__all__ = ["CompactRequest", "CompactionPorts", "CompactionService", "Count", "Defaults"]

log = logging.getLogger("context_compact.compaction")


@dataclass(frozen=True)
class CompactionPorts:
    """What a compaction service works with, beside its defaults: the core's ports (the
    tokenizers, summarizers, work directory, stores and provider counter) and the service's
    own parts (slots, the seen-file times, the clock, the id source and the model table)."""

    tokenizer: Tokenizer
    summarizer: Summarizer
    workdir: WorkdirReader
    archive: ArchiveStore
    fallback: Summarizer | None = None
    provider_counter: ProviderCounter | None = None
    freshness: Freshness | None = None
    records: RecordStore | None = None
    slots: SummarySlots | None = None
    o200k: Tokenizer | None = None
    models: Mapping[str, ModelSpec] = field(default_factory=lambda: MODELS)
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = time_sortable_id


class CompactionService(CountingService):
    """Counts (`CountingService`), decides and compacts. Built once at start-up with its
    ports."""

    def __init__(self, ports: CompactionPorts, defaults: Defaults) -> None:
        self.ports = ports
        super().__init__(
            tokenizer=ports.tokenizer,
            provider_counter=ports.provider_counter,
            o200k=ports.o200k,
            models=ports.models,
        )
        self.workdir = ports.workdir
        self.archive = ports.archive
        self.records = ports.records
        self.slots = ports.slots
        self._clock = ports.clock
        self.summaries = Summaries(ports.summarizer, ports.fallback, ports.tokenizer, defaults)
        self.steps = Steps(
            encodings=Encodings(ports.tokenizer, ports.o200k),
            summaries=self.summaries,
            workdir=ports.workdir,
            archives=ports.archive,
            defaults=defaults,
            freshness=ports.freshness,
            clock=ports.clock,
            new_id=ports.new_id,
        )

    @property
    def summarizer(self) -> Summarizer:
        return self.summaries.summarizer

    @summarizer.setter
    def summarizer(self, summarizer: Summarizer) -> None:
        """Swaps the summarizer of every strategy (tests and the command line do)."""
        self.summaries.summarizer = summarizer

    @property
    def defaults(self) -> Defaults:
        return self.steps.defaults

    @defaults.setter
    def defaults(self, defaults: Defaults) -> None:
        """Replaces the server's defaults for every strategy (tests do)."""
        self.steps.defaults = defaults
        self.summaries.defaults = defaults

    @property
    def fallback(self) -> Summarizer | None:
        return self.summaries.fallback

    def now(self) -> datetime:
        return self._clock()

    def thresholds(
        self,
        *,
        context_window: int | None = None,
        threshold: float | None = None,
        overflow_threshold: float | None = None,
        min_messages: int | None = None,
        input_limit: int | None = None,
        output: OutputBudget | None = None,
    ) -> Thresholds:
        """The server's thresholds with a request's overrides. A raised threshold lifts the
        default overflow threshold with it; an explicit overflow below it is refused. The
        shares apply to what the provider lets the input take: the window less the output
        the request reserves, within the model's input limit."""
        base = self.defaults.thresholds
        share = pick(threshold, base.threshold)
        if overflow_threshold is not None and overflow_threshold < share:
            raise InvalidRequestError(
                "overflow_threshold", "overflow_threshold must be >= threshold"
            )
        return Thresholds(
            context_window=pick(context_window, base.context_window),
            threshold=share,
            overflow_threshold=pick(overflow_threshold, max(base.overflow_threshold, share)),
            min_messages=pick(min_messages, base.min_messages),
            input_limit=input_limit,
            output=output or OutputBudget(),
        )

    async def judge(
        self,
        message_count: int,
        thresholds: Thresholds,
        basis: Basis,
        count: Callable[[], Awaitable[Count]],
    ) -> Judged:
        """The decision both `/should-compact` and `/compact` act on, from the same count: the
        provider's last usage when given (exact and free), else `count()`."""
        tokens = basis.usage_count()
        if tokens is not None:
            return Judged(decide(tokens, message_count, thresholds), "last_usage", None)
        counted = await count()
        decision = self.decide_counted(counted, message_count, thresholds, basis.pending_input)
        return Judged(decision, "counted", counted)

    def _counter(
        self, messages: Sequence[Message], basis: Basis, local: int | None = None
    ) -> Callable[[], Awaitable[Count]]:
        """The count `judge` asks for: `local` (the messages' cl100k count, when known) or
        a count by the basis' tokenizer."""

        async def count() -> Count:
            if local is not None and basis.tokenizer == "tiktoken":
                return self.as_judged(Count(local, self.tokenizer.name), basis)
            return self.as_judged(await self.count_with(messages, basis.tokenizer), basis)

        return count

    def decide_counted(
        self,
        counted: Count,
        message_count: int,
        thresholds: Thresholds,
        pending_input: str | None = None,
    ) -> Decision:
        """The decision on a context already counted, with the input about to be sent."""
        tokens = counted.token_count
        if pending_input:
            tokens += estimate_pending_input(pending_input)
        return decide(tokens, message_count, thresholds)

    async def session_hold(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        decision: Decision,
        thresholds: Thresholds,
    ) -> HoldCheck:
        """The session's hold on a context that is over the threshold (as `/compact`
        applies it): none without a session, below the threshold, or with no hold."""
        if session_id is None or self.records is None or not decision.should_compact:
            return HoldCheck()
        try:
            past = await to_thread.run_sync(self.records.list, session_id)
        except RecordStoreError as exc:
            return HoldCheck(warnings=(f"session records unreadable, holds not applied: {exc}",))
        hold, notes = context_hold(past, messages, decision.token_count, thresholds)
        if hold is None:
            return HoldCheck(warnings=notes)
        if hold.reason != "thrashing":
            return HoldCheck(Held(hold, ()), notes)
        since = last_output_end(past)
        recent = list(messages[since:])
        counts = [0] * since + await self.count_each(recent)
        refill = tuple(refill_info(r) for r in refilling(messages, counts, since))
        return HoldCheck(Held(hold, refill), notes)

    async def compact(self, request: CompactRequest) -> CompactResult:
        """Raises `InvalidConversationError` when the input breaks a provider rule in a part that
        would come back as sent: the head always, the whole list when nothing is compacted.
        A break in the summarized part is summarized away. Options sent under a former name
        worked as their new name; the answer's first warnings say which, so callers migrate.
        A provider request's top-level `system` is the head: the error names it `system` and
        counts `messages[i]` as sent."""
        try:
            result = await self._compact(request)
        except InvalidConversationError as exc:
            head = request.provider.head if request.provider is not None else 0
            if not head:
                raise
            raise exc.sent_with(head) from None
        renamed = former_name_warnings(request.options)
        if not renamed:
            return result
        return result.model_copy(update={"warnings": [*renamed, *result.warnings]})

    async def _compact(self, request: CompactRequest) -> CompactResult:
        prepared, judged, thresholds = await self._prepare(request)
        return _reported(await self._compact_prepared(prepared), judged, thresholds)

    async def _compact_prepared(self, prepared: Prepared | CompactResult) -> CompactResult:
        if isinstance(prepared, CompactResult):
            return prepared
        admitted = await session_gate(self.records, self.defaults, self.now(), prepared)
        if isinstance(admitted, Declined):
            if admitted.record:
                return await record(self.records, self.now(), prepared, admitted.result)
            return admitted.result
        with metering() as tally, reuse_within(prepared.request.session_id):
            result = await self._run_chain(prepared, admitted)
        result = result.model_copy(update={"summarizer_cost": tally.cost})
        return await record(self.records, self.now(), prepared, result)

    async def _run_chain(self, prepared: Prepared, admitted: Admitted) -> CompactResult:
        """The strategy, then its fallbacks while each declines or misses the goal. During
        a cooldown, no summarizing fallback: the cooldown is there to spare the LLM."""
        chain = [admitted.strategy]
        if prepared.params(RunParams).fallback:
            chain += [
                name
                for name in FALLBACKS[admitted.strategy]
                if not (admitted.cooling_down and STRATEGIES[name].summarizes)
            ]
        tried: list[FallbackInfo] = []
        calls = 0  # summarizer calls of every strategy tried, reported in the answer
        for position, name in enumerate(chain):
            strategy = STRATEGIES[name]
            slot = self._summary_slot(prepared.request, strategy)
            result = await attempt(prepared, strategy, self.steps, admitted.warnings, slot)
            result, refused_at = await kept_or_refused(prepared, result, self.steps)
            calls += result.summary_chunks
            last = position == len(chain) - 1
            if result.compacted or result.reason not in FALLS_THROUGH or last:
                if not result.compacted:
                    refuse(prepared.broken)  # all of it comes back as sent, forced or not
                return result.model_copy(update={"fallbacks": tried, "summary_chunks": calls})
            tried.append(fallback_info(result, refused_at))
        raise RuntimeError("a strategy chain is never empty")  # pragma: no cover

    def _summary_slot(
        self, request: CompactRequest, strategy: Strategy[Any]
    ) -> AbstractAsyncContextManager[None]:
        """One of the bounded summary slots for a strategy that calls a summarizer, held
        from its archive write to its result; raises `BusyError` before anything is written."""
        if self.slots is None or not strategy.summarizes:
            return nullcontext()
        return self.slots.hold(background=request.background)

    async def _prepare(
        self, request: CompactRequest
    ) -> tuple[Prepared | CompactResult, Judged, Thresholds]:
        """The front every strategy shares: validate, count, decide, partition, and decline
        to compact with unanswered tool calls at the end. With the decision and the
        thresholds it applied, which every answer reports."""
        messages = request.messages
        options = request.options
        fmt = request.format
        broken = violations(messages, fmt, pending_tail_ok=True, forms=request.forms)
        counts = await self.count_each(messages)
        token_count = sum(counts)
        thresholds = self.thresholds(
            context_window=options.context_window,
            threshold=options.threshold,
            min_messages=options.min_messages,
            input_limit=request.input_limit,
            output=request.output,
        )
        counter = self._counter(messages, request.basis, token_count)
        judged = await self.judge(len(messages), thresholds, request.basis, counter)
        server = self.defaults.server_options_for(options)
        prepared = prepared_for(request, counts, thresholds, broken, judged.decision, server)
        return prepared, judged, thresholds

    async def list_records(self, session_id: str) -> list[CompactionRecord]:
        if self.records is None:
            return []
        return await to_thread.run_sync(self.records.list, session_id)

    async def load_archive(self, archive_id: str) -> Archive | None:
        return await to_thread.run_sync(self.archive.load, archive_id)


def _reported(result: CompactResult, judged: Judged, thresholds: Thresholds) -> CompactResult:
    """`result` with the count and the limit its decision was made on, as `/should-compact`
    reports them for the same body: one count, whatever the route."""
    counted = judged.counted
    return result.model_copy(
        update={
            "token_count": judged.decision.token_count,
            "token_source": judged.source,
            "exact": counted.exact if counted is not None else True,
            "limit_tokens": thresholds.limit,
            "limited_by": thresholds.limited_by,
            "output_budget": thresholds.output.tokens,
        }
    )
