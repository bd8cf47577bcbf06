"""`selective`: rules, then a summary only if needed.

1. The whole input is checked against the provider's rules: unlike `full`, most of it comes
   back as sent, so a break anywhere is the caller's 422. Then the rest is archived (the
   archive holds every original the rules cut or drop) before any rule runs.
2. The rules (`app.core.plans.selective.plan_selective`) run until the list is under the
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
from dataclasses import dataclass, replace
from functools import partial

from anyio import to_thread

from app.core.assemble import assemble_messages
from app.core.ledger import LedgerReport, carried_ledger, is_ledger_message, ledger_message
from app.core.messages import Message
from app.core.options import RestoreParams, SummaryParams
from app.core.plans import SelectiveLimits, SelectivePlan, gap_filled, plan_selective
from app.core.ports import Archive
from app.core.provider import OpenAIForms, violations
from app.core.restore import RestoreSelection
from app.core.result import CompactResult, PhaseInfo
from app.core.tokens import count_messages
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
    description: str = (
        "per-type rules in priority order (old tool blocks dropped and large fields of the kept "
        "ones cut to a preview, skill prompts, assistant and user messages beyond "
        "`selective_keep_recent`), stopping once under the threshold; an LLM summary only if "
        "still over it."
    )
    params: type[SelectiveParams] = SelectiveParams
    summarizes: bool = True
    fallbacks: tuple[StrategyName, ...] = ("full",)
    plan: Plan = plan_selective

    async def run(self, prepared: Prepared, params: SelectiveParams, steps: Steps) -> CompactResult:
        return await _run(steps, prepared, params, self.plan)


async def _run(
    steps: Steps, prepared: Prepared, params: SelectiveParams, plan: Plan
) -> CompactResult:
    refuse(prepared.broken)  # most of the input comes back as sent: a break anywhere is a 422
    # A ledger an earlier compaction left standing in the head is merged and replaced: the
    # archive holds it with the rest.
    standing = [m for m in prepared.partition.head if is_ledger_message(m)]
    archive = await steps.archive(prepared, [*standing, *prepared.partition.rest])
    limits = params.limits
    target = prepared.thresholds.threshold_tokens
    try:
        planned = await _rules(steps, prepared, limits, plan, target)
    except Exception as exc:  # any failure of the rules rolls back
        log.exception("selective rules failed; not compacting")
        return prepared.unchanged("selective_failed", [f"rules failed: {exc}"], "selective")
    done = _Outcome(steps, prepared, params, archive, planned)
    if planned.token_count < target or not limits.fallback_to_summary:
        if not planned.compacted_indexes:
            return prepared.unchanged("nothing_to_compact", (), "selective")
        out, tokens = await done.with_ledger()
        if tokens >= target and limits.fallback_to_summary:
            # The ledger took the list over: the rules run again, short of it by its size.
            try:
                planned = await _rules(
                    steps, prepared, limits, plan, target - (tokens - planned.token_count)
                )
            except Exception as exc:
                log.exception("selective rules failed; not compacting")
                reason = f"rules failed: {exc}"
                return prepared.unchanged("selective_failed", [reason], "selective")
            done = _Outcome(steps, prepared, params, archive, planned)
            out, tokens = await done.with_ledger()
        if tokens < target or not limits.fallback_to_summary:
            if tokens >= target:
                done.warnings.append(
                    f"still {tokens} tokens after the rules, over the threshold "
                    f"of {target} (selective_fallback_to_summary is off)"
                )
            return await done.result(out, tokens)
        done = _Outcome(steps, prepared, params, archive, planned)
    try:
        return await done.with_summary(target)
    except Exception as exc:
        log.exception("selective summary failed; not compacting")
        reason = f"summary fallback failed: {exc}"
        return prepared.unchanged("selective_failed", [reason], "selective")


async def _rules(
    steps: Steps, prepared: Prepared, limits: SelectiveLimits, plan: Plan, target: int
) -> SelectivePlan:
    """The rules' plan toward `target` tokens, checked against the provider's rules."""
    request = prepared.request
    planned: SelectivePlan = await to_thread.run_sync(
        partial(
            plan,
            prepared.messages,
            len(prepared.partition.head),
            limits,
            max(target, 0),
            steps.tokenizer.count,
            partial(count_messages, steps.tokenizer),
            force=request.force,
        )
    )
    _check(planned.messages, prepared.format, request.forms)
    return planned


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

    def standing_indexes(self) -> list[int]:
        """The head's standing ledgers, which the new ledger replaces."""
        head = self.prepared.messages[: self.planned.head_length]
        return [i for i, m in enumerate(head) if is_ledger_message(m)]

    async def with_ledger(self) -> tuple[list[Message], int]:
        """The rules' output with the ledger of every message they dropped or cut, as a
        system message after the head (an earlier one there merged into it and replaced):
        a failure, a path or a command the rules removed stays in the context."""
        steps, planned = self.steps, self.planned
        request = self.prepared.request
        messages = request.messages
        head = list(planned.messages[: planned.head_length])
        earlier = [m for m in head if is_ledger_message(m)]
        covered = [
            *(carried_ledger(m) for m in earlier),
            *(messages[i] for i in planned.compacted_indexes),
        ]
        report = await steps.ledger("", covered, self.params.summary, request.session_id)
        before = planned.token_count
        if not report.facts:
            return list(planned.messages), before
        self.ledger = replace(report, text=report.text.strip())
        kept_head = [m for m in head if not is_ledger_message(m)]
        self.compacted = sorted({*self.compacted, *self.standing_indexes()})
        note = ledger_message(self.ledger.text)
        out = [*kept_head, note, *planned.messages[planned.head_length :]]
        tokens = before - sum(await steps.count_each(earlier)) + await steps.count([note])
        detail = f"{len(report.facts)} facts of what the rules removed"
        self.phases.append(
            PhaseInfo(phase="ledger", tokens_before=before, tokens_after=tokens, detail=detail)
        )
        return out, tokens

    async def with_summary(self, target: int) -> CompactResult:
        steps, planned = self.steps, self.planned
        request = self.prepared.request
        messages, params = request.messages, self.params
        head = messages[: planned.head_length]
        # A ledger an earlier selective compaction left standing goes into this one.
        earlier = [carried_ledger(m) for m in head if is_ledger_message(m)]
        head = [m for m in head if not is_ledger_message(m)]
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
        # The facts of the original rest (what the rules dropped included), read once for
        # the summary and the ledger: a summarizer that reads them lists those too.
        covered = [*earlier, *messages[planned.head_length :]]
        facts = await steps.facts(covered, params.summary)
        outcome = await steps.summarize(rest, params.summary, request.instructions, facts=facts)
        self.warnings += outcome.warnings
        summarized = outcome.summary
        if summarized is None:
            return self.prepared.unchanged(
                "summarization_failed", self.warnings, "selective", outcome.calls
            )
        self.summarized = summarized
        # The ledger checks the summary against the original rest, not the rules' output:
        # a fact a rule cut must still reach the summary.
        self.ledger = await steps.ledger(
            summarized.text, covered, params.summary, request.session_id, facts
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
            *self.standing_indexes(),
            *(i for i in range(planned.head_length, len(messages)) if i not in memory_indexes),
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
