"""Bodies of `POST /count` and `POST /should-compact`: counting a list and deciding on it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.examples import EXAMPLE_ANTHROPIC_REQUEST, EXAMPLE_MESSAGES, EXAMPLE_OPENAI_MESSAGES
from app.api.provider import Counting, ProviderFields, TokenParts
from app.api.schemas import (
    FORMAT_DESCRIPTION,
    TOKENIZER_DESCRIPTION,
    Messages,
    MessagesField,
    Usage,
    basis_of,
)
from app.core.decide import Basis
from app.core.result import RefillingMessage
from app.core.vocabulary import Format, LimitName, RequestFormat, TokenizerName
from app.service.answers import Count


class CountRequest(ProviderFields):
    """A message list to count, alone or in the provider request the agent sends."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {"messages": EXAMPLE_MESSAGES},
                EXAMPLE_ANTHROPIC_REQUEST,
                {"messages": EXAMPLE_OPENAI_MESSAGES, "model": "gpt-4o"},
                {"messages": EXAMPLE_OPENAI_MESSAGES, "tokenizer": "anthropic"},
            ]
        },
    )
    messages: Messages = MessagesField
    format: RequestFormat = Field("auto", description=FORMAT_DESCRIPTION)
    tokenizer: TokenizerName | None = Field(
        None,
        description=TOKENIZER_DESCRIPTION,
    )


LIMIT_TOKENS_DESCRIPTION = (
    "The most input tokens the provider takes for this request: the context window less "
    "`output_budget`, within the model's input limit (gpt-5: 272,000 of 400,000). The "
    "thresholds are shares of it."
)
LIMITED_BY_DESCRIPTION = (
    "Which limit `limit_tokens` is: `context_window` (the window, no output reserved), "
    "`output_budget` (the window less the output the request reserves) or `input_limit` "
    "(the model's input limit, below that)."
)
OUTPUT_BUDGET_DESCRIPTION = (
    "The output the request reserves: its `max_tokens`, `max_completion_tokens` or "
    "`max_output_tokens` (0 when none is sent)."
)

PARTS_DESCRIPTION = (
    "`token_count` split into its parts (they add up to it); null when the provider's "
    "count API counted in one call."
)


class CountResponse(BaseModel):
    """The token count of a message list."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "token_count": 87,
                    "message_count": 4,
                    "tokenizer": "tiktoken",
                    "exact": True,
                    "format": "anthropic",
                    "warnings": [],
                }
            ]
        }
    )
    token_count: int = Field(description="Sum of the messages' token counts (0 for none).")
    message_count: int = Field(description="Messages as sent (OpenAI tool messages each).")
    tokenizer: str = Field(description="Which tokenizer counted.")
    exact: bool = Field(description="False when the count is an estimate.")
    format: Format = Field(description="The format of the request.")
    parts: TokenParts | None = Field(None, description=PARTS_DESCRIPTION)
    warnings: list[str] = Field(default_factory=list)

    @classmethod
    def of(
        cls, counted: Count, message_count: int, fmt: Format, parts: TokenParts | None = None
    ) -> CountResponse:
        """The answer for a count of `message_count` messages as sent, in `fmt`."""
        return cls(
            token_count=counted.token_count,
            message_count=message_count,
            tokenizer=counted.tokenizer,
            exact=counted.exact,
            format=fmt,
            parts=parts,
            warnings=list(counted.warnings),
        )


class ShouldCompactRequest(ProviderFields):
    """A context to judge: counted from `messages`, or taken from the last `usage`."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {"messages": EXAMPLE_MESSAGES},
                {
                    "messages": EXAMPLE_MESSAGES,
                    "last_usage": {"input_tokens": 158000, "output_tokens": 1200},
                    "pending_input": "Now run the whole test suite.",
                },
            ]
        },
    )
    messages: Messages = MessagesField
    format: RequestFormat = Field("auto", description=FORMAT_DESCRIPTION)
    tokenizer: TokenizerName | None = Field(
        None, description="As for `/count`; unused when `last_usage` is given."
    )
    last_usage: Usage | None = Field(
        None,
        description=(
            "The provider's usage block of the last response. When given, it replaces "
            "counting: its tokens plus an estimate of `pending_input` (a third of its characters)."
        ),
    )
    pending_input: str | None = Field(
        None, description="Input about to be sent, estimated at len(text) // 3 tokens."
    )
    context_window: int | None = Field(None, gt=0, description="Defaults to the server's.")
    threshold: float | None = Field(None, gt=0, le=1, description="Defaults to the server's.")
    overflow_threshold: float | None = Field(
        None, gt=0, le=1, description="Defaults to the server's."
    )
    min_messages: int | None = Field(None, ge=0, description="Defaults to the server's.")
    session_id: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
        description=(
            "The agent's session, as sent to `/compact`: over the threshold, the answer is no "
            "while the session's records hold this context (`no_gain`, `thrashing`)."
        ),
        examples=["session-42"],
    )

    def basis(self, counting: Counting, tool_tokens: int) -> Basis:
        return basis_of(self.last_usage, self.pending_input, counting, tool_tokens)


class ShouldCompactResponse(BaseModel):
    """The threshold decision and the figures behind it."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "should_compact": True,
                    "overflow": False,
                    "reason": "above_threshold",
                    "token_count": 165000,
                    "token_source": "last_usage",
                    "threshold_tokens": 160000,
                    "overflow_tokens": 180000,
                    "context_window": 200000,
                    "limit_tokens": 200000,
                    "limited_by": "context_window",
                    "output_budget": 0,
                    "message_count": 120,
                    "format": "anthropic",
                    "exact": True,
                    "warnings": [],
                }
            ]
        }
    )
    should_compact: bool
    overflow: bool = Field(description="True at or above the overflow threshold.")
    reason: Literal[
        "below_min_messages",
        "below_threshold",
        "above_threshold",
        "overflow",
        "no_gain",
        "thrashing",
    ] = Field(
        description=(
            "`no_gain` / `thrashing` (with a `session_id`): over the threshold, but the "
            "session's last attempt on this context was refused, or it keeps refilling "
            "right after each compaction; `detail` says why and when it will say yes again."
        )
    )
    detail: str | None = Field(None, description="Why the answer is no despite the tokens.")
    retry_at_tokens: int | None = Field(
        None, description="`no_gain`: the token count from which the answer is yes again."
    )
    refilling: list[RefillingMessage] = Field(
        default_factory=list,
        description="`thrashing`: the largest messages since the last compaction.",
    )
    token_count: int
    token_source: Literal["counted", "last_usage"]
    threshold_tokens: int = Field(description="`threshold` x `limit_tokens`, rounded up.")
    overflow_tokens: int = Field(description="`overflow_threshold` x `limit_tokens`, rounded up.")
    context_window: int
    limit_tokens: int = Field(description=LIMIT_TOKENS_DESCRIPTION)
    limited_by: LimitName = Field(description=LIMITED_BY_DESCRIPTION)
    output_budget: int = Field(description=OUTPUT_BUDGET_DESCRIPTION)
    message_count: int
    format: Format = Field(description="The format of the request.")
    exact: bool = Field(True, description="False when the count is an estimate.")
    parts: TokenParts | None = Field(
        None, description=PARTS_DESCRIPTION + " Null too when `last_usage` decided."
    )
    warnings: list[str] = Field(default_factory=list)
