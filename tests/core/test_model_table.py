from __future__ import annotations

import pytest

from app.core.model_table import CLAUDE_MARGIN, MODELS, ModelSpec, with_margin
from app.core.provider.model_names import find_model


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


@pytest.mark.parametrize("name", ["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5-codex"])
def test_the_gpt_5_family_takes_272k_of_input_in_a_400k_window(name: str) -> None:
    spec = find_model(name, MODELS)
    assert spec is not None
    assert (spec.context_window, spec.input_limit, spec.output_limit) == (
        400_000,
        272_000,
        128_000,
    )


def test_every_entry_has_no_input_limit_above_its_window() -> None:
    for name, spec in MODELS.items():
        assert spec.input_limit is None or spec.input_limit < spec.context_window, name
        assert spec.output_limit is None or spec.output_limit <= spec.context_window, name


@pytest.mark.parametrize(
    ("betas", "window"),
    [
        (frozenset(), 200_000),
        (frozenset({"context-1m-2025-08-07"}), 1_000_000),
        (frozenset({"interleaved-thinking-2025-05-14"}), 200_000),
    ],
)
def test_the_context_1m_beta_opens_the_1m_window_of_a_model_that_takes_it(
    betas: frozenset[str], window: int
) -> None:
    spec = find_model("claude-sonnet-4-5", MODELS)
    assert spec is not None
    assert spec.window(betas) == window


def test_the_context_1m_beta_leaves_a_model_without_it_at_its_window() -> None:
    spec = find_model("claude-3-5-haiku", MODELS)
    assert spec is not None
    assert spec.window(frozenset({"context-1m-2025-08-07"})) == 200_000


def test_only_openai_models_are_exact_and_the_others_carry_a_margin() -> None:
    for name, spec in MODELS.items():
        openai = name.startswith(("gpt", "o1", "o3", "o4", "chatgpt"))
        assert spec.exact is openai, name
        assert (spec.margin == 0.0) is openai, name
        if name.startswith("claude"):
            assert spec.margin == CLAUDE_MARGIN, name


def test_an_entry_of_the_table_given_replaces_the_built_in_one() -> None:
    own = ModelSpec(context_window=1000, tokenizer="o200k")
    assert find_model("gpt-4o-2024-08-06", {**MODELS, "gpt-4o": own}) == own


def test_an_entry_written_before_the_limits_existed_is_still_valid() -> None:
    spec = ModelSpec.model_validate({"context_window": 32000, "tokenizer": "tiktoken"})
    assert (spec.input_limit, spec.output_limit, spec.context_1m_window) == (None, None, None)
    assert spec.window(frozenset({"context-1m"})) == 32000


@pytest.mark.parametrize(
    ("tokens", "margin", "expected"), [(100, 0.2, 120), (101, 0.2, 122), (0, 0.2, 0), (7, 0.0, 7)]
)
def test_the_margin_rounds_up_and_only_up(tokens: int, margin: float, expected: int) -> None:
    assert with_margin(tokens, margin) == expected
