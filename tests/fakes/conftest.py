from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from tests.fakes.provider import FakeProvider, Limits, cl100k_count
from tests.fakes.provider.sdk import anthropic_client, openai_client


def words(text: str) -> int:
    """A count anyone can check by eye: one token per whitespace-separated word."""
    return len(text.split())


@pytest.fixture(scope="session")
def _sdks_ready() -> None:
    """The tokenizer and the SDKs' answer types are built on first use (the Responses API's
    alone takes over half a second): once here, not in whichever test comes first."""
    cl100k_count("load the encoding")
    hello = [{"role": "user", "content": "hi"}]
    with FakeProvider() as fake, anthropic_client(fake.url) as claude:
        claude.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=hello)
        with claude.messages.stream(model="claude-haiku-4-5", max_tokens=8, messages=hello) as s:
            s.until_done()
        with openai_client(fake.url) as gpt:
            gpt.chat.completions.create(model="gpt-4o", messages=hello)
            list(gpt.chat.completions.create(model="gpt-4o", messages=hello, stream=True))
            gpt.responses.create(model="gpt-4o", input="hi")
            list(gpt.responses.create(model="gpt-4o", input="hi", stream=True))


@pytest.fixture(scope="module")
def provider(_sdks_ready: None) -> Iterator[FakeProvider]:
    """One server per test module (starting one is the slow part); each test gets it fresh."""
    with FakeProvider() as started:
        yield started


@pytest.fixture(scope="module")
def small(_sdks_ready: None) -> Iterator[FakeProvider]:
    """A provider that counts words, with small windows a test can fill by hand."""
    limits = Limits(
        windows={"claude-tiny": 40, "claude-small": 200, "gpt-tiny": 40, "gpt-capped": 100},
        input_limits={"gpt-capped": 30},
        counter=words,
        max_request_bytes=2_000,
        min_cache_tokens=20,
    )
    with FakeProvider(limits) as started:
        yield started


@pytest.fixture(autouse=True)
def _fresh(request: pytest.FixtureRequest, _sdks_ready: None) -> Iterator[None]:
    used = [request.getfixturevalue(n) for n in ("provider", "small") if n in request.fixturenames]
    for fake in used:
        fake.reset()
    yield
    for fake in used:
        assert fake.failures == []


@pytest.fixture
def claude(provider: FakeProvider) -> Iterator[anthropic.Anthropic]:
    with anthropic_client(provider.url) as client:
        yield client


@pytest.fixture
def gpt(provider: FakeProvider) -> Iterator[openai.OpenAI]:
    with openai_client(provider.url) as client:
        yield client
