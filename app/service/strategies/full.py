"""`full`: everything after the head becomes one summary, recent files restored."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.assemble import assemble_messages
from app.core.compaction import CompactResult
from app.core.params import RestoreParams, SummaryParams
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared
from app.service.steps import Steps


@dataclass(frozen=True)
class FullParams:
    summary: SummaryParams
    restore: RestoreParams


@dataclass(frozen=True)
class Full:
    name: StrategyName = "full"
    params: type[FullParams] = FullParams
    summarizes: bool = True

    async def run(
        self, prepared: Prepared, params: FullParams, steps: Steps, warnings: list[str]
    ) -> CompactResult:
        request = prepared.request
        messages = prepared.messages
        partition = prepared.partition
        archive = await steps.archive(prepared, partition.rest)
        facts = await steps.facts(partition.rest, params.summary)
        summarized = await steps.summarize(
            partition.rest,
            params.summary,
            request.instructions,
            warnings,
            counts=prepared.counts[len(partition.head) :],
            facts=facts,
        )
        if summarized is None:
            return prepared.unchanged("summarization_failed", warnings, strategy=self.name)
        ledger = await steps.ledger(
            summarized.text, partition.rest, params.summary, prepared.request.session_id, facts
        )
        selection = await steps.restore(messages, params.restore, request.session_id, warnings)
        assembled = assemble_messages(partition.head, ledger.text, selection.restored)
        head = len(partition.head)
        return await steps.result(
            prepared,
            assembled,
            archive=archive,
            compacted_indexes=range(head, len(messages)),
            retained=head,
            strategy=self.name,
            warnings=warnings,
            summarizer=summarized.summarizer,
            ledger=ledger,
            selection=selection,
            summary_chunks=summarized.chunks,
        )
