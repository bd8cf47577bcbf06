"""The result of a compaction, as the API serves it: what was kept, cut and archived.

Pydantic models because the API serves them as they are; in the core because the
pipeline produces them. `app.core.options.compact` holds the options and re-exports these.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.cost import SummarizerCost
from app.core.messages import Message
from app.core.provider import OpenAIForms, ProviderRequest, dump_as, hand_back
from app.core.vocabulary import Format, LimitName, StrategyName

_FROZEN = ConfigDict(frozen=True, extra="forbid")

NotCompactedReason = Literal[
    "below_threshold",
    "below_min_messages",
    "nothing_to_compact",
    "pending_tool_calls",
    "archive_failed",
    "summarization_failed",
    "too_few_rounds",
    "nothing_to_prune",
    "max_iterations",
    "selective_failed",
    "no_gain",
    "thrashing",
]


class RestoredFileInfo(BaseModel):
    model_config = _FROZEN
    path: str = Field(description="The path as the agent wrote it.")
    token_count: int


class SkippedFileInfo(BaseModel):
    model_config = _FROZEN
    path: str
    reason: str = Field(
        description=(
            "invalid_path | outside_workdir | not_found | not_regular_file | unreadable | "
            "not_utf8 | too_large | too_many_tokens | total_limit_reached"
        )
    )


class LedgerFactInfo(BaseModel):
    """One fact of the ledger, and whether the summarizer's own text already stated it."""

    model_config = _FROZEN
    kind: str = Field(
        description=(
            "error | file_changed | file_read | goal | request | latest_request (earlier "
            "ledgers) | instruction | command | todo | failed_approach | identifier"
        )
    )
    text: str
    in_summary: bool


class PhaseInfo(BaseModel):
    """One step of a compaction with the tokens of the whole list before and after it."""

    model_config = _FROZEN
    phase: str = Field(
        description=(
            "selective_start | tool_blocks | skill_prompt | assistant_message | "
            "skill_metadata | user_message | selective_done | ledger | summary_start | "
            "summary_done"
        )
    )
    tokens_before: int
    tokens_after: int
    detail: str | None = Field(None, description="What the step removed or cut.")


class FallbackInfo(BaseModel):
    """A strategy tried before the one that produced the answer, and why it did not."""

    model_config = _FROZEN
    strategy: StrategyName
    reason: NotCompactedReason = Field(
        description="Why it was not kept (`no_gain`: its result was not smaller than the "
        "input and under the threshold)."
    )
    tokens_after: int | None = Field(
        None, description="The tokens its result would have taken (`no_gain` only)."
    )
    detail: str | None = None


class RefillingMessage(BaseModel):
    """One of the largest messages since the last compaction (`thrashing`)."""

    model_config = _FROZEN
    index: int = Field(description="Its index in the canonical list of the request.")
    role: str
    tool_name: str | None = Field(
        None, description="The tool that produced it (a result) or that it calls."
    )
    token_count: int


class CompactStats(BaseModel):
    """The token and message counts of one compaction, before and after."""

    model_config = _FROZEN
    original_token_count: int = Field(
        description=(
            "The input's tokens as `/count` counts the same body: the system prompt, the "
            "tool definitions and the messages by `tokenizer`, raised by the model's margin, "
            "with the reply's priming. Equal to `token_count` unless that is the provider's "
            "(`last_usage`, or `tokenizer: anthropic`)."
        )
    )
    compacted_token_count: int = Field(
        description="The output's tokens, counted as `original_token_count` (the same tools)."
    )
    compaction_ratio: float = Field(description="compacted_token_count / original_token_count")
    compacted_message_count: int = Field(
        description="Input messages summarized, cleared, cut or dropped: `compacted_indexes`."
    )
    retained_message_count: int = Field(
        description=(
            "Input messages carried over as sent: every message not in `compacted_indexes` "
            "(the head for `full`; for `tail` the kept rounds, less a first kept message "
            "whose tool results went into the summary)."
        )
    )
    restored_file_count: int
    restored_token_count: int
    ledger_budget: int = Field(0, description="Token budget the fact ledger had (0: no ledger).")
    ledger_token_count: int = Field(0, description="Tokens the fact ledger took.")
    tokenizer: str = Field(
        "tiktoken",
        description=(
            "Which local encoding counted the two token counts (the model's: o200k for "
            "the OpenAI models counted by it, else cl100k), as `/count` names it."
        ),
    )
    request_token_count: int | None = Field(
        None,
        description=(
            "The `request` handed back, as `/count` counts it: `compacted_token_count`, plus "
            "the user turn `Continue.` when the request ends with one after the summary's "
            "acknowledgement. Null when no provider request was sent."
        ),
    )


class ArchiveInfo(BaseModel):
    model_config = _FROZEN
    id: str
    session_id: str | None
    message_count: int
    sha256: str = Field(description="sha256 of the archived messages' canonical JSON.")


