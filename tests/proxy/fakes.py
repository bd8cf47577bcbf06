"""A fake of the proxy's `Upstream` port: it records what it is sent and answers from a
function, so the proxy's ASGI app is tested in-process (the real sockets and SDKs are in
`tests/proxy/test_sdk_*.py`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

import orjson

from app.core.errors import UpstreamError
from app.core.ports import RawHeaders


@dataclass
class Sent:
    method: str
    url: str
    headers: RawHeaders
    body: bytes

    @property
    def json(self) -> dict[str, object]:
        parsed = orjson.loads(self.body)
        assert isinstance(parsed, dict)
        return parsed


@dataclass
class Reply:
    status: int = 200
    headers: RawHeaders = field(default_factory=lambda: [(b"content-type", b"application/json")])
    chunks: Sequence[bytes] = (
        b'{"id": "msg_1", "usage": {"input_tokens": 10, "output_tokens": 2}}',
    )


class FakeAnswer:
    def __init__(self, reply: Reply) -> None:
        self._reply = reply
        self.closed = False

    @property
    def status(self) -> int:
        return self._reply.status

    @property
    def headers(self) -> RawHeaders:
        return list(self._reply.headers)

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._reply.chunks:
            yield chunk

    async def read(self) -> bytes:
        return b"".join(self._reply.chunks)

    async def aclose(self) -> None:
        self.closed = True


class FakeUpstream:
    def __init__(
        self, answer: Callable[[Sent], Reply] | None = None, *, down: bool = False
    ) -> None:
        self.answer = answer or (lambda sent: Reply())
        self.down = down
        self.sent: list[Sent] = []
        self.answers: list[FakeAnswer] = []
        self.closed = False

    async def send(self, method: str, url: str, headers: RawHeaders, body: bytes) -> FakeAnswer:
        if self.down:
            raise UpstreamError("the provider could not be reached: ConnectError")
        sent = Sent(method, url, list(headers), body)
        self.sent.append(sent)
        answer = FakeAnswer(self.answer(sent))
        self.answers.append(answer)
        return answer

    async def aclose(self) -> None:
        self.closed = True
