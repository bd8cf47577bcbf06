"""Counting and deciding: when `overflow` is reported, the models added to the built-in
table, the provider's count call, and the token cache."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from app.core.model_table import ModelSpec

OverflowThreshold = Annotated[
    float,
    Field(0.9, gt=0, le=1, description="report `overflow` at this share"),
]

Models = Annotated[
    dict[str, ModelSpec],
    Field(
        default_factory=dict,
        description=(
            "JSON object of models added to or replacing the built-in table "
            '(docs/models.md), e.g. `{"my-model": {"context_window": 32000, '
            '"tokenizer": "tiktoken"}}`; optional `input_limit`, `output_limit`, '
            "`context_1m_window`, `margin`, `exact`"
        ),
    ),
]

CountModel = Annotated[
    str,
    Field(
        "claude-sonnet-4-5",
        description='model named to Anthropic\'s count_tokens (`tokenizer: "anthropic"`)',
    ),
]

CountTimeout = Annotated[
    float,
    Field(10.0, gt=0, description="seconds for that call (one attempt, no retries)"),
]

TokenCacheEntries = Annotated[
    int,
    Field(
        50_000,
        ge=0,
        description=(
            "token counts of recent messages kept (LRU keyed by a hash of each "
            "message's text, ~150 bytes an entry), and as many counted messages "
            "remembered by their JSON; `0` disables both"
        ),
    ),
]
