"""Request and response bodies of the HTTP API, with the descriptions and examples `/docs`
shows. Shapes the core already defines (messages, compaction options and results) are
reused as they are, so the API and the pipeline cannot drift apart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, RootModel
from pydantic.config import JsonDict

from app.api.examples import (
    EXAMPLE_ANTHROPIC_REQUEST,
    EXAMPLE_LONG_MESSAGES,
    EXAMPLE_MESSAGES,
    EXAMPLE_OPENAI_MESSAGES,
)
from app.api.provider import Counting, ProviderFields
from app.core.decide import Basis
from app.core.messages import Message
from app.core.model_table import with_margin
from app.core.options import CompactOptions
from app.core.provider import OpenAIForms, OpenAIMessage
from app.core.result import CompactResult
from app.core.sessions import CompactionRecord, RecordReason
from app.core.vocabulary import Format, RequestFormat, TokenizerName
from app.service.prepared import CompactRequest

_REQUEST = ConfigDict(extra="forbid")
# `COMPACT_MAX_MESSAGES`'s default (a test keeps them equal), shown as the schema's
# `maxItems`. The limit itself is the configured one, checked before validation
# (app/api/limits.py, 422 `too_many_messages`), so the model sets none of its own.
DEFAULT_MAX_MESSAGES = 10_000

MessagesField = Field(
    description=(
        "The agent's message list, in the Anthropic Messages shape (`role` system, user or "
        "assistant; `content` a string or blocks) or the OpenAI Chat Completions shape "
        "(roles system, developer, user, assistant, tool; `tool_calls`, `tool_call_id`). "
        "Unknown block types and extra fields are accepted and passed through untouched. "
        "At most `COMPACT_MAX_MESSAGES` messages (422 `too_many_messages` above)."
    ),
    # Validated per format after parsing (app/api/dialect.py), so the field takes plain
    # objects; the schema still names both shapes, for readers and for schema fuzzers.
    json_schema_extra={
        "items": {"$ref": "#/components/schemas/AnyMessage"},  # in the schema via CompactResponse
        "maxItems": DEFAULT_MAX_MESSAGES,
    },
)

TOKENIZER_DESCRIPTION = (
    "Default: the `model`'s (docs/models.md), else `tiktoken`. `tiktoken`: cl100k_base, "
    "offline. `o200k`: o200k_base, offline. `anthropic`: the provider's count_tokens "
    "endpoint (needs an API key); on any failure the local count with `exact: false` and "
    "a warning."
)

FORMAT_DESCRIPTION = (
    "`auto` detects the shape (OpenAI when any message uses a tool/developer role, "
    "`tool_calls`, `tool_call_id` or an OpenAI-only content part); the answer uses "
    "the request's format."
)

Messages = list[dict[str, Any]]

# A response's messages: plain dicts as they go out, documented as either shape.
ANY_MESSAGE_ITEMS: dict[str, JsonValue] = {"items": {"$ref": "#/components/schemas/AnyMessage"}}

SessionIdField = Field(
    None,
    pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
    description="Groups archives and records of one agent session (letters, digits, _ . -).",
    examples=["session-42"],
)


class Usage(BaseModel):
    """A provider's `usage` block from the last response: Anthropic's or OpenAI's keys."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [{"input_tokens": 150000, "output_tokens": 2000}],
        },
    )
    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    cache_creation_input_tokens: int | None = Field(None, ge=0)
    cache_read_input_tokens: int | None = Field(None, ge=0)
    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)


def basis_of(
    usage: Usage | None, pending_input: str | None, counting: Counting, tool_tokens: int
) -> Basis:
    """What the threshold decision counts from, read the same way for both routes:
    `tool_tokens`, the local count of the tool definitions, is raised by the margin too."""
    sent_usage = usage.model_dump(exclude_none=True) if usage is not None else None
    return Basis(
        sent_usage,
        pending_input,
        counting.tokenizer,
        exact=counting.exact,
        margin=counting.margin,
        fixed_tokens=with_margin(tool_tokens, counting.margin),
    )


