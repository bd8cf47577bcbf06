"""Whether to compact.

Compact when `token_count >= threshold * limit` and the list has at least `min_messages`
messages; report an overflow at `overflow_threshold`, whatever the length. The limit is
what the provider lets the input take: `min(input limit, context window - output budget)`,
since a provider refuses input plus the requested `max_tokens` over the window (Anthropic)
or input over the model's input limit (gpt-5: 272k of a 400k window).
The token count is either counted from the messages or, when the agent sends the provider's
`usage` block of its last response, that exact figure plus an estimate of the input it is
about to add (`len(text) // 3`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from app.core.errors import InvalidRequestError
from app.core.model_table import with_margin
from app.core.provider import OutputBudget
from app.core.tokens import REPLY_PRIMING
from app.core.vocabulary import LimitName, TokenizerName

PENDING_INPUT_CHARS_PER_TOKEN = 3


# Every key under which Anthropic or OpenAI report tokens that will be in the next prompt:
# the previous prompt (fresh, cache-written and cache-read parts) and the answer to it.
_ANTHROPIC_USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
_OPENAI_USAGE_KEYS = ("prompt_tokens", "completion_tokens")


class DecisionReason(StrEnum):
    BELOW_MIN_MESSAGES = "below_min_messages"
    BELOW_THRESHOLD = "below_threshold"
    ABOVE_THRESHOLD = "above_threshold"
    OVERFLOW = "overflow"


@dataclass(frozen=True)
class Thresholds:
    context_window: int
    threshold: float
    overflow_threshold: float
    min_messages: int
    input_limit: int | None = None
    output: OutputBudget = field(default_factory=OutputBudget)

    def __post_init__(self) -> None:
        if self.output.tokens >= self.context_window:
            raise InvalidRequestError(
                self.output.field or "max_tokens",
                f"{self.output.field} {self.output.tokens} leaves no room for input in "
                f"the {self.context_window}-token context window",
            )

    @property
    def limit(self) -> int:
        """The most input tokens the provider takes for this request."""
        room = self.context_window - self.output.tokens
        return room if self.input_limit is None else min(self.input_limit, room)

    @property
    def limited_by(self) -> LimitName:
        """Which limit `limit` is: the window, the model's input limit, or the window
        less the requested output."""
        if self.input_limit is not None and self.input_limit <= self.limit:
            return "input_limit"
        return "output_budget" if self.output.tokens else "context_window"

    @property
    def threshold_tokens(self) -> int:
        return _ceil(self.threshold * self.limit)

    @property
    def overflow_tokens(self) -> int:
        return _ceil(self.overflow_threshold * self.limit)


@dataclass(frozen=True)
class Basis:
    """What a context's token count is taken from, as the agent sends it to `/should-compact`
    and `/compact` alike: the provider's `usage` of its last response when given (with the
    input about to be sent), else a count by `tokenizer`."""

    usage: Mapping[str, Any] | None = None
    pending_input: str | None = None
    tokenizer: TokenizerName = "tiktoken"
    # From the model table (app/core/model_table.py): whether a local count is the model's own,
    # and the share it is raised by when it is not.
    exact: bool = True
    margin: float = 0.0
    # Tokens the provider counts outside the messages (tool definitions); already in `usage`.
    fixed_tokens: int = 0

    def raised(self, tokens: int, local: bool) -> int:
        """A count of the messages as the threshold sees it: a local count raised by the
        margin and the reply's priming (a request that has messages), then the tokens
        outside the messages."""
        if local and tokens:
            tokens = with_margin(tokens, self.margin) + REPLY_PRIMING
        return tokens + self.fixed_tokens

    def usage_count(self) -> int | None:
        """The tokens by the provider's count, or None when there is no `usage`."""
        if self.usage is None:
            return None
        return usage_tokens(self.usage) + estimate_pending_input(self.pending_input or "")


@dataclass(frozen=True)
class Decision:
    should_compact: bool
    overflow: bool
    reason: DecisionReason
    token_count: int
    message_count: int


def _ceil(value: float) -> int:
    whole = int(value)
    return whole if whole == value else whole + 1


def decide(token_count: int, message_count: int, thresholds: Thresholds) -> Decision:
    """The threshold decision for one context."""
    overflow = token_count >= thresholds.overflow_tokens
    if message_count < thresholds.min_messages:
        reason = DecisionReason.BELOW_MIN_MESSAGES
    elif overflow:
        reason = DecisionReason.OVERFLOW
    elif token_count >= thresholds.threshold_tokens:
        reason = DecisionReason.ABOVE_THRESHOLD
    else:
        reason = DecisionReason.BELOW_THRESHOLD
    should = reason in (DecisionReason.OVERFLOW, DecisionReason.ABOVE_THRESHOLD)
    return Decision(should, overflow, reason, token_count, message_count)


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """Tokens the next prompt will carry, read from a provider's `usage` block.

    Anthropic reports prompt tokens in three parts (fresh, cache write, cache read), all of
    which occupy the window; OpenAI reports `prompt_tokens`. The answer (`output_tokens` /
    `completion_tokens`) joins the history, so it counts too.
    """
    keys = _ANTHROPIC_USAGE_KEYS if "input_tokens" in usage else _OPENAI_USAGE_KEYS
    return sum(int(usage.get(key) or 0) for key in keys)


def estimate_pending_input(text: str) -> int:
    """Input not yet counted by the provider: a token per `PENDING_INPUT_CHARS_PER_TOKEN`
    characters."""
    return len(text) // PENDING_INPUT_CHARS_PER_TOKEN
