"""The real SDKs pointed at a base URL, with every byte they receive kept, for comparing what
a client gets directly from the provider and through a proxy.

`anthropic_client(url)` and `openai_client(url)` (which adds `/v1`, as the OpenAI SDK
expects) build sync clients with `max_retries=0`, so a test sees each answer once; the
async twins do the same. Pass a `Capture` and each response's status, raw headers and
body chunks (after transfer decoding, before any content decoding) land in
`capture.responses`, in the order the SDK read them:

    capture = Capture()
    client = anthropic_client(provider.url, capture=capture)
    ...
    assert capture.last.body == provider.last.sent.body

Both SDKs speak through `httpx2`; the capture is a transport wrapper around its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import openai

TIMEOUT = 10.0


@dataclass
class Captured:
    request: httpx2.Request
    status: int
    headers: list[tuple[bytes, bytes]]  # as received, names and order kept
    chunks: list[bytes] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def header(self, name: str) -> str | None:
        wanted = name.lower().encode()
        return next((v.decode() for k, v in self.headers if k.lower() == wanted), None)


@dataclass
class Capture:
    responses: list[Captured] = field(default_factory=list)

    @property
    def last(self) -> Captured:
        return self.responses[-1]


class _Recorded(httpx2.SyncByteStream):
    def __init__(self, inner: Any, captured: Captured) -> None:
        self._inner, self._captured = inner, captured

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._captured.chunks.append(chunk)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _AsyncRecorded(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, captured: Captured) -> None:
        self._inner, self._captured = inner, captured

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._captured.chunks.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CapturingTransport(httpx2.BaseTransport):
    def __init__(self, capture: Capture) -> None:
        self._inner = httpx2.HTTPTransport()
        self._capture = capture

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._inner.handle_request(request)
        captured = Captured(request, response.status_code, list(response.headers.raw))
        self._capture.responses.append(captured)
        return _rewrapped(response, _Recorded(response.stream, captured))

    def close(self) -> None:
        self._inner.close()


class AsyncCapturingTransport(httpx2.AsyncBaseTransport):
    def __init__(self, capture: Capture) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._capture = capture

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        captured = Captured(request, response.status_code, list(response.headers.raw))
        self._capture.responses.append(captured)
        return _rewrapped(response, _AsyncRecorded(response.stream, captured))

    async def aclose(self) -> None:
        await self._inner.aclose()


def _rewrapped(response: httpx2.Response, stream: Any) -> httpx2.Response:
    return httpx2.Response(
        response.status_code,
        headers=response.headers,
        stream=stream,
        extensions=response.extensions,
    )


def _http(capture: Capture | None) -> httpx2.Client | None:
    return (
        httpx2.Client(transport=CapturingTransport(capture), timeout=TIMEOUT) if capture else None
    )


def _async_http(capture: Capture | None) -> httpx2.AsyncClient | None:
    if capture is None:
        return None
    return httpx2.AsyncClient(transport=AsyncCapturingTransport(capture), timeout=TIMEOUT)


def anthropic_client(
    base_url: str, api_key: str = "sk-ant-test", *, capture: Capture | None = None, **options: Any
) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=TIMEOUT,
        http_client=_http(capture),
        **options,
    )


def async_anthropic_client(
    base_url: str, api_key: str = "sk-ant-test", *, capture: Capture | None = None, **options: Any
) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=TIMEOUT,
        http_client=_async_http(capture),
        **options,
    )


def openai_client(
    base_url: str, api_key: str = "sk-test", *, capture: Capture | None = None, **options: Any
) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base_url + "/v1",
        api_key=api_key,
        max_retries=0,
        timeout=TIMEOUT,
        http_client=_http(capture),
        **options,
    )


def async_openai_client(
    base_url: str, api_key: str = "sk-test", *, capture: Capture | None = None, **options: Any
) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=base_url + "/v1",
        api_key=api_key,
        max_retries=0,
        timeout=TIMEOUT,
        http_client=_async_http(capture),
        **options,
    )