class CompactRequestBody(ProviderFields):
    """A message list to compact, alone or in the provider request the agent sends, with
    optional focus and per-request overrides."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {
                    "messages": EXAMPLE_LONG_MESSAGES,
                    "session_id": "session-42",
                    "force": True,
                    "instructions": "Focus on the failing test.",
                },
                {"messages": EXAMPLE_OPENAI_MESSAGES, "format": "openai", "force": True},
                {**EXAMPLE_ANTHROPIC_REQUEST, "force": True, "session_id": "session-42"},
                {
                    "messages": EXAMPLE_MESSAGES,
                    "session_id": "session-42",
                    "reason": "llm_call",
                    "options": {"strategy": "tail", "tail_keep_recent_rounds": 10},
                },
                {
                    "messages": EXAMPLE_MESSAGES,
                    "force": True,
                    "options": {
                        "strategy": "prune",
                        "prune_keep_recent": 3,
                        "prune_exclude_tools": ["read_file"],
                        "prune_min_tokens": 20000,
                    },
                },
            ]
        },
    )
    messages: Messages = MessagesField
    format: RequestFormat = Field("auto", description=FORMAT_DESCRIPTION)
    session_id: str | None = SessionIdField
    force: bool = Field(False, description="Compact even below the threshold.")
    last_usage: Usage | None = Field(
        None,
        description=(
            "As for `/should-compact`: without `force`, the threshold is judged from it, so "
            "both routes decide from the same count. The result is still measured by cl100k."
        ),
    )
    pending_input: str | None = Field(
        None, description="As for `/should-compact`: counted into the threshold decision."
    )
    tokenizer: TokenizerName | None = Field(
        None,
        description=(
            "As for `/should-compact`: what the threshold decision counts with (unused when "
            "`last_usage` is given); the result is always measured by cl100k."
        ),
    )
    instructions: str | None = Field(
        None, max_length=10_000, description="Focus for the summary (like `/compact <focus>`)."
    )
    options: CompactOptions = Field(
        default_factory=CompactOptions, description="Per-request overrides of the defaults."
    )
    reason: RecordReason | None = Field(
        None,
        description=(
            "Why the agent compacts, for the session's record: before an "
            "LLM call, after a tool execution, or on the user's request. Default: `manual` "
            "with `force`, else `llm_call`."
        ),
    )

    def request(
        self,
        messages: Sequence[Message],
        fmt: Format,
        forms: OpenAIForms,
        counting: Counting | None = None,
        tool_tokens: int = 0,
    ) -> CompactRequest:
        """The service's request for this body, its messages read in `fmt` (one mapping
        for `/compact`, `/compactions` and the command line); `forms` from that reading;
        `counting` from the `model`, whose window is the default of `context_window`."""
        counting = counting or Counting(self.tokenizer or "tiktoken")
        options = self.options
        if options.context_window is None and counting.context_window is not None:
            options = options.model_copy(update={"context_window": counting.context_window})
        return CompactRequest(
            messages=messages,
            options=options,
            session_id=self.session_id,
            force=self.force,
            instructions=self.instructions,
            format=fmt,
            reason=self.reason,
            forms=forms,
            basis=basis_of(self.last_usage, self.pending_input, counting, tool_tokens),
            input_limit=counting.input_limit,
            output=self.output_budget(),
        )


class SessionCompactionsResponse(BaseModel):
    """The compaction records of one session, oldest first."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "session_id": "session-42",
                    "records": [
                        {
                            "id": "01795389068102951832-bb8a6efe30a6",
                            "session_id": "session-42",
                            "timestamp": "2026-11-23T04:30:00+00:00",
                            "reason": "llm_call",
                            "strategy": "tail",
                            "outcome": "compacted",
                            "message_count_before": 212,
                            "message_count_after": 41,
                            "tokens_before": 161200,
                            "tokens_after": 52310,
                            "compacted_message_ids": ["msg_01", "sha256:9f86d081884c7d65"],
                            "summary_message_id": "sha256:2c26b46b68ffc68f",
                            "archive_id": "01795389068102951832-aa8a6efe30a6",
                            "warnings": [],
                        }
                    ],
                }
            ]
        }
    )
    session_id: str
    records: list[CompactionRecord]


class AnyMessage(RootModel[Message | OpenAIMessage]):
    """One message in either shape: Anthropic Messages or OpenAI Chat Completions. Named,
    so that request and response schemas refer to one definition."""


