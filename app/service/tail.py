"""The `tail` strategy's orchestration: plan the cut, archive, summarize, assemble.

The pure parts are in `app.core.tail` (the plan, the header, the assembly) and
`app.core.rounds`; this module sequences them with the archive and the summarizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.compaction import CompactResult
from app.core.errors import ArchiveError
from app.core.tail import (
    KEPT_SHARE,
    archive_span,
    archived_header,
    archived_text,
    assemble_tail,
    plan_tail,
)
from app.service.prepared import Prepared, refuse_from

if TYPE_CHECKING:
    from app.service.compaction import CompactionService


async def compact_tail(
    service: CompactionService, prepared: Prepared, warnings: list[str]
) -> CompactResult:
    request = prepared.request
    options = request.options
    messages = prepared.messages
    head = prepared.partition.head
    keep = options.keep_recent_rounds or service.defaults.keep_recent_rounds
    thresholds = prepared.thresholds
    target = int(thresholds.context_window * thresholds.threshold * KEPT_SHARE)
    plan = plan_tail(messages, len(head), prepared.counts, keep, target)
    if plan is None:
        note = f"every round would be kept (keep_recent_rounds {keep}): nothing older to archive"
        return prepared.unchanged("too_few_rounds", [*warnings, note], strategy="tail")
    first_kept = len(messages) - len(plan.kept)
    refuse_from(prepared, first_kept + (first_kept in plan.compacted_indexes))
    warnings = [*warnings, *plan.warnings]
    originals = [messages[i] for i in plan.compacted_indexes]
    try:
        archive = await service.save_archive(prepared, originals)
    except ArchiveError as exc:
        return prepared.unchanged("archive_failed", [*warnings, f"archive failed: {exc}"])
    summarized = await service.summarize_rest(
        plan.older, options, request.instructions, warnings, template="archived"
    )
    if summarized is None:
        return prepared.unchanged("summarization_failed", warnings)
    start, cutoff = archive_span(messages, plan.compacted_indexes, service.now().isoformat())
    text = archived_text(archived_header(start, cutoff), summarized.text)
    ledger = await service.ledger(text, plan.older, options, request.session_id)
    output = assemble_tail(head, ledger.text, plan.kept)
    return await service.compacted(
        prepared,
        output,
        archive=archive,
        compacted_indexes=plan.compacted_indexes,
        retained=len(messages) - len(plan.compacted_indexes),
        strategy="tail",
        warnings=warnings,
        summarizer=summarized.summarizer,
        ledger=ledger,
        summary_chunks=summarized.chunks,
    )
