"""`tail`: the most recent rounds kept verbatim, the older ones archived
and summarized into one system message.

The pure parts are in `app.core.plans.tail` (the plan, the header, the assembly) and
`app.core.history.rounds`; this module sequences them with the steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.ledger import carried_ledger
from app.core.messages import Message
from app.core.options import SummaryParams
from app.core.plans import (
    KEPT_SHARE,
    TailDeclined,
    archive_span,
    archived_header,
    archived_text,
    assemble_tail,
    plan_tail,
)
from app.core.result import CompactResult
from app.core.summary import ARCHIVED_TITLE
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared, refuse
from app.service.steps import Output, Steps

# Earlier archived summaries are summarized again, with their ledgers merged, once together
# they take more than this share of the threshold tokens: kept one after another they
# would fill the context compaction after compaction until `tail` could not get under it.
FOLD_SHARE = 0.25


def _folded(head: Sequence[Message], counts: Sequence[int], threshold: int) -> list[int]:
    """The indexes of the head's archived summaries when they are to be folded, else []."""
    archived = [
        i
        for i, m in enumerate(head)
        if m.role == "system"
        and isinstance(m.content, str)
        and m.content.startswith(ARCHIVED_TITLE)
    ]
    return archived if sum(counts[i] for i in archived) > threshold * FOLD_SHARE else []


@dataclass(frozen=True)
class TailParams:
    tail_keep_recent_rounds: int
    summary: SummaryParams


@dataclass(frozen=True)
class Tail:
    name: StrategyName = "tail"
    description: str = (
        "the most recent rounds are kept verbatim, older ones become an archived summary (a "
        "system message)."
    )
    params: type[TailParams] = TailParams
    summarizes: bool = True
    fallbacks: tuple[StrategyName, ...] = ("full",)

    async def run(self, prepared: Prepared, params: TailParams, steps: Steps) -> CompactResult:
        request = prepared.request
        messages = prepared.messages
        head = prepared.partition.head
        keep = params.tail_keep_recent_rounds
        thresholds = prepared.thresholds
        target = int(thresholds.limit * thresholds.threshold * KEPT_SHARE)
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
        notes = list(plan.warnings)
        folded = _folded(head, prepared.counts, thresholds.threshold_tokens)
        if folded:
            notes.append(
                f"{len(folded)} earlier archived summaries take "
                f"{sum(prepared.counts[i] for i in folded)} tokens, over "
                f"{FOLD_SHARE:.0%} of the threshold: summarized again into the new one"
            )
        indexes = [*folded, *plan.compacted_indexes]
        older = [*(carried_ledger(head[i]) for i in folded), *plan.older]
        kept_head = [m for i, m in enumerate(head) if i not in folded]
        archive = await steps.archive(prepared, [messages[i] for i in indexes])
        facts = await steps.facts(older, params.summary)
        summarized = await steps.summarize(
            older, params.summary, request.instructions, template="archived", facts=facts
        )
        warnings = (*notes, *summarized.warnings)
        if summarized.summary is None:
            return prepared.unchanged("summarization_failed", warnings, self.name, summarized.calls)
        start, cutoff = archive_span(messages, indexes, steps.now().isoformat())
        text = archived_text(archived_header(start, cutoff), summarized.summary.text)
        ledger = await steps.ledger(text, older, params.summary, request.session_id, facts)
        output = Output(
            assemble_tail(kept_head, ledger.text, plan.kept),
            archive,
            indexes,
            warnings,
            summary=summarized.summary,
            ledger=ledger,
        )
        return await steps.result(prepared, self.name, output)


STRATEGY = Tail()