_RESULT_EXAMPLE: JsonDict = {
    "compacted": True,
    "reason": None,
    "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "[Conversation compressed]\n\n## Goals & Decisions\n..."},
        {
            "role": "assistant",
            "content": (
                "Understood. I have the context from the compressed conversation. Continuing work."
            ),
        },
        {"role": "user", "content": "[Restored after compact] tests/test_app.py:\n..."},
        {"role": "assistant", "content": "Noted, file content restored."},
    ],
    "summary": "## Goals & Decisions\n...",
    "token_count": 152340,
    "restored_files": [{"path": "tests/test_app.py", "token_count": 812}],
    "skipped_files": [{"path": "build/huge.log", "reason": "too_large"}],
    "stats": {
        "original_token_count": 152340,
        "compacted_token_count": 4210,
        "compaction_ratio": 0.0276,
        "compacted_message_count": 212,
        "retained_message_count": 1,
        "restored_file_count": 1,
        "restored_token_count": 812,
        "ledger_budget": 7617,
        "ledger_token_count": 1840,
    },
    "archive": {
        "id": "01795389068102951832-bb8a6efe30a6",
        "session_id": "session-42",
        "message_count": 212,
        "sha256": "df689ec28f0e444d2a0a1a8ccdc78e017f8f229dbef077ac56d039dd664bbd83",
    },
    "summarizer": "extractive",
    "ledger": [
        {"kind": "instruction", "text": "Never edit the generated files.", "in_summary": False},
        {"kind": "file_changed", "text": "src/app.py (edited)", "in_summary": True},
    ],
    "ledger_dropped": 0,
    "ledger_dropped_kinds": {},
    "strategy": "full",
    "compacted_indexes": [1, 2, 3],
    "phases": [],
    "summary_chunks": 1,
    "warnings": [],
}


class CompactResponse(CompactResult):
    """What a compaction did, as `/compact` answers it: `messages` in the request's format
    (the core result holds them in the canonical Anthropic shape)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_extra={"examples": [_RESULT_EXAMPLE]}
    )

    messages: list[AnyMessage] = Field(  # type: ignore[assignment]
        description=(
            "The compacted messages (or the input as sent when not compacted), in the "
            "request's format: Anthropic Messages or OpenAI Chat Completions. With a "
            "top-level `system`, without it (it is in `request.system`)."
        )
    )
    request: dict[str, Any] | None = Field(
        None,
        description=(
            "When the body was a provider request (it had `model`, `system`, `tools` or "
            "another provider field): that request ready to send, every field as sent, "
            "`system` where it was, `messages` the compacted list, followed by a user "
            "`Continue.` when that list ends with an assistant turn (no prefill). Absent "
            "otherwise."
        ),
    )


class ArchiveResponse(BaseModel):
    """The original messages one compaction replaced, exactly as they were sent."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "00001763850000000000-a1b2c3d4e5f6",
                    "session_id": "session-42",
                    "created_at": "2026-11-22T22:00:00+00:00",
                    "message_count": 3,
                    "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                    "messages": EXAMPLE_MESSAGES[1:],
                }
            ]
        }
    )
    id: str
    session_id: str | None
    created_at: str
    message_count: int
    sha256: str = Field(description="sha256 of the canonical JSON of `messages`.")
    messages: list[dict[str, Any]] = Field(
        description="The archived messages, as sent.", json_schema_extra=ANY_MESSAGE_ITEMS
    )


class HealthResponse(BaseModel):
    """The process is alive."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"status": "ok"}]})
    status: Literal["ok"] = "ok"


class ReadyResponse(BaseModel):
    """Whether the service can do its work: 200 when every check passes, else 503."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "ready": True,
                    "checks": {
                        "tokenizer_loaded": True,
                        "data_dir_writable": True,
                        "data_dir_has_room": True,
                        "workdir_readable": True,
                    },
                    "summarizer": "extractive",
                    "summary_fallback": "none",
                }
            ]
        }
    )
    ready: bool
    checks: dict[str, bool] = Field(
        description=(
            "tokenizer_loaded, data_dir_writable (or database_ready with "
            "`COMPACT_DATABASE_URL`), data_dir_has_room (at least `COMPACT_MIN_FREE_BYTES` "
            "free), workdir_readable; summarizer_reachable with `COMPACT_SUMMARIZER=openai` "
            "(it fails readiness only with `COMPACT_READYZ_REQUIRES_SUMMARIZER`)"
        )
    )
    reasons: dict[str, str] | None = Field(
        None, description="why a failing check failed, when known (absent otherwise)"
    )
    summarizer: str = Field(
        description=(
            "who writes summaries: `extractive` (no LLM, no key), `anthropic` or `openai` "
            "(a paid or remote call per summary)"
        )
    )
    summary_fallback: str = Field(
        description="what a failed LLM summary falls back to: `extractive` or `none`"
    )


class ErrorDetail(BaseModel):
    """One problem with the request."""

    field: str | None = Field(None, description="The offending field, e.g. `messages[3].role`.")
    message: str


class ErrorResponse(BaseModel):
    """Every error answer: a stable code, a readable message, and the fields at fault."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error": "invalid_request",
                    "message": "messages[3].role: Input should be 'system', 'user' or 'assistant'",
                    "details": [
                        {
                            "field": "messages[3].role",
                            "message": "Input should be 'system', 'user' or 'assistant'",
                        }
                    ],
                }
            ]
        }
    )
    error: str = Field(description="A stable machine-readable code.")
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)
