"""The operations every strategy composes, handed to it as one small typed object.

A strategy never sees the service: it gets the prepared request and these steps
(archive, facts, summarize, ledger, restore, build the result, count, the clock). Each step
runs its I/O or CPU work off the event loop. A strategy that summarizes reads the facts of
what it summarizes once and hands them to both the summary and the ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from copy import copy
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from anyio import to_thread

from app.core.assemble import CONTINUE
from app.core.errors import ArchiveError, InvalidOutputError
from app.core.history import ExtractedFacts, extract_facts
from app.core.ledger import LedgerReport, guard_summary
from app.core.messages import Message, text_message
from app.core.options import RestoreParams, SummaryParams
from app.core.ports import (
    Archive,
    ArchiveRef,
    ArchiveStore,
    FileText,
    SummaryTemplate,
    Tokenizer,
    WorkdirReader,
)
from app.core.provider import dump_as, violations
from app.core.recall import recall_note
from app.core.restore import RestoreSelection, plan_restore, select_restored
from app.core.result import (
    ArchiveInfo,
    CompactResult,
    CompactStats,
    LedgerFactInfo,
    PhaseInfo,
    RestoredFileInfo,
    SkippedFileInfo,
)
from app.core.sessions import archive_sha256
from app.core.tokens import count_messages, count_total
from app.core.vocabulary import StrategyName
from app.service.chunked import ChunkedSummary, SummaryOutcome
from app.service.defaults import Defaults
from app.service.freshness import Freshness
from app.service.prepared import CompactRequest, Prepared
from app.service.summaries import Summaries

log = logging.getLogger("context_compact.compaction")
NO_FILES = RestoreSelection((), ())


@dataclass(frozen=True)
class Restored:
    """The files to re-inject, and the warnings of their freshness checks."""

    selection: RestoreSelection = NO_FILES
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Output:
    """What a strategy built, for `Steps.result`: the messages, the archive of what they
    replace, which input messages that is, and what the steps on the way returned (the
    summary and its ledger, the restored files, the phases, the warnings). `token_count`
    when the strategy has counted the messages."""

    messages: list[Message]
    archive: Archive
    compacted_indexes: Sequence[int]
    warnings: Sequence[str] = ()
    summary: ChunkedSummary | None = None
    ledger: LedgerReport | None = None
    restored: RestoreSelection = NO_FILES
    phases: Sequence[PhaseInfo] = ()
    token_count: int | None = None


@dataclass(frozen=True)
class Encodings:
    """The pipeline's tokenizer (cl100k), and o200k when loaded: a compaction's stats count
    by the model's encoding, as `/count` does."""

    cl100k: Tokenizer
    o200k: Tokenizer | None = None


@dataclass(frozen=True)
class Stated:
    """A compaction's counts as `/count` gives them (`Steps._stated`)."""

    before: int
    after: int
    tokenizer: str
    request: int | None


