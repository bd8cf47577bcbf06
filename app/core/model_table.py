"""The models the service knows: each one's limits and how its tokens are counted.

Each entry holds the context window, the input limit where the provider sets one below
the window (gpt-5: 272k of 400k), the largest output, the window under Anthropic's
`context-1m` beta where the model takes it, the local encoding that counts it and how far
to trust that count. A request's `model` is found here by `app.core.provider.model_names`,
which reads the names agents write (provider prefixes, Bedrock and Vertex ids, dates,
capitals, the next dot release).

OpenAI publishes its encodings, so its models are counted exactly with their own (`o200k`
from gpt-4o on, `tiktoken`, i.e. cl100k, before). The other providers publish none that
runs offline here (Anthropic none at all): their models are counted with cl100k raised by
a margin per family, never exact; the margins and where they come from are in
docs/models.md. The provider's own count (`last_usage`, or `tokenizer: anthropic`) is
preferred whenever the agent has it. The table is maintained by hand (docs/models.md lists
it); `COMPACT_MODELS` adds or replaces entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import ceil

from pydantic import BaseModel, ConfigDict, Field

from app.core.vocabulary import LocalTokenizer

CLAUDE_MARGIN = 0.25
"""Share added to a Claude model's cl100k count: Claude's tokenizer splits agent text into
more tokens than cl100k, and an undercount is an overflow waiting to happen."""

# Shares added to cl100k for the other families (docs/models.md says how each was chosen).
GEMINI_MARGIN = 0.3
LLAMA_MARGIN = 0.1
QWEN_MARGIN = 0.25
DEEPSEEK_MARGIN = 0.2
MISTRAL_MARGIN = 0.3

CONTEXT_1M_BETA = "context-1m"
"""The prefix of Anthropic's beta name (`context-1m-2025-08-07`) that opens the 1M window."""


