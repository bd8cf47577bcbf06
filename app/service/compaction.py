"""The compaction pipeline: prepare → session gate → summary slot → strategy → record.

1. Prepare (`_prepare`, DESIGN §3): validate, count, decide, partition; answer unchanged
   when below the threshold, with nothing to compact, or with tool calls still pending.
2. Session gate (`app.service.sessions.session_gate`, seeds 002/003): from the session's
   records, past `max_iterations` the answer is unchanged; during the cooldown after a
   failed summary a summarizing strategy becomes `prune`.
3. Summary slot (`app.service.slots`): a strategy that calls a summarizer holds one of
   the bounded slots from its archive write to its result.
4. Strategy: `full` here (seed 000: summary of everything after the head, files
   restored); `tail`, `prune` and `selective` in their own modules. Each archives the
   originals it replaces and builds its answer with `CompactionService.compacted`.
5. Record (`app.service.sessions.record`): the session's record of the attempt.

A dependency's failure is an outcome, never an exception to the caller: an archive failure
or a failed summary returns the input unchanged with a reason (`Prepared.unchanged`).
Tokenizing and file reads run in worker threads so one large request never stalls the
event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from anyio import to_thread

from app.core.assemble import assemble_messages
from app.core.chunking import DEFAULT_SUMMARY_INPUT_BUDGET
from app.core.compaction import (
    ArchiveInfo,
    CompactOptions,
    CompactResult,
    CompactStats,
    LedgerFactInfo,
    NotCompactedReason,
    PhaseInfo,
    RestoredFileInfo,
    SkippedFileInfo,
)
from app.core.decide import (
    Decision,
    Thresholds,
    decide,
    estimate_pending_input,
    usage_tokens,
)
from app.core.dialects import Format, dump_as
from app.core.errors import ArchiveError, CountError, SummarizerError
from app.core.file_ops import Vocabulary
from app.core.ids import archive_sha256
from app.core.ledger import LedgerBudget, LedgerReport, guard_summary, summary_words_for
from app.core.messages import Message, tool_uses
from app.core.partition import partition_messages
from app.core.ports import (
    Archive,
    ArchiveRef,
    ArchiveStore,
    FileText,
    ProviderCounter,
    Summarizer,
    SummaryRequest,
    SummaryTemplate,
    Tokenizer,
    WorkdirReader,
)
from app.core.prompt import (
    SUMMARY_SYSTEM,
    build_archived_prompt,
    build_summary_prompt,
    serialize_for_summary,
)
from app.core.recall import recall_note
from app.core.records import (
    SUMMARIZING_STRATEGIES,
    CompactionRecord,
    RecordReason,
    RecordStore,
)
from app.core.restore import (
    FileReadTool,
    RestoreLimits,
    RestoreSelection,
    plan_restore,
    read_tools_from,
    select_restored,
)
from app.core.selective import SelectiveLimits
from app.core.tokens import count_messages
from app.core.validate import violations
from app.service.chunked import ChunkedSummary, summarize_in_chunks
from app.service.clock import time_sortable_id, utc_now
from app.service.freshness import Freshness
from app.service.overrides import pick
from app.service.prepared import Prepared, refuse, unchanged
from app.service.prune import compact_prune
from app.service.selective import compact_selective
from app.service.sessions import record, session_gate
from app.service.slots import SummarySlots
from app.service.tail import compact_tail

log = logging.getLogger("context_compact.compaction")
NO_FILES = RestoreSelection((), ())


@dataclass(frozen=True)
class Defaults:
    """Server-wide defaults that a request's options may override."""

    thresholds: Thresholds
    restore: RestoreLimits
    read_tools: tuple[FileReadTool, ...]
    max_summary_words: int
    ledger_budget: int | None = None  # fixed; None: `ledger` of the context window
    ledger: LedgerBudget = field(default_factory=LedgerBudget)
    keep_recent_rounds: int = 10
    prune_keep_recent: int = 3
    prune_exclude_tools: tuple[str, ...] = ()
    prune_min_tokens: int = 0
    prune_clear_inputs: bool = False
    max_iterations: int = 0
    summary_cooldown_seconds: float = 300.0
    summary_input_budget: int = DEFAULT_SUMMARY_INPUT_BUDGET
    selective: SelectiveLimits = field(default_factory=SelectiveLimits)


