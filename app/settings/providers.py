"""The LLM servers and their keys, also read under the SDKs' own variable names (the keys
never logged, archived or returned)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field, SecretStr

AnthropicApiKey = Annotated[
    SecretStr | None,
    Field(
        None,
        description=(
            "the Anthropic key for this service: `auto` then summarizes with Anthropic; "
            "never logged, archived or returned"
        ),
    ),
]

SdkAnthropicApiKey = Annotated[
    SecretStr | None,
    Field(
        None,
        validation_alias="ANTHROPIC_API_KEY",
        description=(
            "the Anthropic SDK's own variable: used only when `COMPACT_SUMMARIZER=anthropic` "
            "(or a `/count` with `tokenizer: anthropic`) asks for Anthropic and "
            "`COMPACT_ANTHROPIC_API_KEY` is unset; never logged"
        ),
    ),
]

AnthropicBaseUrl = Annotated[
    str | None,
    Field(
        None,
        validation_alias=AliasChoices("COMPACT_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
        description="Anthropic-compatible endpoint",
    ),
]

OpenaiBaseUrl = Annotated[
    str,
    Field(
        "http://127.0.0.1:11434/v1",
        validation_alias=AliasChoices("COMPACT_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
        description=(
            "OpenAI-compatible server up to `/v1` (default: a local Ollama); POSTs go to "
            "`{base}/chat/completions`"
        ),
    ),
]

OpenaiApiKey = Annotated[
    SecretStr | None,
    Field(
        None,
        validation_alias=AliasChoices("COMPACT_OPENAI_API_KEY", "OPENAI_API_KEY"),
        description=("sent as `Authorization: Bearer`; local servers need none; never logged"),
    ),
]
