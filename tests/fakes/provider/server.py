"""The fake provider's HTTP server: a real socket on 127.0.0.1, one thread per connection,
HTTP/1.1 with keep-alive, so the real SDKs (and a proxy between them) talk to it over TCP.

Each request is recorded as it arrives (`provider.exchanges`); its answer is written by
hand — status line, headers, then the body in one write, or each stream event as one
chunk of a chunked body, flushed at once (Nagle off), with the scripted delays — and
recorded chunk by chunk as it goes out. A request body sent chunked (a streaming proxy's)
is read like one with a length. A client that goes away mid-stream is noted
(`sent.client_gone`) and the stream stops there, as a provider's does.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from tests.fakes.provider import anthropic, openai_chat, openai_responses
from tests.fakes.provider.records import Exchange, Received, Sent
from tests.fakes.provider.reply import Reply, json_reply
from tests.fakes.provider.scripts import Answer, Responder
from tests.fakes.provider.state import Flavor, State
from tests.fakes.provider.windows import Limits

Route = Callable[[State, Received], Reply]
POST_ROUTES: dict[str, Route] = {
    "/v1/messages": anthropic.messages,
    "/v1/messages/count_tokens": anthropic.count_tokens,
    "/v1/chat/completions": openai_chat.chat_completions,
    "/v1/responses": openai_responses.responses,
}
_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class FakeProvider:
    """A fake Anthropic and OpenAI provider; `with FakeProvider() as provider:` runs it."""

    def __init__(
        self, limits: Limits | None = None, *, flavor: Flavor = "openai", validate: bool = True
    ) -> None:
        self.state = State(limits or Limits(), flavor, validate)
        self.exchanges: list[Exchange] = []
        self.failures: list[BaseException] = []  # bugs of the fake itself, never swallowed
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the provider is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return [e.received for e in self.exchanges]

    @property
    def last(self) -> Exchange:
        with self._lock:
            return self.exchanges[-1]

    def script(self, *answers: Answer) -> None:
        self.state.script.add(*answers)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer by content: `responder(received)` gives the answer, or None for the queue."""
        self.state.script.responder = responder

    def reset(self) -> None:
        """Forget the exchanges, the script and the prompt cache (a test's fresh start)."""
        with self._lock:
            self.exchanges.clear()
            self.failures.clear()
        self.state.script.clear()
        self.state.cache.clear()

    def start(self) -> FakeProvider:
        handler = type("Handler", (_Handler,), {"provider": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-provider", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, received: Received) -> Sent:
        sent = Sent()
        with self._lock:
            self.exchanges.append(Exchange(received, sent))
        return sent

    def _answer(self, received: Received) -> Reply:
        route = POST_ROUTES.get(received.path) if received.method == "POST" else None
        if route is not None:
            return route(self.state, received)
        if received.method == "GET" and received.path == "/v1/models":
            if received.header("anthropic-version"):
                return anthropic.models(self.state)
            return openai_chat.models(self.state)
        if received.header("anthropic-version"):
            return anthropic.not_found()
        return openai_chat.not_found(received.method, received.path)


@contextmanager
def start_fake_provider(
    limits: Limits | None = None, *, flavor: Flavor = "openai", validate: bool = True
) -> Iterator[FakeProvider]:
    with FakeProvider(limits, flavor=flavor, validate=validate) as provider:
        yield provider


class _Handler(BaseHTTPRequestHandler):
    provider: FakeProvider
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the records say everything

    def _serve(self) -> None:
        received = self._receive()
        sent = self.provider._record(received)
        try:
            reply = self.provider._answer(received)
        except Exception as err:  # a bug of the fake: answer 500 and keep it for the test
            self.provider.failures.append(err)
            reply = json_reply(500, {"fake_provider_error": repr(err)})
        try:
            self._send(reply, sent)
        except _GONE:
            sent.client_gone = True
            self.close_connection = True
        finally:
            sent.done.set()

    def _receive(self) -> Received:
        path, _, query = self.path.partition("?")
        body = self._read_body()
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = None
        return Received(
            self.command, path, query, tuple(self.headers.items()), body, parsed, time.monotonic()
        )

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _send(self, reply: Reply, sent: Sent) -> None:
        if reply.first_byte_delay:
            time.sleep(reply.first_byte_delay)
        headers = [*reply.headers, ("date", formatdate(usegmt=True))]
        if reply.events is None:
            headers.append(("content-length", str(len(reply.body))))
        else:
            headers.append(("transfer-encoding", "chunked"))
        reason = (
            HTTPStatus(reply.status).phrase if reply.status in HTTPStatus._value2member_map_ else ""
        )
        lines = [f"HTTP/1.1 {reply.status} {reason}"] + [f"{k}: {v}" for k, v in headers]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        sent.status, sent.headers, sent.head = reply.status, headers, head
        if reply.events is None:
            self._write(sent, head + reply.body, reply.body)
            return
        sent.streamed = True
        self.wfile.write(head)
        for n, event in enumerate(reply.events):
            if reply.cut_after is not None and n >= reply.cut_after:
                sent.cut = True
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if n and reply.event_delay:
                time.sleep(reply.event_delay)
            self._write(sent, b"%x\r\n%s\r\n" % (len(event), event), event)
        self.wfile.write(b"0\r\n\r\n")

    def _write(self, sent: Sent, data: bytes, chunk: bytes) -> None:
        """Records the chunk before it goes out (a client may read it and look at the record
        at once) and takes it back if the client is gone."""
        sent.chunks.append(chunk)
        sent.times.append(time.monotonic())
        try:
            self.wfile.write(data)
        except _GONE:
            sent.chunks.pop()
            sent.times.pop()
            raise


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""  # 529 and other codes of the providers' own
