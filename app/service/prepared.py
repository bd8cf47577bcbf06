"""A compaction request, what the pipeline's front part found in it, and the answers that
leave the input unchanged. Every strategy starts from a `Prepared`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.decide import Basis, Decision, Thresholds
from app.core.errors import InvalidConversationError
from app.core.messages import Message, tool_uses
from app.core.options import CompactOptions, P, resolve_params
from app.core.partition import Partition, partition_messages
from app.core.provider import OpenAIForms, OutputBudget, ProviderRequest, Violation
from app.core.result import CompactResult, NotCompactedReason
from app.core.sessions import RecordReason
from app.core.vocabulary import Format, StrategyName


@dataclass(frozen=True)
class CompactRequest:
    messages: Sequence[Message]
    options: CompactOptions = field(default_factory=CompactOptions)
    session_id: str | None = None
    force: bool = False
    instructions: str | None = None
    format: Format = "anthropic"
    background: bool = False  # waits for a summary slot instead of `BusyError`
    reason: RecordReason | None = None
    # The id of the archive it writes: a job's own, so a run of the job again after its
    # replica died replaces what the dead run wrote instead of adding a second archive.
    # A caller that sets it removes that archive itself when the run is cancelled.
    archive_id: str | None = None
    # What the threshold decision counts from, as `/should-compact` takes it.
    basis: Basis = field(default_factory=Basis)
    # What the provider lets the input take besides the window: the model's input limit,
    # and the output the request reserves (the threshold applies to what is left).
    input_limit: int | None = None
    output: OutputBudget = field(default_factory=OutputBudget)
    # Each message's OpenAI JSON, once: seeded when an OpenAI request is read, so the
    # input check, the archive and the answer reuse the items sent.
    forms: OpenAIForms = field(default_factory=OpenAIForms, compare=False, repr=False)
    # The provider request around the messages, when the agent sent one: handed back.
    provider: ProviderRequest | None = None

    @property
    def record_reason(self) -> RecordReason:
        """As sent; else `manual` for a forced compaction, `llm_call` otherwise."""
        return self.reason or ("manual" if self.force else "llm_call")


@dataclass(frozen=True)
class Prepared:
    """What every strategy starts from: the request, counted, decided and partitioned.
    `broken` are the input's violations; each strategy refuses those in what it keeps.
    `server`: the server's options for this request, under the request's own (`params`).
    `decided_tokens`: the count the threshold decision was made on (the provider's, from
    `last_usage`, when sent), which the session's holds read as `/should-compact` does;
    `token_count` is always ours."""

    request: CompactRequest
    counts: tuple[int, ...]
    token_count: int
    partition: Partition
    thresholds: Thresholds
    broken: tuple[Violation, ...]
    server: CompactOptions
    decided_tokens: int

    def params(self, kind: type[P]) -> P:
        """The parameters record `kind`, from the request's options over the server's."""
        return resolve_params(kind, self.request.options, self.server)

    @property
    def messages(self) -> Sequence[Message]:
        return self.request.messages

    @property
    def format(self) -> Format:
        return self.request.format

    def unchanged(
        self,
        reason: NotCompactedReason,
        warnings: Sequence[str] = (),
        strategy: StrategyName | None = None,
        summary_chunks: int = 0,
    ) -> CompactResult:
        """The input back as sent; `summary_chunks`: the summarizer calls made before the
        run gave up, reported as for a compaction."""
        return unchanged(
            self.messages,
            self.token_count,
            reason,
            warnings,
            fmt=self.format,
            strategy=strategy or self.request.options.strategy,
            summary_chunks=summary_chunks,
        )


def refuse(broken: Sequence[Violation]) -> None:
    if broken:
        raise InvalidConversationError(broken)


def refuse_from(prepared: Prepared, index: int) -> None:
    """A 422 for the input's violations in the canonical messages from `index` on: they would
    come back as sent."""
    refuse([v for v in prepared.broken if v.canonical >= index])


def unchanged(
    messages: Sequence[Message],
    token_count: int,
    reason: NotCompactedReason,
    warnings: Sequence[str] = (),
    *,
    fmt: Format = "anthropic",
    strategy: StrategyName = "full",
    summary_chunks: int = 0,
) -> CompactResult:
    return CompactResult(
        compacted=False,
        format=fmt,
        reason=reason,
        messages=list(messages),
        token_count=token_count,
        strategy=strategy,
        summary_chunks=summary_chunks,
        warnings=list(warnings),
    )


def prepared_for(
    request: CompactRequest,
    counts: Sequence[int],
    thresholds: Thresholds,
    broken: Sequence[Violation],
    decision: Decision,
    server: CompactOptions,
) -> Prepared | CompactResult:
    """The request, counted and decided, partitioned for a strategy; or the answer that
    leaves it unchanged: below the threshold (unless forced), nothing after the head, or
    tool calls at the end still unanswered (their results would be orphaned)."""
    messages, fmt, strategy = request.messages, request.format, request.options.strategy
    token_count = sum(counts)
    if not (request.force or decision.should_compact):
        refuse(broken)
        reason: NotCompactedReason = (
            "below_min_messages" if decision.reason == "below_min_messages" else "below_threshold"
        )
        return unchanged(messages, token_count, reason, fmt=fmt, strategy=strategy)
    partition = partition_messages(messages)
    if not partition.rest:
        refuse(broken)
        return unchanged(messages, token_count, "nothing_to_compact", fmt=fmt, strategy=strategy)
    refuse([v for v in broken if v.canonical < len(partition.head)])
    if any(tool_uses(messages[-1])):
        pending = ["the last assistant message has tool calls that are not answered yet"]
        return unchanged(
            messages, token_count, "pending_tool_calls", pending, fmt=fmt, strategy=strategy
        )
    return Prepared(
        request,
        tuple(counts),
        token_count,
        partition,
        thresholds,
        tuple(broken),
        server,
        decision.token_count,
    )