class Steps:
    """The shared steps of every strategy, built once by the service with its ports."""

    def __init__(
        self,
        *,
        encodings: Encodings,
        summaries: Summaries,
        workdir: WorkdirReader,
        archives: ArchiveStore,
        defaults: Defaults,
        freshness: Freshness | None,
        clock: Callable[[], datetime],
        new_id: Callable[[], str],
    ) -> None:
        self.tokenizer = encodings.cl100k
        self.o200k = encodings.o200k
        self.summaries = summaries
        self.workdir = workdir
        self.archives = archives
        self.defaults = defaults
        self.freshness = freshness
        self._clock = clock
        self._new_id = new_id
        self.written: list[str] = []

    def attempt(self) -> Steps:
        """These steps for one strategy run, noting the archives it writes (`written`):
        the service removes them when the run's result is not kept."""
        steps = copy(self)
        steps.written = []
        return steps

    def now(self) -> datetime:
        return self._clock()

    async def count(self, messages: Sequence[Message]) -> int:
        return sum(await self.count_each(messages))

    async def count_each(self, messages: Sequence[Message]) -> list[int]:
        return await to_thread.run_sync(count_messages, self.tokenizer, messages)

    async def archive(self, prepared: Prepared, originals: Sequence[Message]) -> Archive:
        """Archives the originals of what a strategy replaces, in the request's format,
        durably, before anything is replaced. Raises `ArchiveError`, which the service
        answers with `archive_failed`. An archive of no message is a strategy's bug (a
        compaction that replaces nothing): refused before anything is written."""
        if not originals:
            raise ValueError("an archive holds at least one message")
        request = prepared.request
        try:
            archive = await to_thread.run_sync(self._save_archive, originals, request)
        except ValueError as exc:
            raise ArchiveError(str(exc)) from exc
        self.written.append(archive.ref.id)
        return archive

    async def discard(self, archive_id: str) -> None:
        """Removes the archive of a result that was not kept. Raises `ArchiveError`."""
        await to_thread.run_sync(self.archives.delete, archive_id)

    async def facts(self, rest: Sequence[Message], params: SummaryParams) -> ExtractedFacts:
        """What `rest` shows, read once for both the summary and the ledger of it."""
        return await to_thread.run_sync(extract_facts, rest, params.vocabulary)

    async def summarize(
        self,
        rest: Sequence[Message],
        params: SummaryParams,
        instructions: str | None,
        template: SummaryTemplate = "sections",
        counts: Sequence[int] | None = None,
        facts: ExtractedFacts | None = None,
    ) -> SummaryOutcome:
        """The summary of `rest` (chunked when long), none when it failed, with the
        warnings met on the way. `facts`: `rest`'s, from `facts`, for a summarizer that
        reads them."""
        return await self.summaries.summarize(rest, params, instructions, template, counts, facts)

    async def ledger(
        self,
        summary: str,
        covered: Sequence[Message],
        params: SummaryParams,
        recall_session: str | None,
        facts: ExtractedFacts | None = None,
        *,
        goal_known: bool = False,
    ) -> LedgerReport:
        """The summary with the fact ledger of the messages it covers appended; with a
        `recall_session` (the request's `recall_session`: a session, and the model has the
        `recall` tool), a closing line saying how to recall what the archive holds.
        `facts`: `covered`'s, from `facts`, when the strategy read them for the summary
        too. `goal_known`: a summary kept beside this one holds the goal."""
        return await to_thread.run_sync(
            partial(
                guard_summary,
                summary,
                covered,
                params.ledger_budget,
                self.tokenizer.count,
                params.vocabulary,
                recall_note(recall_session) if recall_session else "",
                facts,
                goal_known=goal_known,
            )
        )

    async def restore(
        self,
        messages: Sequence[Message],
        params: RestoreParams,
        session_id: str | None = None,
    ) -> Restored:
        """The recently read files to re-inject, within the request's limits; with
        a session, their reads are noted for the freshness check."""
        limits = params.limits
        paths = plan_restore(messages, params.tools, limits.max_files)
        if not paths:
            return Restored()

        def read_and_count() -> Restored:
            reads = [self.workdir.read_text(p, limits.max_bytes_per_file) for p in paths]
            fresh = self.freshness if session_id is not None else None
            warnings: list[str] = []
            if fresh is not None and session_id is not None:
                reads, warnings = fresh.note_reads(session_id, reads)
            texts = [r for r in reads if isinstance(r, FileText)]
            counts = self.tokenizer.count_batch([t.text for t in texts])
            selection = select_restored(
                reads, {t.path: n for t, n in zip(texts, counts, strict=True)}, limits
            )
            if fresh is not None and session_id is not None:
                recorded = fresh.record_reads(session_id, texts, selection.restored)
                warnings += [w for w in recorded if w not in warnings]
            return Restored(selection, tuple(warnings))

        return await to_thread.run_sync(read_and_count)

    async def result(
        self, prepared: Prepared, strategy: StrategyName, built: Output
    ) -> CompactResult:
        """The result of a compaction that happened, for every strategy. The output must
        pass the validator of the request's format: every strategy builds it valid, so a
        violation is a bug (`InvalidOutputError`). Every input message not in
        `compacted_indexes` is carried over as sent."""
        output = built.messages
        invalid = violations(output, prepared.format, forms=prepared.request.forms)
        if invalid:
            raise InvalidOutputError(invalid)
        token_count = prepared.token_count
        compacted_tokens = built.token_count
        if compacted_tokens is None:
            compacted_tokens = await self._count_output(prepared, output)
        compacted_indexes, ledger, selection = built.compacted_indexes, built.ledger, built.restored
        archive, summarizer = built.archive, built.summary.summarizer if built.summary else None
        stated = await self._stated(prepared, output, compacted_tokens)
        before, after = stated.before, stated.after
        stats = CompactStats(
            original_token_count=before,
            compacted_token_count=after,
            compaction_ratio=round(after / before, 4) if before else 0.0,
            compacted_message_count=len(compacted_indexes),
            retained_message_count=len(prepared.messages) - len(compacted_indexes),
            restored_file_count=len(selection.restored),
            restored_token_count=selection.token_count,
            ledger_budget=ledger.budget if ledger else 0,
            ledger_token_count=ledger.token_count if ledger else 0,
            tokenizer=stated.tokenizer,
            request_token_count=stated.request,
        )
        log.info(
            "compaction completed",
            extra={
                "strategy": strategy,
                "tokens_before": before,
                "tokens_after": after,
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
            phases=list(built.phases),
            summary_chunks=built.summary.chunks if built.summary else 0,
            warnings=list(built.warnings),
        )

    async def _stated(
        self, prepared: Prepared, output: Sequence[Message], local_after: int
    ) -> Stated:
        """Before and after as `/count` counts the same body: by the basis' local encoding
        (o200k for a model counted by it), raised by the model's margin, the reply's priming
        and the tool definitions, so one body has one count on every route. The pipeline's
        cl100k counts are reused when they are the basis'. With a provider request, the
        `request` handed back too: it ends with a `Continue.` turn after an acknowledgement
        (`app.core.provider.request`)."""
        basis = prepared.request.basis
        before, after, counter = prepared.token_count, local_after, self.tokenizer
        if basis.tokenizer == "o200k" and self.o200k is not None:
            counter = self.o200k
            before = await to_thread.run_sync(count_total, counter, prepared.messages)
            after = await to_thread.run_sync(count_total, counter, output)
        request: int | None = None
        if prepared.request.provider is not None:
            seam = [text_message("user", CONTINUE)] if output[-1].role == "assistant" else []
            extra = await to_thread.run_sync(count_total, counter, seam)
            request = basis.raised(after + extra, local=True)
        return Stated(
            basis.raised(before, local=True), basis.raised(after, local=True), counter.name, request
        )

    async def _count_output(self, prepared: Prepared, output: Sequence[Message]) -> int:
        """The output's tokens, counting only what the input did not already count: a
        message carried over as sent (the same object) keeps its count, and counts add up
        message by message."""
        known = {id(m): n for m, n in zip(prepared.messages, prepared.counts, strict=True)}
        new = [m for m in output if id(m) not in known]
        return sum(known.get(id(m), 0) for m in output) + await self.count(new)

    def _save_archive(self, rest: Sequence[Message], request: CompactRequest) -> Archive:
        dumped = dump_as(rest, request.format, request.forms)
        ref = ArchiveRef(
            id=request.archive_id or self._new_id(),
            session_id=request.session_id,
            message_count=len(dumped),
            sha256=archive_sha256(dumped),
        )
        archive = Archive(ref=ref, created_at=self._clock().isoformat(), messages=dumped)
        self.archives.save(archive)
        return archive
