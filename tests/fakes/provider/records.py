"""What the fake provider received and what it sent back, kept for the test to compare.

A `Received` is the request as it arrived: the raw query string, every header with its
name as the client spelt it (`authorization`, `x-api-key` included: the fake is where a
proxy test looks for the key it forwarded), the raw body bytes and their JSON. A `Sent` is
filled while the answer goes out: the status line and header bytes, then each chunk of the
body as written (one per stream event), so `sent.body` is what a client reads after
transfer decoding, byte for byte.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Received:
    method: str
    path: str  # without the query string
    query: str  # raw, as sent after `?` ("" when none)
    headers: tuple[tuple[str, str], ...]  # in order, names as received
    body: bytes
    json: Any  # the parsed body, None when it is not JSON
    at: float  # time.monotonic() when the body was read

    def header(self, name: str) -> str | None:
        """The first value of a header, its name matched without case."""
        wanted = name.lower()
        return next((v for k, v in self.headers if k.lower() == wanted), None)

    @property
    def api_key(self) -> str | None:
        """The credential as a provider reads it: `x-api-key`, else a bearer token."""
        key = self.header("x-api-key")
        if key:
            return key
        scheme, _, token = (self.header("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return token.strip()


@dataclass
class Sent:
    """Filled as the answer is written; `done` is set when the last byte went out (or the
    client went away, `client_gone`)."""

    status: int = 0
    head: bytes = b""  # status line and headers, as written
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # time.monotonic() of each chunk
    streamed: bool = False
    cut: bool = False  # closed on purpose before the end (a scripted cut)
    client_gone: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers if k.lower() == wanted), None)

    def wait(self, timeout: float = 10.0) -> Sent:
        if not self.done.wait(timeout):
            raise TimeoutError("the fake provider is still answering")
        return self


@dataclass(frozen=True)
class Exchange:
    received: Received
    sent: Sent
