"""The models the service knows: each one's context window and how its tokens are counted.

A request's `model` (the provider request's own field) is looked up here: by its exact
name, else by the longest entry that is the name up to a `-` (a dated snapshot such as
`claude-sonnet-4-5-20250929` or `gpt-4o-2024-08-06` is its family). OpenAI publishes its
encodings, so its models are counted exactly with their own (`o200k` from gpt-4o on,
`tiktoken`, i.e. cl100k, before). Anthropic publishes no tokenizer: Claude is counted with
cl100k plus `CLAUDE_MARGIN`, never exact; the provider's own count (`last_usage`, or
`tokenizer: anthropic`) is preferred whenever the agent has it. The table is maintained by
hand (docs/models.md lists it); `COMPACT_MODELS` adds or replaces entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import ceil

from pydantic import BaseModel, ConfigDict, Field

from app.core.vocabulary import LocalTokenizer

CLAUDE_MARGIN = 0.2
"""Share added to a Claude model's cl100k count: Claude's tokenizer splits agent text into
more tokens than cl100k, and an undercount is an overflow waiting to happen."""


class ModelSpec(BaseModel):
    """One model: its window, the local encoding that counts it, and how far to trust it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    context_window: int = Field(gt=0, description="The model's context window in tokens.")
    tokenizer: LocalTokenizer = Field(description="`tiktoken` (cl100k_base) or `o200k`.")
    exact: bool = Field(False, description="True only when `tokenizer` is the model's own.")
    margin: float = Field(
        0.0, ge=0, le=1, description="Share added to the local count (0.2 adds a fifth)."
    )


def _openai(window: int, tokenizer: LocalTokenizer = "o200k") -> ModelSpec:
    return ModelSpec(context_window=window, tokenizer=tokenizer, exact=True)


def _claude(window: int = 200_000) -> ModelSpec:
    return ModelSpec(context_window=window, tokenizer="tiktoken", margin=CLAUDE_MARGIN)


MODELS: Mapping[str, ModelSpec] = {
    # OpenAI, o200k_base
    "gpt-5": _openai(400_000),
    "gpt-5.1": _openai(400_000),
    "gpt-5-chat": _openai(128_000),
    "gpt-4.1": _openai(1_047_576),
    "gpt-4o": _openai(128_000),
    "chatgpt-4o": _openai(128_000),
    "o1": _openai(200_000),
    "o1-mini": _openai(128_000),
    "o1-preview": _openai(128_000),
    "o3": _openai(200_000),
    "o3-mini": _openai(200_000),
    "o4-mini": _openai(200_000),
    # OpenAI, cl100k_base
    "gpt-4": _openai(8_192, "tiktoken"),
    "gpt-4-32k": _openai(32_768, "tiktoken"),
    "gpt-4-turbo": _openai(128_000, "tiktoken"),
    "gpt-4-1106-preview": _openai(128_000, "tiktoken"),
    "gpt-4-0125-preview": _openai(128_000, "tiktoken"),
    "gpt-3.5-turbo": _openai(16_385, "tiktoken"),
    # Anthropic: no public tokenizer; every Claude model so far has a 200k window.
    "claude": _claude(),
    "claude-opus-4-5": _claude(),
    "claude-opus-4-1": _claude(),
    "claude-opus-4": _claude(),
    "claude-sonnet-4-5": _claude(),
    "claude-sonnet-4": _claude(),
    "claude-haiku-4-5": _claude(),
    "claude-3-7-sonnet": _claude(),
    "claude-3-5-sonnet": _claude(),
    "claude-3-5-haiku": _claude(),
    "claude-3-opus": _claude(),
    "claude-3-haiku": _claude(),
}


def find_model(name: str, table: Mapping[str, ModelSpec]) -> ModelSpec | None:
    """The entry for `name`: its own, else its longest family (`name` up to a `-`)."""
    if name in table:
        return table[name]
    cut = len(name)
    while (cut := name.rfind("-", 0, cut)) > 0:
        if name[:cut] in table:
            return table[name[:cut]]
    return None


def with_margin(tokens: int, margin: float) -> int:
    """`tokens` raised by `margin`, rounded up (an undercount overflows, an overcount does not)."""
    return tokens + ceil(round(tokens * margin, 6))
