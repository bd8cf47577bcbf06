"""A fake Anthropic and OpenAI provider on 127.0.0.1, for testing what sits between an agent's
SDK and its provider (the transparent proxy of issue 35) with the real SDKs, offline.

What it fakes: Anthropic `POST /v1/messages` (JSON and SSE, with text, tool use and thinking
deltas, `ping`, a mid-stream `error`), `/v1/messages/count_tokens` and `GET /v1/models`;
OpenAI `POST /v1/chat/completions` (JSON and SSE, tool-call fragments, the usage chunk only
when asked, `[DONE]`), `POST /v1/responses` (JSON and SSE) and `GET /v1/models`; usage with
the cache fields; a window per model with the providers' exact context-length errors
(`errors.py`), Anthropic's 413 over a byte size, llama.cpp's error with `flavor="llamacpp"`;
simulated prompt caching per credential and model (`caching.py`); the request rules a
rewritten body can break (`validation.py`); scripted answers, delays and failures
(`scripts.py`); a record of every request's raw bytes and of every byte sent back.
What it does not: a model (answers are scripted, the default is one short text), batches,
files, server tools, rate limits, cache expiry, HTTP/2, compression; images and documents
are counted as their JSON.

    with FakeProvider() as provider:
        client = anthropic_client(provider.url)   # tests.fakes.provider.sdk
        client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=[...])
"""

from tests.fakes.provider.records import Exchange, Received, Sent
from tests.fakes.provider.scripts import (
    DEFAULT_TEXT,
    Answer,
    StreamError,
    Text,
    Thinking,
    ToolCall,
    answer,
    raw,
    raw_stream,
)
from tests.fakes.provider.server import FakeProvider, start_fake_provider
from tests.fakes.provider.windows import Limits, cl100k_count

__all__ = [
    "DEFAULT_TEXT",
    "Answer",
    "Exchange",
    "FakeProvider",
    "Limits",
    "Received",
    "Sent",
    "StreamError",
    "Text",
    "Thinking",
    "ToolCall",
    "answer",
    "cl100k_count",
    "raw",
    "raw_stream",
    "start_fake_provider",
]
