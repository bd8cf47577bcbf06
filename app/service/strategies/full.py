"""`full`: everything after the head becomes one summary, recent files restored.

Everything but the user's new request: a list that ends with a user message that is not
only tool results (the request an agent is about to send) keeps it, verbatim, after the
summary and the restored files. Summarized, the request would leave a list ending with the
summary's acknowledgement: an assistant prefill (Anthropic refuses one with extended
thinking) that asks nothing. A list ending with tool results (a tool loop) is summarized
whole: they answer a call that is summarized too.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.assemble import assemble_messages
from app.core.compaction import CompactResult
from app.core.messages import Message, ToolResultBlock
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
        kept = new_request(partition.rest)
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
            return prepared.unchanged("summarization_failed", summarized.warnings, self.name)
        ledger = await steps.ledger(
            summarized.summary.text, rest, params.summary, request.session_id, facts
        )
        restored = await steps.restore(messages, params.restore, request.session_id)
        assembled = assemble_messages(partition.head, ledger.text, restored.selection.restored)
        output = Output(
            [*assembled, *kept],
            archive,
            compacted_indexes=range(len(partition.head), len(messages) - len(kept)),
            warnings=(*summarized.warnings, *restored.warnings),
            summary=summarized.summary,
            ledger=ledger,
            restored=restored.selection,
        )
        return await steps.result(prepared, self.name, output)


def new_request(rest: tuple[Message, ...]) -> tuple[Message, ...]:
    """The user's new request at the end of `rest`, kept as sent; none when it is the
    only message, the model's, or carries a tool result (which answers a call summarized)."""
    last = rest[-1] if len(rest) > 1 else None
    if last is None or last.role != "user":
        return ()
    if not isinstance(last.content, str) and any(
        isinstance(b, ToolResultBlock) for b in last.content
    ):
        return ()
    return (last,)


STRATEGY = Full()
