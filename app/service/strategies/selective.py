"""`selective`: rules, then a summary only if needed.

1. The whole input is checked against the provider's rules: unlike `full`, most of it comes
   back as sent, so a break anywhere is the caller's 422. Then the rest is archived (the
   archive holds every original the rules cut or drop) before any rule runs.
2. The rules (`app.core.selective.plan_selective`) run until the list is under the
   threshold (all of them with `force`).
3. Still over it and `selective_fallback_to_summary`: the rules' output (its memory messages aside,
   which stay verbatim) is summarized through the same path as `full` (chunked when
   long, the fact ledger over the original rest), then the recent files are restored.
4. Any failure rolls back: an exception in the rules or an output that breaks a provider
   rule gives `selective_failed`, a failed summary `summarization_failed`; either way the
   input comes back unchanged (and the service removes the archive).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from anyio import to_thread

from app.core.assemble import assemble_messages
from app.core.compaction import CompactResult, PhaseInfo
from app.core.dialects import OpenAIForms
from app.core.ledger import LedgerReport
from app.core.messages import Message
from app.core.params import RestoreParams, SummaryParams
from app.core.ports import Archive
from app.core.restore import RestoreSelection
from app.core.selective import SelectiveLimits, SelectivePlan, gap_filled, plan_selective
from app.core.tokens import count_messages
from app.core.validate import violations
from app.core.vocabulary import Format, StrategyName
from app.service.chunked import ChunkedSummary
from app.service.prepared import Prepared, refuse
from app.service.steps import Output, Steps

log = logging.getLogger("context_compact.selective")

Plan = Callable[..., SelectivePlan]


@dataclass(frozen=True)
class SelectiveParams:
    selective_keep_recent: int
    selective_tool_call_threshold: int
    selective_tool_result_threshold: int
    selective_preview_tokens: int
    selective_fallback_to_summary: bool
    summary: SummaryParams
    restore: RestoreParams

    @property
    def limits(self) -> SelectiveLimits:
        return SelectiveLimits(
            keep_recent=self.selective_keep_recent,
            tool_call_threshold=self.selective_tool_call_threshold,
            tool_result_threshold=self.selective_tool_result_threshold,
            preview_tokens=self.selective_preview_tokens,
            fallback_to_summary=self.selective_fallback_to_summary,
        )


@dataclass(frozen=True)
class Selective:
    """`plan`: the rules (a test passes another to exercise the rollback)."""

    name: StrategyName = "selective"
    params: type[SelectiveParams] = SelectiveParams
    summarizes: bool = True
    fallbacks: tuple[StrategyName, ...] = ("full",)
    plan: Plan = plan_selective

    async def run(self, prepared: Prepared, params: SelectiveParams, steps: Steps) -> CompactResult:
        return await _run(steps, prepared, params, self.plan)


async def _run(
    steps: Steps, prepared: Prepared, params: SelectiveParams, plan: Plan
) -> CompactResult:
    request, messages, fmt = prepared.request, prepared.messages, prepared.format
    refuse(prepared.broken)  # most of the input comes back as sent: a break anywhere is a 422
    archive = await steps.archive(prepared, prepared.partition.rest)
    limits = params.limits
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
                steps.tokenizer.count,
                partial(count_messages, steps.tokenizer),
                force=request.force,
            )
        )
        _check(planned.messages, fmt, request.forms)
    except Exception as exc:  # any failure of the rules rolls back
        log.exception("selective rules failed; not compacting")
        return prepared.unchanged("selective_failed", [f"rules failed: {exc}"], "selective")
    done = _Outcome(steps, prepared, params, archive, planned)
    if planned.token_count < target or not limits.fallback_to_summary:
        if not planned.compacted_indexes:
            return prepared.unchanged("nothing_to_compact", (), "selective")
        if planned.token_count >= target:
            done.warnings.append(
                f"still {planned.token_count} tokens after the rules, over the threshold "
                f"of {target} (selective_fallback_to_summary is off)"
            )
        return await done.result(planned.messages, planned.token_count)
    try:
        return await done.with_summary(target)
    except Exception as exc:
        log.exception("selective summary failed; not compacting")
        reason = f"summary fallback failed: {exc}"
        return prepared.unchanged("selective_failed", [reason], "selective")


class _Outcome:
    """Builds the answer of one selective compaction, with or without the summary: what
    each step returns (the summary, its ledger, the restored files, their warnings) is
    kept here until `result` hands it to `Steps.result` as one `Output`."""

    def __init__(
        self,
        steps: Steps,
        prepared: Prepared,
        params: SelectiveParams,
        archive: Archive,
        planned: SelectivePlan,
    ) -> None:
        self.steps = steps
        self.prepared = prepared
        self.params = params
        self.archive = archive
        self.planned = planned
        self.phases = list(planned.phases)
        self.warnings: list[str] = []
        self.summarized: ChunkedSummary | None = None
        self.ledger: LedgerReport | None = None
        self.selection = RestoreSelection((), ())
        self.compacted = list(planned.compacted_indexes)

    async def with_summary(self, target: int) -> CompactResult:
        steps, planned = self.steps, self.planned
        request = self.prepared.request
        messages, params = request.messages, self.params
        head = messages[: planned.head_length]
        memory = [messages[i] for i in planned.memory_indexes]
        kept = {id(m) for m in memory}
        rest = [m for m in planned.messages[planned.head_length :] if id(m) not in kept]
        before = planned.token_count
        if not rest:  # only never-compressed messages are left: a summary cannot help
            self.warnings.append(f"still {before} tokens after the rules, over {target}")
            return await self.result(planned.messages, before)
        self.phases.append(
            PhaseInfo(phase="summary_start", tokens_before=before, tokens_after=before)
        )
        outcome = await steps.summarize(rest, params.summary, request.instructions)
        self.warnings += outcome.warnings
        summarized = outcome.summary
        if summarized is None:
            return self.prepared.unchanged("summarization_failed", self.warnings, "selective")
        self.summarized = summarized
        # The ledger checks the summary against the original rest, not the rules' output:
        # a fact a rule cut must still reach the summary.
        self.ledger = await steps.ledger(
            summarized.text, messages[planned.head_length :], params.summary, request.session_id
        )
        restored = await steps.restore(messages, params.restore, request.session_id)
        self.warnings += [w for w in restored.warnings if w not in self.warnings]
        self.selection = restored.selection
        out = [
            *head,
            *gap_filled(
                [*memory, *assemble_messages((), self.ledger.text, self.selection.restored)]
            ),
        ]
        _check(out, request.format, request.forms)
        tokens = await steps.count(out)
        self.phases.append(
            PhaseInfo(phase="summary_done", tokens_before=before, tokens_after=tokens)
        )
        memory_indexes = set(planned.memory_indexes)
        self.compacted = [
            i for i in range(planned.head_length, len(messages)) if i not in memory_indexes
        ]
        if tokens >= target:
            self.warnings.append(f"still {tokens} tokens after the summary, over {target}")
        return await self.result(out, tokens)

    async def result(self, out: Sequence[Message], tokens: int) -> CompactResult:
        built = Output(
            list(out),
            self.archive,
            self.compacted,
            self.warnings,
            summary=self.summarized,
            ledger=self.ledger,
            restored=self.selection,
            phases=self.phases,
            token_count=tokens,
        )
        return await self.steps.result(self.prepared, "selective", built)


STRATEGY = Selective()


def _check(messages: Sequence[Message], fmt: Format, forms: OpenAIForms) -> None:
    invalid = violations(messages, fmt, forms=forms)
    if invalid:
        raise ValueError(f"the output breaks a provider rule: {invalid[0]}")