TokenizerChoice = Literal["tiktoken", "anthropic"]


@dataclass(frozen=True)
class Count:
    """A token count, who made it, and whether it is exact."""

    token_count: int
    tokenizer: str
    exact: bool = True
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompactRequest:
    messages: Sequence[Message]
    options: CompactOptions = field(default_factory=CompactOptions)
    session_id: str | None = None
    force: bool = False
    instructions: str | None = None
    format: Format = "anthropic"
    background: bool = False  # waits for a summary slot instead of `BusyError`
    reason: RecordReason | None = None

    @property
    def record_reason(self) -> RecordReason:
        """As sent; else `manual` for a forced compaction, `llm_call` otherwise."""
        return self.reason or ("manual" if self.force else "llm_call")


class CompactionService:
    """Counts, decides and compacts. Built once at start-up with its ports."""

    def __init__(
        self,
        *,
        tokenizer: Tokenizer,
        summarizer: Summarizer,
        workdir: WorkdirReader,
        archive: ArchiveStore,
        defaults: Defaults,
        fallback: Summarizer | None = None,
        provider_counter: ProviderCounter | None = None,
        freshness: Freshness | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = time_sortable_id,
        records: RecordStore | None = None,
        slots: SummarySlots | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.summarizer = summarizer
        self.workdir = workdir
        self.archive = archive
        self.defaults = defaults
        self.fallback = fallback
        self.provider_counter = provider_counter
        self.freshness = freshness
        self._clock = clock
        self._new_id = new_id
        self.records = records
        self.slots = slots

    def now(self) -> datetime:
        return self._clock()

    async def count(self, messages: Sequence[Message]) -> int:
        return sum(await self.count_each(messages))

    async def count_with(self, messages: Sequence[Message], tokenizer: TokenizerChoice) -> Count:
        """The provider's count when asked for and available; else the local one, marked
        inexact with a warning when the provider's was asked for."""
        if tokenizer == "anthropic":
            if self.provider_counter is None:
                warning = "no Anthropic API key: counted locally"
            else:
                try:
                    total = await self.provider_counter.count_tokens(messages)
                except CountError as exc:
                    log.warning("provider count failed", extra={"error": str(exc)})
                    warning = f"{exc}: counted locally"
                else:
                    return Count(total, self.provider_counter.name)
            local = await self.count(messages)
            return Count(local, self.tokenizer.name, exact=False, warnings=(warning,))
        return Count(await self.count(messages), self.tokenizer.name)

    async def count_each(self, messages: Sequence[Message]) -> list[int]:
        return await to_thread.run_sync(count_messages, self.tokenizer, messages)

    def thresholds(
        self,
        *,
        context_window: int | None = None,
        threshold: float | None = None,
        overflow_threshold: float | None = None,
        min_messages: int | None = None,
    ) -> Thresholds:
        """The server's thresholds with a request's overrides. A raised threshold lifts the
        default overflow threshold with it; an explicit overflow below it is refused."""
        base = self.defaults.thresholds
        share = pick(threshold, base.threshold)
        if overflow_threshold is not None and overflow_threshold < share:
            raise ValueError("overflow_threshold must be >= threshold")
        return Thresholds(
            context_window=pick(context_window, base.context_window),
            threshold=share,
            overflow_threshold=pick(overflow_threshold, max(base.overflow_threshold, share)),
            min_messages=pick(min_messages, base.min_messages),
        )

    async def should_compact(
        self,
        messages: Sequence[Message],
        thresholds: Thresholds,
        usage: Mapping[str, Any] | None = None,
        pending_input: str | None = None,
        tokenizer: TokenizerChoice = "tiktoken",
    ) -> tuple[Decision, Literal["counted", "last_usage"], Count | None]:
        """Decide from the provider's last usage when given (exact and free), else count."""
        if usage is not None:
            tokens = usage_tokens(usage) + estimate_pending_input(pending_input or "")
            return decide(tokens, len(messages), thresholds), "last_usage", None
        counted = await self.count_with(messages, tokenizer)
        tokens = counted.token_count
        if pending_input:
            tokens += estimate_pending_input(pending_input)
        return decide(tokens, len(messages), thresholds), "counted", counted

    async def compact(self, request: CompactRequest) -> CompactResult:
        """Raises `InvalidConversationError` when the input breaks a provider rule in a part that
        would come back as sent: the head always, the whole list when nothing is compacted.
        A break in the summarized part is summarized away."""
        prepared = await self._prepare(request)
        if isinstance(prepared, CompactResult):
            return prepared
        gate = await session_gate(self, prepared)
        if isinstance(gate, CompactResult):
            return gate
        strategy, warnings = gate
        async with self._summary_slot(request, strategy):
            if strategy == "tail":
                result = await compact_tail(self, prepared, warnings)
            elif strategy == "prune":
                result = await compact_prune(self, prepared, warnings)
            elif strategy == "selective":
                result = await compact_selective(self, prepared, warnings)
            else:
                result = await self._compact_full(prepared, warnings)
        return await record(self, prepared, result)

    def _summary_slot(
        self, request: CompactRequest, strategy: str
    ) -> AbstractAsyncContextManager[None]:
        """One of the bounded summary slots for a strategy that calls a summarizer, held
        from its archive write to its result; raises `BusyError` before anything is written."""
        if self.slots is None or strategy not in SUMMARIZING_STRATEGIES:
            return nullcontext()
        return self.slots.hold(background=request.background)

    async def _prepare(self, request: CompactRequest) -> Prepared | CompactResult:
        """The front every strategy shares: validate, count, decide, partition, and decline
        to compact with unanswered tool calls at the end."""
        messages = request.messages
        options = request.options
        fmt = request.format
        strategy = options.strategy
        broken = violations(messages, fmt, pending_tail_ok=True)
        counts = await self.count_each(messages)
        token_count = sum(counts)
        thresholds = self.thresholds(
            context_window=options.context_window,
            threshold=options.threshold,
            min_messages=options.min_messages,
        )
        decision = decide(token_count, len(messages), thresholds)
        if not (request.force or decision.should_compact):
            refuse(broken)
            reason = _decision_reason(decision)
            return unchanged(messages, token_count, reason, fmt=fmt, strategy=strategy)
        partition = partition_messages(messages)
        if not partition.rest:
            refuse(broken)
            return unchanged(
                messages, token_count, "nothing_to_compact", fmt=fmt, strategy=strategy
            )
        refuse([v for v in broken if v.index < len(partition.head)])
        if any(tool_uses(messages[-1])):
            # Summarizing an unanswered tool call would orphan the results the agent is
            # about to append: compact after they are in.
            return unchanged(
                messages,
                token_count,
                "pending_tool_calls",
                ["the last assistant message has tool calls that are not answered yet"],
                fmt=fmt,
                strategy=strategy,
            )
        return Prepared(request, tuple(counts), token_count, partition, thresholds, tuple(broken))

    async def list_records(self, session_id: str) -> list[CompactionRecord]:
        if self.records is None:
            return []
        return await to_thread.run_sync(self.records.list, session_id)

    async def save_archive(self, prepared: Prepared, originals: Sequence[Message]) -> Archive:
        """Archives the originals of what a strategy replaces, in the request's format.
        Raises `ArchiveError`."""
        request = prepared.request
        try:
            return await to_thread.run_sync(
                self._save_archive, originals, request.session_id, request.format
            )
        except ValueError as exc:
            raise ArchiveError(str(exc)) from exc

    async def _compact_full(self, prepared: Prepared, warnings: list[str]) -> CompactResult:
        """Seed 000: everything after the head becomes a summary, recent files restored."""
        request = prepared.request
        messages = prepared.messages
        options = request.options
        partition = prepared.partition
        try:
            archive = await self.save_archive(prepared, partition.rest)
        except ArchiveError as exc:
            log.error("archive failed; not compacting", extra={"error": str(exc)})
            return prepared.unchanged("archive_failed", [*warnings, f"archive failed: {exc}"])

        summarized = await self.summarize_rest(
            partition.rest,
            options,
            request.instructions,
            warnings,
            counts=prepared.counts[len(partition.head) :],
        )
        if summarized is None:
            return prepared.unchanged("summarization_failed", warnings)
        ledger = await self.ledger(summarized.text, partition.rest, options, request.session_id)

        selection = await self.restore(messages, options, request.session_id, warnings)
        assembled = assemble_messages(partition.head, ledger.text, selection.restored)
        head = len(partition.head)
        return await self.compacted(
            prepared,
            assembled,
            archive=archive,
            compacted_indexes=range(head, len(messages)),
            retained=head,
            strategy="full",
            warnings=warnings,
            summarizer=summarized.summarizer,
            ledger=ledger,
            selection=selection,
            summary_chunks=summarized.chunks,
        )

    async def ledger(
        self,
        summary: str,
        covered: Sequence[Message],
        options: CompactOptions,
        session_id: str | None = None,
    ) -> LedgerReport:
        """The summary with the fact ledger of the messages it covers appended; with a
        session, a closing line saying how to recall what the archive holds."""
        return await to_thread.run_sync(
            guard_summary,
            summary,
            covered,
            self.ledger_budget(options),
            self.tokenizer.count,
            Vocabulary.from_specs(options.file_tools or ()),
            recall_note(session_id) if session_id else "",
        )

    def summary_words(self, options: CompactOptions) -> int:
        """The request's word limit; else the server's, lowered for a small window so the
        summary takes about the ledger's share of it too (`summary_words_for`)."""
        if options.max_summary_words:
            return options.max_summary_words
        window = pick(options.context_window, self.defaults.thresholds.context_window)
        return summary_words_for(
            window, self.defaults.ledger.share, self.defaults.max_summary_words
        )

    def ledger_budget(self, options: CompactOptions) -> int:
        """The request's budget, else the server's fixed one, else its share of the window."""
        fixed = pick(options.ledger_budget, self.defaults.ledger_budget)
        window = pick(options.context_window, self.defaults.thresholds.context_window)
        return LedgerBudget(
            self.defaults.ledger.share, self.defaults.ledger.floor, self.defaults.ledger.cap, fixed
        ).tokens(window)

    async def compacted(
        self,
        prepared: Prepared,
        output: list[Message],
        *,
        archive: Archive,
        compacted_indexes: Sequence[int],
        retained: int,
        strategy: str,
        warnings: Sequence[str],
        summarizer: str | None = None,
        ledger: LedgerReport | None = None,
        selection: RestoreSelection = NO_FILES,
        summary_chunks: int = 0,
        phases: Sequence[PhaseInfo] = (),
        compacted_tokens: int | None = None,
    ) -> CompactResult:
        """The result of a compaction that happened, for every strategy. The output must
        pass the validator of the request's format: every strategy builds it valid, so a
        violation is a bug. `compacted_tokens` when the strategy has counted the output."""
        invalid = violations(output, prepared.format)
        if invalid:
            raise AssertionError(f"compacted output breaks a provider rule: {invalid}")
        token_count = prepared.token_count
        if compacted_tokens is None:
            compacted_tokens = await self.count(output)
        stats = CompactStats(
            original_token_count=token_count,
            compacted_token_count=compacted_tokens,
            compaction_ratio=round(compacted_tokens / token_count, 4) if token_count else 0.0,
            compacted_message_count=len(compacted_indexes),
            retained_message_count=retained,
            restored_file_count=len(selection.restored),
            restored_token_count=selection.token_count,
            ledger_budget=ledger.budget if ledger else 0,
            ledger_token_count=ledger.token_count if ledger else 0,
        )
        log.info(
            "compaction completed",
            extra={
                "strategy": strategy,
                "tokens_before": token_count,
                "tokens_after": compacted_tokens,
                "archive_id": archive.ref.id,
                "summarizer": summarizer,
            },
        )
        return CompactResult(
            compacted=True,
            format=prepared.format,
            messages=output,
            summary=ledger.text if ledger else None,
            token_count=token_count,
            restored_files=[
                RestoredFileInfo(path=f.path, token_count=f.token_count) for f in selection.restored
            ],
            skipped_files=[
                SkippedFileInfo(path=s.path, reason=s.reason.value) for s in selection.skipped
            ],
            stats=stats,
            archive=ArchiveInfo(
                id=archive.ref.id,
                session_id=archive.ref.session_id,
                message_count=archive.ref.message_count,
                sha256=archive.ref.sha256,
            ),
            summarizer=summarizer,
            ledger=[
                LedgerFactInfo(kind=fact.kind, text=fact.text, in_summary=stated)
                for fact, stated in (ledger.facts if ledger else ())
            ],
            ledger_dropped=ledger.dropped if ledger else 0,
            ledger_dropped_kinds=dict(ledger.dropped_kinds) if ledger else {},
            strategy=strategy,
            compacted_indexes=list(compacted_indexes),
            phases=list(phases),
            summary_chunks=summary_chunks,
            warnings=list(warnings),
        )

    def _save_archive(
        self, rest: Sequence[Message], session_id: str | None, fmt: Format
    ) -> Archive:
        archive = self._build_archive(rest, session_id, fmt)
        self.archive.save(archive)
        return archive

    def _build_archive(
        self, rest: Sequence[Message], session_id: str | None, fmt: Format
    ) -> Archive:
        dumped = dump_as(rest, fmt)
        ref = ArchiveRef(
            id=self._new_id(),
            session_id=session_id,
            message_count=len(dumped),
            sha256=archive_sha256(dumped),
        )
        return Archive(ref=ref, created_at=self._clock().isoformat(), messages=dumped)

    async def summarize_rest(
        self,
        rest: Sequence[Message],
        options: CompactOptions,
        instructions: str | None,
        warnings: list[str],
        template: SummaryTemplate = "sections",
        counts: Sequence[int] | None = None,
    ) -> ChunkedSummary | None:
        """The summary of `rest`, in chunks when its prompt would exceed the input budget.
        `counts`: the token counts of `rest`'s messages when the caller has them (for 200k
        tokens, making them again from the cache costs ~2-3 ms of count texts and keys).

        A summarizer that reads the messages rather than the prompt (`reads_prompt` false:
        the extractive one) has no window, so it always gets the whole rest at once: chunks
        would only make it summarize its own summaries."""
        if not getattr(self.summarizer, "reads_prompt", True):
            request = await to_thread.run_sync(
                self._summary_request, rest, options, instructions, template
            )
            summarized = await self._summarize(request, warnings)
            return None if summarized is None else ChunkedSummary(*summarized, chunks=1)
        return await summarize_in_chunks(
            rest,
            budget=pick(options.summary_input_budget, self.defaults.summary_input_budget),
            max_words=self.summary_words(options),
            instructions=instructions,
            tokenizer=self.tokenizer,
            build_request=lambda chunk: self._summary_request(
                chunk, options, instructions, template
            ),
            summarize=self._summarize,
            warnings=warnings,
            counts=counts,
        )

    def _summary_request(
        self,
        rest: Sequence[Message],
        options: CompactOptions,
        instructions: str | None,
        template: SummaryTemplate = "sections",
    ) -> SummaryRequest:
        max_words = self.summary_words(options)
        build = build_archived_prompt if template == "archived" else build_summary_prompt
        prompt = (
            build(serialize_for_summary(rest), max_words, instructions)
            if self._prompt_is_read()
            else ""
        )
        return SummaryRequest(
            messages=tuple(rest),
            system=SUMMARY_SYSTEM,
            prompt=prompt,
            max_words=max_words,
            instructions=instructions,
            template=template,
            file_tools=tuple(options.file_tools or ()),
        )

    def _prompt_is_read(self) -> bool:
        """Only summarizers that read the prompt get one (`reads_prompt`, true unless a
        summarizer says otherwise): for 200k tokens it is ~2x the request body, and the
        extractive summarizer reads the messages instead."""
        return any(getattr(s, "reads_prompt", True) for s in (self.summarizer, self.fallback) if s)

    async def _summarize(
        self, request: SummaryRequest, warnings: list[str]
    ) -> tuple[str, str] | None:
        """The summary and who wrote it; None when every summarizer failed (UC-006)."""
        try:
            return await self._summary_text(self.summarizer, request), self.summarizer.name
        except SummarizerError as exc:
            log.warning("summarizer failed", extra={"summarizer": self.summarizer.name})
            warnings.append(f"summarizer {self.summarizer.name} failed: {exc}")
        if self.fallback is None:
            return None
        try:
            summary = await self._summary_text(self.fallback, request)
        except SummarizerError as exc:
            warnings.append(f"fallback summarizer {self.fallback.name} failed: {exc}")
            return None
        warnings.append(f"summary written by the fallback summarizer {self.fallback.name}")
        return summary, self.fallback.name

    @staticmethod
    async def _summary_text(summarizer: Summarizer, request: SummaryRequest) -> str:
        text = (await summarizer.summarize(request)).strip()
        if not text:  # F-004: an empty summary is a failed summary, whoever wrote it
            raise SummarizerError("empty summary", retryable=False)
        return text

    async def restore(
        self,
        messages: Sequence[Message],
        options: CompactOptions,
        session_id: str | None = None,
        warnings: list[str] | None = None,
    ) -> RestoreSelection:
        """The recently read files to re-inject (F-005), within the request's limits; with
        a session, their reads are noted for the freshness check."""
        base = self.defaults.restore
        limits = RestoreLimits(
            max_files=pick(options.max_restore_files, base.max_files),
            max_tokens_per_file=pick(options.max_restore_tokens_per_file, base.max_tokens_per_file),
            max_tokens_total=pick(options.max_restore_tokens_total, base.max_tokens_total),
        )
        tools = (
            read_tools_from(options.read_tools) if options.read_tools else self.defaults.read_tools
        )
        paths = plan_restore(messages, tools, limits.max_files)
        if not paths:
            return RestoreSelection((), ())

        def read_and_count() -> RestoreSelection:
            reads = [self.workdir.read_text(p, limits.max_bytes_per_file) for p in paths]
            fresh = self.freshness if session_id is not None else None
            if fresh is not None and session_id is not None:
                reads = fresh.note_reads(session_id, reads, warnings)
            texts = [r for r in reads if isinstance(r, FileText)]
            counts = self.tokenizer.count_batch([t.text for t in texts])
            selection = select_restored(
                reads, {t.path: n for t, n in zip(texts, counts, strict=True)}, limits
            )
            if fresh is not None and session_id is not None:
                fresh.record_reads(session_id, texts, selection.restored, warnings)
            return selection

        return await to_thread.run_sync(read_and_count)

    async def load_archive(self, archive_id: str) -> Archive | None:
        return await to_thread.run_sync(self.archive.load, archive_id)


def _decision_reason(decision: Decision) -> NotCompactedReason:
    return "below_min_messages" if decision.reason == "below_min_messages" else "below_threshold"
