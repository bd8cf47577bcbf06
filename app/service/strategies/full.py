"""`full`: everything after the head becomes one summary, recent files restored."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.assemble import assemble_messages
from app.core.compaction import CompactResult
from app.core.params import RestoreParams, SummaryParams
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared
from app.service.steps import Output, Steps


@dataclass(frozen=True)
class FullParams:
    summary: SummaryParams
    restore: RestoreParams


@dataclass(frozen=True)
class Full:
    name: StrategyName = "full"
    params: type[FullParams] = FullParams
    summarizes: bool = True
    # It summarizes everything after the system prompt: nothing smaller is left to try.
    fallbacks: tuple[StrategyName, ...] = ()

    async def run(self, prepared: Prepared, params: FullParams, steps: Steps) -> CompactResult:
        request = prepared.request
        messages = prepared.messages
        partition = prepared.partition
        archive = await steps.archive(prepared, partition.rest)
        facts = await steps.facts(partition.rest, params.summary)
        summarized = await steps.summarize(
            partition.rest,
            params.summary,
            request.instructions,
            counts=prepared.counts[len(partition.head) :],
            facts=facts,
        )
        if summarized.summary is None:
            return prepared.unchanged(
                "summarization_failed", summarized.warnings, self.name, summarized.calls
            )
        ledger = await steps.ledger(
            summarized.summary.text, partition.rest, params.summary, request.session_id, facts
        )
        restored = await steps.restore(messages, params.restore, request.session_id)
        assembled = assemble_messages(partition.head, ledger.text, restored.selection.restored)
        output = Output(
            assembled,
            archive,
            compacted_indexes=range(len(partition.head), len(messages)),
            warnings=(*summarized.warnings, *restored.warnings),
            summary=summarized.summary,
            ledger=ledger,
            restored=restored.selection,
        )
        return await steps.result(prepared, self.name, output)


STRATEGY = Full()
