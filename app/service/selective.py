"""The `selective` strategy's pipeline (seed 003 §4.3): rules, then a summary only if needed.

Called by `CompactionService.compact` once the shared front part has validated, counted
and decided.

1. The whole input is checked against the provider's rules: unlike `full`, most of it comes
   back as sent, so a break anywhere is the caller's 422. Then the rest is archived (the
   archive holds every original the rules cut or drop) before any rule runs.
2. The rules (`app.core.selective.plan_selective`) run until the list is under the
   threshold (all of them with `force`).
3. Still over it and `fallback_to_summary`: the rules' output (its memory messages aside,
   which stay verbatim) is summarized through the same path as `full` (chunked when
   long, the fact ledger over the original rest), then the recent files are restored.
4. Any failure rolls back: an exception in the rules or an output that breaks a provider
   rule gives `selective_failed`, a failed summary `summarization_failed`; either way the
   input comes back unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from anyio import to_thread

from app.core.assemble import assemble_messages
from app.core.compaction import (
    ArchiveInfo,
    CompactResult,
    CompactStats,
    LedgerFactInfo,
    NotCompactedReason,
    PhaseInfo,
    RestoredFileInfo,
    SkippedFileInfo,
)
from app.core.dialects import Format
from app.core.errors import ArchiveError
from app.core.ledger import guard_summary
from app.core.messages import Message
from app.core.ports import Archive
from app.core.restore import RestoreSelection
from app.core.selective import SelectiveLimits, SelectivePlan, gap_filled, plan_selective
from app.core.tokens import count_messages
from app.core.validate import violations
from app.service.prepared import Prepared, refuse, unchanged

if TYPE_CHECKING:
    from app.service.compaction import CompactionService, CompactRequest

log = logging.getLogger("context_compact.selective")

Plan = Callable[..., SelectivePlan]


def limits_for(defaults: SelectiveLimits, request: CompactRequest) -> SelectiveLimits:
    """The server's rule parameters with the request's overrides."""
    o = request.options
    d = defaults
    return SelectiveLimits(
        keep_recent=d.keep_recent if o.keep_recent is None else o.keep_recent,
        tool_call_threshold=o.tool_call_threshold or d.tool_call_threshold,
        tool_result_threshold=o.tool_result_threshold or d.tool_result_threshold,
        preview_tokens=o.preview_tokens or d.preview_tokens,
        fallback_to_summary=(
            d.fallback_to_summary if o.fallback_to_summary is None else o.fallback_to_summary
        ),
    )


async def compact_selective(
    service: CompactionService,
    prepared: Prepared,
    warnings: Sequence[str] = (),
    *,
    plan: Plan = plan_selective,
) -> CompactResult:
    request, messages, fmt = prepared.request, prepared.messages, prepared.format
    token_count = prepared.token_count
    refuse(prepared.broken)  # most of the input comes back as sent: a break anywhere is a 422
    try:
        archive = await service.save_archive(prepared, prepared.partition.rest)
    except ArchiveError as exc:
        log.error("archive failed; not compacting", extra={"error": str(exc)})
        return prepared.unchanged("archive_failed", [*warnings, f"archive failed: {exc}"])
    limits = limits_for(service.defaults.selective, request)
    head = prepared.partition.head
    target = prepared.thresholds.threshold_tokens
    try:
        planned: SelectivePlan = await to_thread.run_sync(
            partial(
                plan,
                messages,
                len(head),
                limits,
                target,
                service.tokenizer.count,
                partial(count_messages, service.tokenizer),
                force=request.force,
            )
        )
        _check(planned.messages, fmt)
    except Exception as exc:  # seed 003: any failure of the rules rolls back
        log.exception("selective rules failed; not compacting")
        return prepared.unchanged("selective_failed", [*warnings, f"rules failed: {exc}"])
    done = _Outcome(service, request, token_count, archive, planned, warnings)
    if planned.token_count < target or not limits.fallback_to_summary:
        if not planned.compacted_indexes:
            return prepared.unchanged("nothing_to_compact", warnings)
        if planned.token_count >= target:
            done.warnings.append(
                f"still {planned.token_count} tokens after the rules, over the threshold "
                f"of {target} (fallback_to_summary is off)"
            )
        return done.result(planned.messages, planned.token_count)
    try:
        return await done.summarized(target)
    except Exception as exc:
        log.exception("selective summary failed; not compacting")
        reason = f"summary fallback failed: {exc}"
        return prepared.unchanged("selective_failed", [*warnings, reason])


class _Outcome:
    """Builds the answer of one selective compaction, with or without the summary."""

    def __init__(
        self,
        service: CompactionService,
        request: CompactRequest,
        token_count: int,
        archive: Archive,
        planned: SelectivePlan,
        warnings: Sequence[str] = (),
    ) -> None:
        self.service = service
        self.request = request
        self.token_count = token_count
        self.archive = archive
        self.planned = planned
        self.phases = list(planned.phases)
        self.warnings: list[str] = list(warnings)
        self.summary: str | None = None
        self.summarizer: str | None = None
        self.chunks = 0
        self.ledger: list[LedgerFactInfo] = []
        self.ledger_dropped = 0
        self.selection = RestoreSelection((), ())
        self.compacted = list(planned.compacted_indexes)

    async def summarized(self, target: int) -> CompactResult:
        service, request, planned = self.service, self.request, self.planned
        messages, options = request.messages, request.options
        head = messages[: planned.head_length]
        memory = [messages[i] for i in planned.memory_indexes]
        kept = {id(m) for m in memory}
        rest = [m for m in planned.messages[planned.head_length :] if id(m) not in kept]
        before = planned.token_count
        if not rest:  # only never-compressed messages are left: a summary cannot help
            self.warnings.append(f"still {before} tokens after the rules, over {target}")
            return self.result(planned.messages, before)
        self.phases.append(
            PhaseInfo(phase="summary_start", tokens_before=before, tokens_after=before)
        )
        summarized = await service.summarize_rest(
            rest, options, request.instructions, self.warnings
        )
        if summarized is None:
            reason: NotCompactedReason = "summarization_failed"
            return unchanged(
                messages,
                self.token_count,
                reason,
                self.warnings,
                fmt=request.format,
                strategy="selective",
            )
        original_rest = messages[planned.head_length :]
        budget = service.defaults.ledger_budget
        if options.ledger_budget is not None:
            budget = options.ledger_budget
        ledger = await to_thread.run_sync(
            guard_summary, summarized.text, original_rest, budget, service.tokenizer.count
        )
        self.summary, self.summarizer, self.chunks = (
            ledger.text,
            summarized.summarizer,
            summarized.chunks,
        )
        self.ledger = [
            LedgerFactInfo(kind=fact.kind, text=fact.text, in_summary=stated)
            for fact, stated in ledger.facts
        ]
        self.ledger_dropped = ledger.dropped
        self.selection = await service._restore(
            messages, options, request.session_id, self.warnings
        )
        out = [
            *head,
            *gap_filled([*memory, *assemble_messages((), ledger.text, self.selection.restored)]),
        ]
        _check(out, request.format)
        tokens = await service.count(out)
        self.phases.append(
            PhaseInfo(phase="summary_done", tokens_before=before, tokens_after=tokens)
        )
        memory_indexes = set(planned.memory_indexes)
        self.compacted = [
            i for i in range(planned.head_length, len(messages)) if i not in memory_indexes
        ]
        if tokens >= target:
            self.warnings.append(f"still {tokens} tokens after the summary, over {target}")
        return self.result(out, tokens)

    def result(self, out: Sequence[Message], tokens: int) -> CompactResult:
        ref = self.archive.ref
        before = self.token_count
        stats = CompactStats(
            original_token_count=before,
            compacted_token_count=tokens,
            compaction_ratio=round(tokens / before, 4) if before else 0.0,
            compacted_message_count=len(self.compacted),
            retained_message_count=len(self.request.messages) - len(self.compacted),
            restored_file_count=len(self.selection.restored),
            restored_token_count=self.selection.token_count,
        )
        log.info(
            "selective compaction completed",
            extra={"tokens_before": before, "tokens_after": tokens, "archive_id": ref.id},
        )
        return CompactResult(
            compacted=True,
            format=self.request.format,
            messages=list(out),
            summary=self.summary,
            token_count=before,
            restored_files=[
                RestoredFileInfo(path=f.path, token_count=f.token_count)
                for f in self.selection.restored
            ],
            skipped_files=[
                SkippedFileInfo(path=s.path, reason=s.reason.value) for s in self.selection.skipped
            ],
            stats=stats,
            archive=ArchiveInfo(
                id=ref.id,
                session_id=ref.session_id,
                message_count=ref.message_count,
                sha256=ref.sha256,
            ),
            summarizer=self.summarizer,
            ledger=self.ledger,
            ledger_dropped=self.ledger_dropped,
            strategy="selective",
            compacted_indexes=self.compacted,
            phases=self.phases,
            summary_chunks=self.chunks,
            warnings=self.warnings,
        )


def _check(messages: Sequence[Message], fmt: Format) -> None:
    invalid = violations(messages, fmt)
    if invalid:
        raise ValueError(f"the output breaks a provider rule: {invalid[0]}")
