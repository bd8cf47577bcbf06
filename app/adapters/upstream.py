"""The providers behind the proxy, over httpx: one pool, the client's headers and bytes as
they are, the answer's bytes as they arrive.

The client's headers are the only ones sent (httpx's own defaults, `accept-encoding` and
`user-agent` among them, are cleared), and the body goes as given; the answer is read raw
(`aiter_raw`: a compressed body stays compressed, as the provider sent it). No retry here:
a client SDK retries on its own, and a proxy that retried too would multiply them. A
connection that cannot be made, or an answer cut before its status, is an `UpstreamError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from app.core.errors import UpstreamError
from app.core.ports import RawHeaders

# A stream may stay quiet for minutes while a model thinks: only connecting is bounded here.
TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)
LIMITS = httpx.Limits(max_connections=512, max_keepalive_connections=128, keepalive_expiry=60)


class HttpxAnswer:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> RawHeaders:
        return list(self._response.headers.raw)

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the provider's answer broke off: {type(exc).__name__}") from exc

    async def read(self) -> bytes:
        return b"".join([chunk async for chunk in self.chunks()])

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpxUpstream:
    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._client = httpx.AsyncClient(
            timeout=TIMEOUT, limits=LIMITS, transport=transport, follow_redirects=False
        )
        self._client.headers = httpx.Headers()  # the client's headers only

    async def send(self, method: str, url: str, headers: RawHeaders, body: bytes) -> HttpxAnswer:
        request = self._client.build_request(method, url, headers=headers, content=body)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the provider could not be reached: {type(exc).__name__}") from exc
        return HttpxAnswer(response)

    async def aclose(self) -> None:
        await self._client.aclose()