class ModelSpec(BaseModel):
    """One model: its limits, the local encoding that counts it, and how far to trust it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    context_window: int = Field(gt=0, description="The model's context window in tokens.")
    input_limit: int | None = Field(
        None,
        gt=0,
        description=(
            "The most input tokens the provider takes, where it is below the window "
            "(gpt-5: 272,000 of 400,000); null: the window."
        ),
    )
    output_limit: int | None = Field(
        None, gt=0, description="The most output tokens one answer may ask for."
    )
    context_1m_window: int | None = Field(
        None,
        gt=0,
        description="The window when the request carries Anthropic's `context-1m` beta.",
    )
    tokenizer: LocalTokenizer = Field(description="`tiktoken` (cl100k_base) or `o200k`.")
    exact: bool = Field(False, description="True only when `tokenizer` is the model's own.")
    margin: float = Field(
        0.0, ge=0, le=1, description="Share added to the local count (0.2 adds a fifth)."
    )

    def window(self, betas: frozenset[str] = frozenset()) -> int:
        """The context window, the 1M one when a `context-1m` beta is sent and taken."""
        if self.context_1m_window and any(b.startswith(CONTEXT_1M_BETA) for b in betas):
            return self.context_1m_window
        return self.context_window


def _openai(
    window: int,
    output: int,
    tokenizer: LocalTokenizer = "o200k",
    input_limit: int | None = None,
) -> ModelSpec:
    return ModelSpec(
        context_window=window,
        input_limit=input_limit,
        output_limit=output,
        tokenizer=tokenizer,
        exact=True,
    )


def _claude(output: int | None, window: int = 200_000, long: int | None = None) -> ModelSpec:
    return ModelSpec(
        context_window=window,
        output_limit=output,
        context_1m_window=long,
        tokenizer="tiktoken",
        margin=CLAUDE_MARGIN,
    )


def _other(window: int, margin: float, output: int | None = None) -> ModelSpec:
    return ModelSpec(
        context_window=window, output_limit=output, tokenizer="tiktoken", margin=margin
    )


_GPT5 = _openai(400_000, 128_000, input_limit=272_000)

MODELS: Mapping[str, ModelSpec] = {
    # OpenAI, o200k_base
    "gpt-5": _GPT5,
    "gpt-5.1": _GPT5,
    "gpt-5.2": _GPT5,
    "gpt-5-chat": _openai(128_000, 16_384),
    "gpt-4.1": _openai(1_047_576, 32_768),
    "gpt-4o": _openai(128_000, 16_384),
    "chatgpt-4o": _openai(128_000, 16_384),
    "o1": _openai(200_000, 100_000),
    "o1-mini": _openai(128_000, 65_536),
    "o1-preview": _openai(128_000, 32_768),
    "o3": _openai(200_000, 100_000),
    "o3-mini": _openai(200_000, 100_000),
    "o4-mini": _openai(200_000, 100_000),
    # OpenAI, cl100k_base
    "gpt-4": _openai(8_192, 8_192, "tiktoken"),
    "gpt-4-32k": _openai(32_768, 32_768, "tiktoken"),
    "gpt-4-turbo": _openai(128_000, 4_096, "tiktoken"),
    "gpt-4-1106-preview": _openai(128_000, 4_096, "tiktoken"),
    "gpt-4-0125-preview": _openai(128_000, 4_096, "tiktoken"),
    "gpt-3.5-turbo": _openai(16_385, 4_096, "tiktoken"),
    # Anthropic: no public tokenizer. 200k windows; 1M with the context-1m beta where taken.
    "claude": _claude(None),
    "claude-opus-4-6": _claude(128_000, long=1_000_000),
    "claude-sonnet-4-6": _claude(128_000, long=1_000_000),
    "claude-opus-4-5": _claude(64_000),
    "claude-opus-4-1": _claude(32_000),
    "claude-opus-4": _claude(32_000),
    "claude-sonnet-4-5": _claude(64_000, long=1_000_000),
    "claude-sonnet-4": _claude(64_000, long=1_000_000),
    "claude-haiku-4-5": _claude(64_000),
    "claude-3-7-sonnet": _claude(64_000),
    "claude-3-5-sonnet": _claude(8_192),
    "claude-3-5-haiku": _claude(8_192),
    "claude-3-opus": _claude(4_096),
    "claude-3-haiku": _claude(4_096),
    # Google Gemini (and Gemma, its open sibling): SentencePiece, cl100k + 30%.
    "gemini": _other(1_048_576, GEMINI_MARGIN),
    "gemini-2.5-pro": _other(1_048_576, GEMINI_MARGIN, 65_536),
    "gemini-2.5-flash": _other(1_048_576, GEMINI_MARGIN, 65_536),
    "gemini-2.0-flash": _other(1_048_576, GEMINI_MARGIN, 8_192),
    "gemini-1.5-pro": _other(2_097_152, GEMINI_MARGIN, 8_192),
    "gemma": _other(8_192, GEMINI_MARGIN),
    "gemma-3": _other(131_072, GEMINI_MARGIN),
    # Meta Llama
    "llama": _other(8_192, LLAMA_MARGIN),
    "llama-3.1": _other(131_072, LLAMA_MARGIN),
    "llama-3.2": _other(131_072, LLAMA_MARGIN),
    "llama-3.3": _other(131_072, LLAMA_MARGIN),
    "llama-4": _other(1_048_576, LLAMA_MARGIN),
    # Alibaba Qwen (windows without YaRN scaling)
    "qwen": _other(32_768, QWEN_MARGIN),
    "qwen2.5": _other(32_768, QWEN_MARGIN),
    "qwen2.5-coder": _other(32_768, QWEN_MARGIN),
    "qwen3": _other(32_768, QWEN_MARGIN),
    "qwen3-coder": _other(262_144, QWEN_MARGIN, 65_536),
    # DeepSeek
    "deepseek": _other(65_536, DEEPSEEK_MARGIN),
    "deepseek-chat": _other(131_072, DEEPSEEK_MARGIN, 8_192),
    "deepseek-reasoner": _other(131_072, DEEPSEEK_MARGIN, 65_536),
    # Mistral
    "mistral": _other(32_768, MISTRAL_MARGIN),
    "mistral-large": _other(131_072, MISTRAL_MARGIN),
    "mistral-medium": _other(131_072, MISTRAL_MARGIN),
    "mistral-small": _other(32_768, MISTRAL_MARGIN),
    "mistral-nemo": _other(131_072, MISTRAL_MARGIN),
    "mixtral": _other(32_768, MISTRAL_MARGIN),
    "codestral": _other(131_072, MISTRAL_MARGIN),
    "devstral": _other(131_072, MISTRAL_MARGIN),
}


def with_margin(tokens: int, margin: float) -> int:
    """`tokens` raised by `margin`, rounded up (an undercount overflows, an overcount does not)."""
    return tokens + ceil(round(tokens * margin, 6))
