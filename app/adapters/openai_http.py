"""The HTTP client of an OpenAI-compatible server, as the summarizer and its probe use it:
one base URL (no trailing slash), the key as a bearer token when there is one, one timeout
for every phase of a call."""

from __future__ import annotations

import httpx


def server_client(
    base_url: str,
    api_key: str | None,
    timeout: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/"),
        headers=headers,
        timeout=httpx.Timeout(timeout),
        transport=transport,
    )
