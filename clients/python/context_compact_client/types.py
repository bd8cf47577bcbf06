"""The API's JSON bodies as `TypedDict`s: what each method returns is the decoded JSON,
typed. Written from openapi.yaml (the strategies and request options generated from it,
`_generated.py`); a test in the server's suite fails when a key or its
requiredness differs from the spec. A key the spec marks optional is `NotRequired`."""

from typing import Any, Literal, NotRequired, TypedDict

from context_compact_client._generated import CompactOptions as CompactOptions
from context_compact_client._generated import Strategy

# One message in either shape (Anthropic Messages or OpenAI Chat Completions), as JSON.
Message = dict[str, Any]


class TokenParts(TypedDict):
    """The count split as the provider bills a request: system prompt, tools, messages."""

    system: int
    tools: int
    messages: int


class CountResponse(TypedDict):
    """The token count of a message list."""

    token_count: int
    message_count: int
    tokenizer: str
    exact: bool
    format: Literal["anthropic", "openai"]
    warnings: NotRequired[list[str]]
    parts: NotRequired[TokenParts | None]


class RefillingMessage(TypedDict):
    """One of the largest messages since the last compaction (`thrashing`)."""

    index: int
    role: str
    tool_name: NotRequired[str | None]
    token_count: int


class ShouldCompactResponse(TypedDict):
    """The threshold decision and the figures behind it."""

    should_compact: bool
    overflow: bool
    reason: Literal[
        "below_min_messages",
        "below_threshold",
        "above_threshold",
        "overflow",
        "no_gain",
        "thrashing",
    ]
    token_count: int
    token_source: Literal["counted", "last_usage"]
    threshold_tokens: int
    overflow_tokens: int
    context_window: int
    # The most input the provider takes for this request (the window less the output
    # reserved, within the model's input limit), which of those it is, and the output.
    limit_tokens: int
    limited_by: Literal["context_window", "input_limit", "output_budget"]
    output_budget: int
    message_count: int
    format: Literal["anthropic", "openai"]
    exact: NotRequired[bool]
    warnings: NotRequired[list[str]]
    detail: NotRequired[str | None]
    retry_at_tokens: NotRequired[int | None]
    refilling: NotRequired[list[RefillingMessage]]
    parts: NotRequired[TokenParts | None]


class FallbackInfo(TypedDict):
    """A strategy tried before the one that produced the answer, and why it was not kept."""

    strategy: Strategy
    reason: str
    tokens_after: NotRequired[int | None]
    detail: NotRequired[str | None]


class RestoredFileInfo(TypedDict):
    path: str
    token_count: int


class SkippedFileInfo(TypedDict):
    path: str
    reason: str


class CompactStats(TypedDict):
    """Tokens and messages before and after a compaction."""

    original_token_count: int
    compacted_token_count: int
    compaction_ratio: float
    compacted_message_count: int
    retained_message_count: int
    restored_file_count: int
    restored_token_count: int
    ledger_budget: NotRequired[int]
    ledger_token_count: NotRequired[int]
    tokenizer: NotRequired[str]
    request_token_count: NotRequired[int | None]


class ArchiveInfo(TypedDict):
    id: str
    session_id: str | None
    message_count: int
    sha256: str


class LedgerFactInfo(TypedDict):
    """One fact of the ledger, and whether the summarizer's own text already stated it."""

    kind: str
    text: str
    in_summary: bool


class PhaseInfo(TypedDict):
    """One step of a compaction, with the tokens of the whole list before and after it."""

    phase: str
    tokens_before: int
    tokens_after: int
    detail: NotRequired[str | None]


class SummarizerCost(TypedDict):
    """What a compaction's summaries cost: calls made, answers reused, tokens, time."""

    calls: NotRequired[int]
    reused: NotRequired[int]
    input_tokens: NotRequired[int]
    output_tokens: NotRequired[int]
    seconds: NotRequired[float]


