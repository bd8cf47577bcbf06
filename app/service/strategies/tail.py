"""`tail`: the most recent rounds kept verbatim, the older ones archived
and summarized into one system message (in the Anthropic shape, a user turn and its
acknowledgement: `app.core.assemble.summary_turns`).

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
    archived_end,
    archived_groups,
    archived_header,
    archived_text,
    assemble_tail,
    plan_tail,
)
from app.core.result import CompactResult
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared, refuse
from app.service.steps import Output, Steps

# Earlier archived summaries are summarized again, with their ledgers merged, once together
# they take more than this share of the threshold tokens: kept one after another they
# would fill the context compaction after compaction until `tail` could not get under it.
FOLD_SHARE = 0.25


def _folded(
    lead: Sequence[Message], counts: Sequence[int], threshold: int
) -> list[tuple[int, ...]]:
    """The archived summaries of the head (system messages, user turns with their
    acknowledgements) when they are to be folded, else []."""
    groups = archived_groups(lead)
    tokens = sum(counts[i] for group in groups for i in group)
    return groups if tokens > threshold * FOLD_SHARE else []


@dataclass(frozen=True)
class TailParams:
    tail_keep_recent_rounds: int
    summary: SummaryParams


@dataclass(frozen=True)
class Tail:
    name: StrategyName = "tail"
    description: str = (
        "the most recent rounds are kept verbatim, older ones become an archived summary (a "
        "system message; in the Anthropic shape a user turn and its acknowledgement)."
    )
    params: type[TailParams] = TailParams
    summarizes: bool = True
    fallbacks: tuple[StrategyName, ...] = ("full",)

    async def run(self, prepared: Prepared, params: TailParams, steps: Steps) -> CompactResult:
        request = prepared.request
        messages = prepared.messages
        # Earlier archives in the user-turn form count as head: kept as sent, or folded.
        lead = messages[: archived_end(messages, len(prepared.partition.head))]
        keep = params.tail_keep_recent_rounds
        thresholds = prepared.thresholds
        target = int(thresholds.limit * thresholds.threshold * KEPT_SHARE)
        plan = plan_tail(messages, len(lead), prepared.counts, keep, target)
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
        folded = _folded(lead, prepared.counts, thresholds.threshold_tokens)
        if folded:
            notes.append(
                f"{len(folded)} earlier archived summaries take "
                f"{sum(prepared.counts[i] for group in folded for i in group)} tokens, over "
                f"{FOLD_SHARE:.0%} of the threshold: summarized again into the new one"
            )
        gone = {i for group in folded for i in group}
        indexes = [*sorted(gone), *plan.compacted_indexes]
        older = [*(carried_ledger(lead[group[0]]) for group in folded), *plan.older]
        kept_head = [m for i, m in enumerate(lead) if i not in gone]
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
        # An earlier archive kept before this one holds the session's goal: the first
        # request of what this one covers is a later request.
        kept_archive = bool(archived_groups(kept_head))
        ledger = await steps.ledger(
            text, older, params.summary, request.recall_session, facts, goal_known=kept_archive
        )
        output = Output(
            assemble_tail(kept_head, ledger.text, plan.kept, prepared.format),
            archive,
            indexes,
            warnings,
            summary=summarized.summary,
            ledger=ledger,
        )
        return await steps.result(prepared, self.name, output)


STRATEGY = Tail()
