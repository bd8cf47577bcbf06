"""The fake provider's limits: which window a model gets and how its count scales."""

from __future__ import annotations

import anthropic

from tests.builders import user
from tests.fakes.provider import FakeProvider, Limits
from tests.fakes.provider.sdk import anthropic_client
from tests.fakes.provider.windows import DEFAULT_WINDOWS


def test_a_dated_model_name_gets_the_window_of_the_name_it_starts_with() -> None:
    limits = Limits(windows={"claude-x": 100, "claude-x-long": 1_000}, default_window=7)
    assert limits.window("claude-x-20260101") == 100
    assert limits.window("claude-x-long-20260101") == 1_000
    assert limits.window("claude-x") == 100
    assert limits.window("other") == 7


def test_the_default_table_has_an_input_limit_below_gpt5s_window() -> None:
    limits = Limits()
    assert (limits.window("gpt-5-2025-08-07"), limits.input_limit("gpt-5-2025-08-07")) == (
        400_000,
        272_000,
    )
    assert limits.input_limit("gpt-4o") is None
    assert DEFAULT_WINDOWS["claude-sonnet-4-6"] == 200_000


def test_the_factor_makes_the_provider_count_more_than_the_counter() -> None:
    limits = Limits(windows={"m": 100}, counter=lambda text: len(text.split()), factor=1.25)
    with FakeProvider(limits) as fake, anthropic_client(fake.url) as client:
        counted = client.messages.count_tokens(model="m", messages=[user("one two three")])
    assert counted.input_tokens == 5  # "user: one two three" is 4 words, times 1.25, rounded up


def test_a_request_is_counted_with_its_system_prompt_and_tools() -> None:
    limits = Limits(windows={"m": 1_000}, counter=lambda text: len(text.split()))
    tool = {"name": "read_file", "input_schema": {"type": "object"}}
    with FakeProvider(limits) as fake, anthropic_client(fake.url) as client:
        bare = client.messages.count_tokens(model="m", messages=[user("hi")]).input_tokens
        full = client.messages.count_tokens(
            model="m",
            messages=[user("hi")],
            system="be brief now",
            tools=[tool],
        ).input_tokens
    assert bare == 2  # "user: hi"
    # The system prompt's 3 words and the tool's JSON, 5 words as the provider serializes it:
    # {"input_schema": {"type": "object"}, "name": "read_file"}
    assert full == 2 + 3 + 5


def test_without_validation_a_request_the_api_would_refuse_is_answered() -> None:
    limits = Limits(windows={"m": 1_000})
    empty = [{"role": "user", "content": [{"type": "text", "text": ""}]}]
    with FakeProvider(limits, validate=False) as fake, anthropic_client(fake.url) as client:
        message = client.messages.create(model="m", max_tokens=5, messages=empty)
    assert message.stop_reason == "end_turn"
    assert isinstance(message, anthropic.types.Message)