class CompactResponse(TypedDict):
    """What a compaction did; `messages` in the request's format."""

    compacted: bool
    format: NotRequired[Literal["anthropic", "openai"]]
    reason: NotRequired[
        Literal[
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
        | None
    ]
    messages: list[Message]
    summary: NotRequired[str | None]
    # As `/should-compact` counts the same body (system, tools, messages; or last_usage).
    token_count: int
    token_source: NotRequired[Literal["counted", "last_usage"]]
    exact: NotRequired[bool]
    limit_tokens: NotRequired[int | None]
    limited_by: NotRequired[Literal["context_window", "input_limit", "output_budget"] | None]
    output_budget: NotRequired[int]
    restored_files: NotRequired[list[RestoredFileInfo]]
    skipped_files: NotRequired[list[SkippedFileInfo]]
    stats: NotRequired[CompactStats | None]
    archive: NotRequired[ArchiveInfo | None]
    summarizer: NotRequired[str | None]
    ledger: NotRequired[list[LedgerFactInfo]]
    ledger_dropped: NotRequired[int]
    ledger_dropped_kinds: NotRequired[dict[str, int]]
    strategy: NotRequired[str]
    compacted_indexes: NotRequired[list[int]]
    phases: NotRequired[list[PhaseInfo]]
    summary_chunks: NotRequired[int]
    summarizer_cost: NotRequired[SummarizerCost]
    warnings: NotRequired[list[str]]
    fallbacks: NotRequired[list[FallbackInfo]]
    retry_at_tokens: NotRequired[int | None]
    refilling: NotRequired[list[RefillingMessage]]
    # The provider request ready to send, when the body was one (it had `model`, `system`,
    # `tools` or another provider field): every field as sent, `messages` compacted.
    request: NotRequired[dict[str, Any] | None]


class JobResponse(TypedDict):
    """A background compaction; `result` (what `/compact` would answer) once `done`."""

    id: str
    session_id: str | None
    state: Literal["queued", "running", "done", "failed", "cancelled"]
    reason: NotRequired[str | None]
    message: NotRequired[str | None]
    format: Literal["anthropic", "openai"]
    created_at: str
    finished_at: str | None
    sent_count: int
    sent_sha256: str
    replaces_message_count: NotRequired[int | None]
    result: NotRequired[CompactResponse | None]
    owner: NotRequired[str | None]
    heartbeat_at: NotRequired[str | None]
    cancel_requested: NotRequired[bool]


class ApplyResponse(TypedDict):
    """The agent's list with the sent prefix swapped for the compacted messages."""

    job_id: str
    compacted: bool
    format: Literal["anthropic", "openai"]
    replaced_message_count: int
    kept_message_count: int
    messages: list[Message]


class ArchiveResponse(TypedDict):
    """The original messages one compaction replaced, exactly as they were sent."""

    id: str
    session_id: str | None
    created_at: str
    message_count: int
    sha256: str
    messages: list[Message]


class CompactionRecord(TypedDict):
    """One compaction of a session, as `GET /sessions/{id}/compactions` serves it."""

    id: str
    session_id: str
    timestamp: str
    reason: Literal["llm_call", "tool_execution", "manual"]
    strategy: str
    outcome: str
    message_count_before: int
    message_count_after: int
    tokens_before: int
    tokens_after: int
    compacted_message_ids: list[str]
    summary_message_id: NotRequired[str | None]
    archive_id: NotRequired[str | None]
    warnings: NotRequired[list[str]]
    context_end_id: NotRequired[str | None]
    summarizer_cost: NotRequired[SummarizerCost]


class RecallHitInfo(TypedDict):
    """One archived message that matches a recall query."""

    archive_id: str
    message_index: int
    role: str
    tool_name: NotRequired[str | None]
    snippet: str
    score: int


class RecallResponse(TypedDict):
    """The matches in the session's archives, best first."""

    session_id: str
    query: str
    hits: list[RecallHitInfo]
    dropped_terms: NotRequired[list[str]]  # the query's terms past the 64th, not searched
    complete: NotRequired[bool]  # false when some archives were not searched yet


class SessionCompactionsResponse(TypedDict):
    """The compaction records of one session, oldest first."""

    session_id: str
    records: list[CompactionRecord]


class MissingMentionInfo(TypedDict):
    """A mention that names nothing in the work directory, and why."""

    path: str
    reason: str


class CompressToolResultResponse(TypedDict):
    """The compressed result: `result` as an object, `content` as the tool message text."""

    tool: str
    rule: Literal["ls", "glob", "grep", "read", "edit", "write", "bash", "todo", "fallback"]
    result: dict[str, Any]
    content: str
    original_chars: int
    compressed_chars: int
    warnings: NotRequired[list[str]]


class PreprocessInputResponse(TypedDict):
    """The input with the reminders appended, and what was found."""

    text: str
    mentions: list[str]
    reminded: list[str]
    more_count: int
    missing: list[MissingMentionInfo]
    warnings: NotRequired[list[str]]


class ProjectRulesResponse(TypedDict):
    """`CODE_LAW.md` (any case) at the root of the work directory."""

    found: bool
    path: str | None
    content: str | None
    skipped: str | None


class AssembleResponse(TypedDict):
    """The message list to send, in the request's format, and the layer of each message."""

    messages: list[Message]
    format: Literal["anthropic", "openai"]
    layers: list[Literal["L1", "L2", "L3", "input", "L3+input"]]
    rules_source: Literal["workdir", "request", "none"]
    rules_path: str | None
    mentions: NotRequired[PreprocessInputResponse | None]
    warnings: NotRequired[list[str]]


class HealthResponse(TypedDict):
    """The process is alive."""

    status: NotRequired[Literal["ok"]]


class ReadyResponse(TypedDict):
    """Whether the service can do its work: 200 when every check passes, else 503."""

    ready: bool
    checks: dict[str, Any]
    reasons: NotRequired[dict[str, str]]
    summarizer: str
    summary_fallback: str


class ErrorDetail(TypedDict):
    """One problem with the request."""

    field: NotRequired[str | None]
    message: str


class ErrorResponse(TypedDict):
    """Every error answer: a stable code, a readable message, and the fields at fault."""

    error: str
    message: str
    details: NotRequired[list[ErrorDetail]]


class ToolResultLimits(TypedDict, total=False):
    """How much of each kind of tool result history keeps."""

    read_lines: int
    grep_matches: int
    glob_hits: int
    ls_entries: int
    edit_lines: int
    write_lines: int
    bash_stdout_head: int
    bash_stdout_tail: int
    bash_stderr_lines: int
    todo_items: int
    fallback_chars: int


class Usage(TypedDict, total=False):
    """A provider's `usage` block from the last response: Anthropic's or OpenAI's keys."""

    input_tokens: int | None
    output_tokens: int | None
    cache_creation_input_tokens: int | None
    cache_read_input_tokens: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
