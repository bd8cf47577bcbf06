"""`tail`: the most recent rounds kept verbatim, the older ones archived
and summarized into one system message.

The pure parts are in `app.core.tail` (the plan, the header, the assembly) and
`app.core.rounds`; this module sequences them with the steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.compaction import CompactResult
from app.core.params import SummaryParams
from app.core.tail import (
    KEPT_SHARE,
    TailDeclined,
    archive_span,
    archived_header,
    archived_text,
    assemble_tail,
    plan_tail,
)
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared, refuse
from app.service.steps import Output, Steps


@dataclass(frozen=True)
class TailParams:
    tail_keep_recent_rounds: int
    summary: SummaryParams


@dataclass(frozen=True)
class Tail:
    name: StrategyName = "tail"
    params: type[TailParams] = TailParams
    summarizes: bool = True
    fallbacks: tuple[StrategyName, ...] = ("full",)

    async def run(self, prepared: Prepared, params: TailParams, steps: Steps) -> CompactResult:
        request = prepared.request
        messages = prepared.messages
        head = prepared.partition.head
        keep = params.tail_keep_recent_rounds
        thresholds = prepared.thresholds
        target = int(thresholds.context_window * thresholds.threshold * KEPT_SHARE)
        plan = plan_tail(messages, len(head), prepared.counts, keep, target)
        if isinstance(plan, TailDeclined):
            return prepared.unchanged("too_few_rounds", [plan.note], self.name)
        refuse(
            [
                v
                for v in prepared.broken
                if v.canonical >= plan.verbatim_from or v.canonical == plan.request_kept
            ]
        )
        originals = [messages[i] for i in plan.compacted_indexes]
        archive = await steps.archive(prepared, originals)
        facts = await steps.facts(plan.older, params.summary)
        summarized = await steps.summarize(
            plan.older, params.summary, request.instructions, template="archived", facts=facts
        )
        warnings = (*plan.warnings, *summarized.warnings)
        if summarized.summary is None:
            return prepared.unchanged("summarization_failed", warnings, self.name)
        start, cutoff = archive_span(messages, plan.compacted_indexes, steps.now().isoformat())
        text = archived_text(archived_header(start, cutoff), summarized.summary.text)
        ledger = await steps.ledger(text, plan.older, params.summary, request.session_id, facts)
        output = Output(
            assemble_tail(head, ledger.text, plan.kept),
            archive,
            plan.compacted_indexes,
            warnings,
            summary=summarized.summary,
            ledger=ledger,
        )
        return await steps.result(prepared, self.name, output)


STRATEGY = Tail()
