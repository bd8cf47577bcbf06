"""The fake provider's simulated prompt caching, as each SDK reports it: Anthropic's written
and read prefixes at breakpoints, OpenAI's automatic common prefix in 128-token steps.

The `small` provider counts words and caches Anthropic prefixes from 20 tokens on."""

from __future__ import annotations

from typing import Any

import anthropic
import openai

from tests.builders import assistant, user
from tests.fakes.provider import FakeProvider, Limits
from tests.fakes.provider.sdk import anthropic_client, openai_client

CACHED = {"cache_control": {"type": "ephemeral"}}


def marked(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text, **CACHED}]}


def cache_usage(
    client: anthropic.Anthropic, messages: list[dict[str, Any]], **params: Any
) -> tuple[int, int, int]:
    """(uncached input, cache creation, cache read) of one request."""
    args = {"model": "claude-small", "max_tokens": 1, "messages": messages, **params}
    usage = client.messages.create(**args).usage
    created, read = usage.cache_creation_input_tokens, usage.cache_read_input_tokens
    return (usage.input_tokens, created or 0, read or 0)


def words(n: int, word: str = "w") -> str:
    return " ".join([word] * n)


def test_a_breakpoint_writes_the_prefix_and_the_next_request_reads_it(small: FakeProvider) -> None:
    first = [marked(words(24)), assistant("ok"), user("next")]  # 25 + 2 + 2 with the roles
    with anthropic_client(small.url) as client:
        assert cache_usage(client, first) == (4, 25, 0)
        assert cache_usage(client, first) == (4, 0, 25)


def test_a_growing_conversation_reads_the_earlier_breakpoint(small: FakeProvider) -> None:
    head = marked(words(24))
    with anthropic_client(small.url) as client:
        assert cache_usage(client, [head, assistant("ok"), user("one")]) == (4, 25, 0)
        longer = [head, assistant("ok"), user("one"), assistant("two"), marked("three")]
        assert cache_usage(client, longer) == (0, 8, 25)
        assert cache_usage(client, [*longer, assistant("four"), user("five")]) == (4, 0, 33)


def test_no_breakpoint_means_nothing_cached(small: FakeProvider) -> None:
    plain = [user(words(30))]
    with anthropic_client(small.url) as client:
        assert cache_usage(client, plain) == (31, 0, 0)
        assert cache_usage(client, plain) == (31, 0, 0)


def test_a_prefix_under_the_minimum_is_not_cached(small: FakeProvider) -> None:
    short = [marked(words(10)), assistant("ok"), user("next")]
    with anthropic_client(small.url) as client:
        assert cache_usage(client, short) == (15, 0, 0)
        assert cache_usage(client, short) == (15, 0, 0)


def test_a_top_level_cache_control_caches_up_to_the_last_block(small: FakeProvider) -> None:
    messages = [user(words(24)), assistant("ok"), user("next")]
    with anthropic_client(small.url) as client:
        automatic = {"cache_control": CACHED["cache_control"]}
        assert cache_usage(client, messages, extra_body=automatic) == (0, 29, 0)
        assert cache_usage(client, [*messages, assistant("a"), marked("b")]) == (0, 4, 29)


def test_moving_a_breakpoint_keeps_the_prefix_it_wrote(small: FakeProvider) -> None:
    text = words(24)
    with anthropic_client(small.url) as client:
        assert cache_usage(client, [marked(text), assistant("ok"), user("next")]) == (4, 25, 0)
        assert cache_usage(client, [user(text), assistant("ok"), marked("next")]) == (0, 4, 25)


def test_a_hit_more_than_20_blocks_before_the_breakpoint_is_missed(small: FakeProvider) -> None:
    head = marked(words(24))
    tail = [m for i in range(11) for m in (assistant(f"a{i}"), user(f"u{i}"))]
    with anthropic_client(small.url) as client:
        assert cache_usage(client, [head, assistant("ok"), user("next")]) == (4, 25, 0)
        far = [user(words(24)), *tail[:-1], marked("last")]  # written 22 blocks back
        assert cache_usage(client, far) == (0, 69, 0)
        near = [user(words(24)), *tail[:19], marked("last")]  # written 20 blocks back
        assert cache_usage(client, near) == (0, 40, 25)


def test_two_keys_never_share_a_cache(small: FakeProvider) -> None:
    messages = [marked(words(24)), assistant("ok"), user("next")]
    with anthropic_client(small.url, "key-a") as a, anthropic_client(small.url, "key-b") as b:
        assert cache_usage(a, messages) == (4, 25, 0)
        assert cache_usage(b, messages) == (4, 25, 0)


def chat_cached(client: openai.OpenAI, messages: list[dict[str, Any]]) -> tuple[int, int]:
    usage = client.chat.completions.create(model="gpt-4o", messages=messages).usage
    assert usage is not None
    assert usage.prompt_tokens_details is not None
    return usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens or 0


def test_openai_reports_the_common_prefix_in_steps_of_128() -> None:
    limits = Limits(windows={"gpt-4o": 100_000}, counter=lambda text: len(text.split()))
    history = [
        {"role": "user", "content": words(1200, "a")},
        {"role": "assistant", "content": "ok"},
    ]
    with FakeProvider(limits) as fake, openai_client(fake.url) as client:
        assert chat_cached(client, [*history, {"role": "user", "content": "one"}]) == (1205, 0)
        second = [*history, {"role": "user", "content": words(200, "b")}]
        assert chat_cached(client, second) == (1404, 1152)  # 1203 + "user:" shared: 1152
        assert chat_cached(client, second) == (1404, 1280)


def test_openai_caches_nothing_under_1024_tokens(
    provider: FakeProvider, gpt: openai.OpenAI
) -> None:
    messages = [{"role": "user", "content": "short prompt"}]
    assert chat_cached(gpt, messages)[1] == 0
    assert chat_cached(gpt, messages)[1] == 0


def test_openai_reports_cache_reads_and_writes_in_the_responses_api() -> None:
    limits = Limits(windows={"gpt-4o": 100_000}, counter=lambda text: len(text.split()))
    with FakeProvider(limits) as fake, openai_client(fake.url) as client:
        first = client.responses.create(model="gpt-4o", input=words(1300)).usage
        again = client.responses.create(model="gpt-4o", input=words(1300)).usage
    assert first is not None
    assert again is not None
    assert (first.input_tokens, again.input_tokens) == (1301, 1301)
    assert first.input_tokens_details.cached_tokens == 0
    assert first.input_tokens_details.cache_write_tokens == 1280
    assert again.input_tokens_details.cached_tokens == 1280
    assert again.input_tokens_details.cache_write_tokens == 0
