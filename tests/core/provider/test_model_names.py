from __future__ import annotations

import pytest

from app.core.model_table import MODELS, ModelSpec
from app.core.provider.model_names import canonical, closest_names, find_key, find_model


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("openai/gpt-4o", "gpt-4o"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("bedrock/global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("vertex_ai/claude-opus-4-1@20250805", "claude-opus-4-1"),
        ("openrouter/anthropic/claude-3.7-sonnet", "claude-3-7-sonnet"),
        ("GPT-4o", "gpt-4o"),
        ("Claude-Sonnet-4-5", "claude-sonnet-4-5"),
        ("azure/gpt-4o-mini", "gpt-4o"),
        ("gemini-2.5-pro", "gemini-2.5-pro"),
        ("gemini/gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"),
        ("deepseek-chat", "deepseek-chat"),
        ("deepseek/deepseek-reasoner", "deepseek-reasoner"),
        ("qwen2.5-coder", "qwen2.5-coder"),
        ("ollama/qwen2.5-coder:7b", "qwen2.5-coder"),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5-coder"),
        ("qwen3-coder:480b", "qwen3-coder"),
        ("llama-3.1", "llama-3.1"),
        ("llama3.1:8b", "llama-3.1"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3"),
        ("meta.llama3-1-70b-instruct-v1:0", "llama-3.1"),
        ("mistral", "mistral"),
        ("mistral/mistral-large-latest", "mistral-large"),
        ("mistral.mistral-large-2407-v1:0", "mistral-large"),
    ],
)
def test_names_as_agents_write_them_find_their_entry(name: str, key: str) -> None:
    assert find_key(name, MODELS) == key


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("gpt-5.3", "gpt-5.2"),
        ("gpt-5.9-codex", "gpt-5.2"),
        ("gpt-5.3-chat-latest", "gpt-5-chat"),
        ("gpt-4.5-preview", "gpt-4.1"),
        ("gemini-2.7-pro", "gemini-2.5-pro"),
    ],
)
def test_a_dot_release_the_table_lacks_is_read_as_the_latest_it_knows_below_it(
    name: str, key: str
) -> None:
    assert find_key(name, MODELS) == key


@pytest.mark.parametrize("name", ["gpt-4oo", "claudex", "gpt", "o5", "", "grok-4", "gpt-6"])
def test_a_name_that_is_no_family_s_is_unknown(name: str) -> None:
    assert find_model(name, MODELS) is None


def test_a_key_given_as_written_wins_over_a_family() -> None:
    own = ModelSpec(context_window=4096, tokenizer="tiktoken")
    table = {**MODELS, "Qwen2.5-Coder-1.5B": own}
    assert find_model("Qwen2.5-Coder-1.5B", table) == own
    assert find_model("qwen2.5-coder-1.5b", table) == own


def test_the_canonical_form_drops_routes_tags_vendors_and_case() -> None:
    assert canonical("bedrock/us.anthropic.Claude-Sonnet-4.5-20250929-v1:0") == (
        "claude-sonnet-4-5-20250929"
    )
    assert canonical("ollama/llama3.2:3b") == "llama-3.2"
    assert canonical("o3-mini") == "o3-mini"


def test_the_closest_known_names_are_suggested_for_an_unknown_one() -> None:
    assert closest_names("gpt-4oo", MODELS)[0] == "gpt-4o"
    assert "claude" in closest_names("claudex", MODELS)
    assert closest_names("zzzz", MODELS) == []
