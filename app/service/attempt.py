"""One strategy's run, and the one place the fate of its archive is settled.

Every strategy writes its archive through `Steps.archive` before it replaces anything. A
failed write is answered here (`archive_failed`), once for every strategy. An archive
written by a run that did not compact (it declined after writing, its summary failed, it
rolled back, raised or was cancelled) or whose result is refused (`no_gain`) is removed:
every archive left belongs to a compaction whose result was returned.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from anyio import CancelScope, get_cancelled_exc_class

from app.core.errors import ArchiveError
from app.core.result import CompactResult, FallbackInfo, NotCompactedReason
from app.service.prepared import Prepared
from app.service.steps import Steps
from app.service.strategy import Strategy

log = logging.getLogger("context_compact.compaction")


async def attempt(
    prepared: Prepared,
    strategy: Strategy[Any],
    steps: Steps,
    warnings: Sequence[str],
    slot: AbstractAsyncContextManager[None],
) -> CompactResult:
    """`strategy` run with `slot` held; a cancelled run whose request names its archive
    (a job's) leaves that archive to the caller, who knows whether the job moved to
    another replica that writes the same id."""
    run = steps.attempt()
    try:
        async with slot:
            result = await strategy.run(prepared, prepared.params(strategy.params), run)
        if warnings:  # the session's, from before the run, come first
            result = result.model_copy(update={"warnings": [*warnings, *result.warnings]})
    except ArchiveError as exc:
        log.error("archive failed; not compacting", extra={"error": str(exc)})
        failed = [*warnings, f"archive failed: {exc}"]
        result = prepared.unchanged("archive_failed", failed, strategy=strategy.name)
    except BaseException as exc:
        cancelled = isinstance(exc, get_cancelled_exc_class())
        if not (cancelled and prepared.request.archive_id is not None):
            with CancelScope(shield=True):
                await _discard(steps, run.written)
        raise
    kept = result.archive.id if result.compacted and result.archive else None
    notes = await _discard(steps, [i for i in run.written if i != kept])
    if notes:
        result = result.model_copy(update={"warnings": [*result.warnings, *notes]})
    return result


async def kept_or_refused(
    prepared: Prepared, result: CompactResult, steps: Steps
) -> tuple[CompactResult, int | None]:
    """A result that is not smaller than the input and under the threshold is refused
    (`no_gain`): the input comes back unchanged and its archive is removed. The tokens the
    refused result would have left, for the fallback's record. Both are the stats' counts,
    measured as the decision was (the model's encoding and margin, the tools, the reply's
    priming), so a result kept is under the threshold the provider's limit sets."""
    if not result.compacted or result.stats is None or result.archive is None:
        return result, None
    after = result.stats.compacted_token_count
    before = result.stats.original_token_count
    limit = prepared.thresholds.threshold_tokens
    if after < before and after < limit:
        return result, None
    note = (
        f"{result.strategy} would leave {after} tokens: not smaller than the "
        f"{before} sent and under the threshold of {limit}"
    )
    stays = await _discard(steps, [result.archive.id])
    warnings = [*result.warnings, *stays, note]
    refused = prepared.unchanged(
        "no_gain", warnings, strategy=result.strategy, summary_chunks=result.summary_chunks
    )
    return refused, after


async def _discard(steps: Steps, archive_ids: Sequence[str]) -> list[str]:
    """Removes these archives; a warning for each that stays."""
    stays: list[str] = []
    for archive_id in archive_ids:
        try:
            await steps.discard(archive_id)
        except ArchiveError as exc:
            log.error("archive of a result not kept stays", extra={"error": str(exc)})
            stays.append(f"the archive {archive_id} of a result not kept stays: {exc}")
    return stays


# Reasons a step declines that the next strategy may do better on. A failed archive or
# summary is a dependency's failure: the next strategy would meet it again.
FALLS_THROUGH: frozenset[NotCompactedReason] = frozenset(
    {"too_few_rounds", "nothing_to_prune", "nothing_to_compact", "selective_failed", "no_gain"}
)


def fallback_info(result: CompactResult, refused_at: int | None) -> FallbackInfo:
    return FallbackInfo(
        strategy=result.strategy,
        reason=result.reason or "no_gain",
        tokens_after=refused_at,
        detail=result.warnings[-1] if result.warnings else None,
    )
