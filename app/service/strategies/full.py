"""`full`: everything after the head becomes one summary, recent files restored; the
user's new request, when the list ends with one, stays last, as sent (`current_turn` in
app/core/assemble.py), unless it is over `KEPT_TURN_SHARE` of the threshold: then it is
summarized with the rest (kept, it would leave the compacted list near the threshold, a
`no_gain`, and the next model call over the window).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.assemble import assemble_messages, current_turn
from app.core.options import RestoreParams, SummaryParams
from app.core.result import CompactResult
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared
from app.service.steps import Output, Steps

# The largest new request kept as sent, as a share of the threshold's tokens.
KEPT_TURN_SHARE = 0.25


@dataclass(frozen=True)
class FullParams:
    summary: SummaryParams
    restore: RestoreParams


@dataclass(frozen=True)
class Full:
    name: StrategyName = "full"
    description: str = (
        "everything after the system prompt is summarized (but the user's new request, when "
        "the list ends with one: kept last)."
    )
    params: type[FullParams] = FullParams
    summarizes: bool = True
    # It summarizes everything after the system prompt: nothing smaller is left to try.
    fallbacks: tuple[StrategyName, ...] = ()

    async def run(self, prepared: Prepared, params: FullParams, steps: Steps) -> CompactResult:
        request = prepared.request
        messages = prepared.messages
        partition = prepared.partition
        kept = current_turn(partition.rest)
        if kept and prepared.counts[-1] > KEPT_TURN_SHARE * prepared.thresholds.threshold_tokens:
            kept = ()
        rest = partition.rest[: len(partition.rest) - len(kept)]
        archive = await steps.archive(prepared, partition.rest)  # the request too, as before
        facts = await steps.facts(rest, params.summary)
        summarized = await steps.summarize(
            rest,
            params.summary,
            request.instructions,
            counts=prepared.counts[len(partition.head) : len(messages) - len(kept)],
            facts=facts,
        )
        if summarized.summary is None:
            return prepared.unchanged(
                "summarization_failed", summarized.warnings, self.name, summarized.calls
            )
        ledger = await steps.ledger(
            summarized.summary.text, rest, params.summary, request.session_id, facts
        )
        restored = await steps.restore(messages, params.restore, request.session_id)
        assembled = assemble_messages(
            partition.head, ledger.text, restored.selection.restored, kept
        )
        output = Output(
            assembled,
            archive,
            compacted_indexes=range(len(partition.head), len(messages) - len(kept)),
            warnings=(*summarized.warnings, *restored.warnings),
            summary=summarized.summary,
            ledger=ledger,
            restored=restored.selection,
        )
        return await steps.result(prepared, self.name, output)


STRATEGY = Full()
