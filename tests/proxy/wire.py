"""The wire under the proxy's tests, where httpx would normalise or hide it: a raw HTTP/1.1
upstream on 127.0.0.1 that records each request target and header as received, answers
as told or holds its answer (before its headers, or after them), and notes when the proxy
closes the connection; a raw client that sends a request target byte for byte; and a
direct ASGI call with a raw path of one's choosing."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

Hold = Literal["no", "before_headers", "after_headers"]
Headers = list[tuple[bytes, bytes]]


@dataclass
class Seen:
    """One request as the upstream received it."""

    target: bytes
    headers: Headers
    body: bytes
    opened: float = field(default_factory=time.monotonic)
    closed: float | None = None  # when the proxy closed the connection (monotonic)


class RawUpstream:
    """`with RawUpstream(...) as upstream:` serves on 127.0.0.1 until the block ends."""

    def __init__(
        self,
        status: int = 200,
        headers: Sequence[tuple[bytes, bytes]] = ((b"content-type", b"application/json"),),
        body: bytes = b'{"ok": true}',
        hold: Hold = "no",
    ) -> None:
        self.status, self.headers, self.body, self.hold = status, list(headers), body, hold
        self.seen: list[Seen] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.05)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> RawUpstream:
        self._spawn(self._accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in list(self._threads):
            thread.join(5)
        self._sock.close()

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            conn.settimeout(0.05)
            self._spawn(self._serve, conn)

    def _recv(self, conn: socket.socket) -> bytes | None:
        """The next bytes; b"" when the peer closed; None when stopping."""
        while not self._stop.is_set():
            try:
                return conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return b""
        return None

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    more = self._recv(conn)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                line, *lines = head.split(b"\r\n")
                headers = [
                    (k.strip().lower(), v.strip()) for k, _, v in (x.partition(b":") for x in lines)
                ]
                size = int(dict(headers).get(b"content-length", b"0"))
                while len(data) < size:
                    more = self._recv(conn)
                    if not more:
                        return
                    data += more
                seen = Seen(line.split(b" ")[1], headers, data[:size])
                data = data[size:]
                self.seen.append(seen)
                if self.hold == "no":
                    conn.sendall(self._head(len(self.body)) + self.body)
                    continue
                if self.hold == "after_headers":
                    conn.sendall(self._head(None) + b"1\r\n{\r\n")
                while (more := self._recv(conn)) is not None and more:
                    pass  # held: read until the proxy goes away
                seen.closed = time.monotonic() if more is not None else None
                return

    def _head(self, size: int | None) -> bytes:
        length = (
            [b"content-length: %d" % size] if size is not None else [b"transfer-encoding: chunked"]
        )
        lines = [b"HTTP/1.1 %d X" % self.status, *(k + b": " + v for k, v in self.headers), *length]
        return b"\r\n".join(lines) + b"\r\n\r\n"


def raw_request(
    url: str, target: bytes, headers: Sequence[tuple[bytes, bytes]] = (), body: bytes = b""
) -> tuple[int, Headers, bytes]:
    """`target` sent as is (GET, or POST with a body) over a new connection; the answer's
    status, headers and body (a chunked one joined)."""
    host, port = url.removeprefix("http://").split(":")
    method = b"POST" if body else b"GET"
    lines = [method + b" " + target + b" HTTP/1.1", b"host: " + host.encode(), b"connection: close"]
    lines += [k + b": " + v for k, v in headers] + [b"content-length: %d" % len(body)]
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    line, *fields = head.split(b"\r\n")
    answer = [(k.strip().lower(), v.strip()) for k, _, v in (f.partition(b":") for f in fields)]
    if (b"transfer-encoding", b"chunked") in answer:
        rest = _unchunked(rest)
    return int(line.split(b" ")[1]), answer, rest


def _unchunked(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2 :]
    return out


async def asgi_call(
    app: Any,
    raw_path: bytes,
    headers: Sequence[tuple[bytes, bytes]] = (),
    body: bytes = b"",
    observe: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[int, Headers, bytes]:
    """`app` called with `raw_path` as sent (and its decoding as `path`, as uvicorn makes
    it): the status, headers and body it answers; `observe` sees each message it sends."""
    path, _, query = raw_path.partition(b"?")
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST" if body else "GET",
        "path": unquote(path.decode("latin-1")),
        "raw_path": path,
        "query_string": query,
        "headers": list(headers),
        "server": ("127.0.0.1", 8787),
    }
    messages: list[dict[str, Any]] = []
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": body, "more_body": False}
        await _forever()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if observe is not None:
            observe(message)
        messages.append(message)

    await app(scope, receive, send)
    start = next(m for m in messages if m["type"] == "http.response.start")
    content = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return start["status"], list(start["headers"]), content


async def _forever() -> None:
    import asyncio

    await asyncio.Event().wait()