class CompactResult(BaseModel):
    """What a compaction did. When `compacted` is false, `messages` are the input as sent."""

    model_config = _FROZEN
    compacted: bool
    format: Format = Field(
        "anthropic", description="The format of `messages`: the format of the request."
    )
    reason: NotCompactedReason | None = None
    messages: list[Message]
    summary: str | None = None
    token_count: int = Field(
        description=(
            "The input's tokens as `/should-compact` counts the same body: the system "
            "prompt, the tool definitions and the messages by the model's tokenizer and "
            "margin, or the provider's `last_usage` with `pending_input` (`token_source`). "
            "`stats` count the input and the output as `/count` does, by a local encoding."
        )
    )
    token_source: Literal["counted", "last_usage"] = Field(
        "counted", description="As for `/should-compact`: where `token_count` comes from."
    )
    exact: bool = Field(True, description="False when `token_count` is an estimate.")
    limit_tokens: int | None = Field(
        None,
        description=(
            "As for `/should-compact`: the most input tokens the provider takes for this "
            "request (the window less `output_budget`, within the model's input limit); the "
            "threshold is a share of it."
        ),
    )
    limited_by: LimitName | None = Field(
        None,
        description=(
            "As for `/should-compact`: `context_window`, `output_budget` or `input_limit`."
        ),
    )
    output_budget: int = Field(
        0,
        description=(
            "The output the request reserves (`max_tokens`, `max_completion_tokens`, "
            "`max_output_tokens`)."
        ),
    )
    restored_files: list[RestoredFileInfo] = Field(default_factory=list)
    skipped_files: list[SkippedFileInfo] = Field(default_factory=list)
    stats: CompactStats | None = Field(None, description="Null when nothing was compacted.")
    archive: ArchiveInfo | None = None
    summarizer: str | None = Field(None, description="Which summarizer produced the summary.")
    ledger: list[LedgerFactInfo] = Field(
        default_factory=list,
        description="The facts of the ledger appended to the summary.",
    )
    ledger_dropped: int = Field(
        0,
        description=(
            "Facts left out of the ledger: by its budget, or as near-duplicate commands "
            "(recall has them)."
        ),
    )
    ledger_dropped_kinds: dict[str, int] = Field(
        default_factory=dict,
        description="Of `ledger_dropped`, how many of each kind (facts of this compaction).",
    )
    strategy: StrategyName = Field(
        "full",
        description=(
            "The strategy that produced the answer (a fallback's, or `prune` during a "
            "cooldown); when nothing was compacted, the last one tried."
        ),
    )
    compacted_indexes: list[int] = Field(
        default_factory=list,
        description=(
            "Indexes, in the canonical list of the input (an OpenAI tool run with the user "
            "message after it is one), of the messages summarized, cleared, truncated or dropped."
        ),
    )
    phases: list[PhaseInfo] = Field(
        default_factory=list, description="`selective`: each phase with its tokens."
    )
    fallbacks: list[FallbackInfo] = Field(
        default_factory=list,
        description=(
            "The strategies tried before `strategy`, in order, each with why it was not "
            "kept; empty when the strategy asked for produced the answer."
        ),
    )
    retry_at_tokens: int | None = Field(
        None,
        description=(
            "`no_gain` with a `session_id`: the token count at which this context is worth "
            "another attempt (until then `/should-compact` says no)."
        ),
    )
    refilling: list[RefillingMessage] = Field(
        default_factory=list,
        description="`thrashing`: the largest messages since the last compaction.",
    )
    summary_chunks: int = Field(
        0,
        description=(
            "Calls made to the configured summarizer, one per chunk: more than 1 when the "
            "history exceeded `summary_input_budget` and was summarized in chunks. Counted "
            "whether the summary was written or not (a failed call included, with every "
            "strategy tried); retries of one call are one call, and the fallback "
            "summarizer's call is not counted."
        ),
    )
    summarizer_cost: SummarizerCost = Field(
        default_factory=SummarizerCost,
        description=(
            "What the summaries of every strategy tried cost: the summarizer's calls (the "
            "fallback's included), the tokens they read and wrote, their time, and the "
            "answers reused from an earlier call of the same input."
        ),
    )
    warnings: list[str] = Field(
        default_factory=list,
        description=(
            "What the compaction met on the way, one line each. A summarizer that failed "
            "says `summarizer NAME failed: [reason] ...` (the reason as in "
            "`context_compact_summarizer_failures_total`); each sentence the summary gate "
            "dropped from an LLM's summary is named with its rule: "
            "`summary: dropped [rule] “sentence”`, the rule one of `foreign`, `borrowed`, "
            "`instruction`, `not_user`, `status`, `attribution`, `number`, `unasked` "
            "(docs/summaries.md)."
        ),
    )


def result_json(
    result: CompactResult,
    forms: OpenAIForms | None = None,
    provider: ProviderRequest | None = None,
) -> dict[str, Any]:
    """The result as JSON; messages with exactly the fields they were sent with (OpenAI
    messages from the request's `forms` when given); with the provider request around
    them in `request` when the agent sent one."""
    data = result.model_dump(mode="json", exclude={"messages"})
    data["messages"] = dump_as(result.messages, result.format, forms)
    return data if provider is None else hand_back(data, provider)
