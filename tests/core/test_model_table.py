from __future__ import annotations

import pytest

from app.core.model_table import CLAUDE_MARGIN, MODELS, ModelSpec, find_model, with_margin


@pytest.mark.parametrize(
    ("name", "window", "tokenizer"),
    [
        ("gpt-4o", 128_000, "o200k"),
        ("gpt-4o-2024-08-06", 128_000, "o200k"),
        ("gpt-4o-mini-2024-07-18", 128_000, "o200k"),
        ("gpt-4.1-nano", 1_047_576, "o200k"),
        ("gpt-5-mini", 400_000, "o200k"),
        ("gpt-5-chat-latest", 128_000, "o200k"),
        ("o3-mini-2025-01-31", 200_000, "o200k"),
        ("o1-mini", 128_000, "o200k"),
        ("gpt-4-0613", 8_192, "tiktoken"),
        ("gpt-4-turbo-2024-04-09", 128_000, "tiktoken"),
        ("gpt-3.5-turbo-0125", 16_385, "tiktoken"),
        ("claude-sonnet-4-5-20250929", 200_000, "tiktoken"),
        ("claude-3-5-haiku-latest", 200_000, "tiktoken"),
        ("claude-opus-5", 200_000, "tiktoken"),
    ],
)
def test_a_model_is_found_by_name_or_dated_family(name: str, window: int, tokenizer: str) -> None:
    spec = find_model(name, MODELS)
    assert spec is not None
    assert (spec.context_window, spec.tokenizer) == (window, tokenizer)


@pytest.mark.parametrize("name", ["gpt-4oo", "llama-3-70b", "claudex", "gpt", "o5", ""])
def test_a_name_that_is_no_family_s_is_unknown(name: str) -> None:
    assert find_model(name, MODELS) is None


def test_only_openai_models_are_exact_and_claude_has_the_margin() -> None:
    for name, spec in MODELS.items():
        claude = name.startswith("claude")
        assert spec.exact is not claude, name
        assert spec.margin == (CLAUDE_MARGIN if claude else 0.0), name


def test_an_entry_of_the_table_given_replaces_the_built_in_one() -> None:
    own = ModelSpec(context_window=1000, tokenizer="o200k")
    assert find_model("gpt-4o-2024-08-06", {**MODELS, "gpt-4o": own}) == own


@pytest.mark.parametrize(
    ("tokens", "margin", "expected"), [(100, 0.2, 120), (101, 0.2, 122), (0, 0.2, 0), (7, 0.0, 7)]
)
def test_the_margin_rounds_up_and_only_up(tokens: int, margin: float, expected: int) -> None:
    assert with_margin(tokens, margin) == expected
