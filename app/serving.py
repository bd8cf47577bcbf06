"""How `python -m app serve` runs uvicorn: httptools with a limit on header size and time.

uvicorn's httptools protocol puts no bound on a request's head: httptools joins a header
line piece by piece (a 256 MB line was accepted, and joining it kept the event loop busy
for seconds), and nothing closes a client that never finishes its headers. The protocol
here counts the bytes of each request's head before the parser sees them and feeds it at
most `max_header_bytes`: past that, 431 and the connection is closed without reading the
rest. A timer runs from the connection (or a request's first byte) to the end of the
headers: past `header_timeout`, 408 (or, if nothing came, a silent close). Idle
keep-alive connections close after `keep_alive_timeout` (uvicorn's own timer).

httptools does not say where in a read one request ends, so a pipelined head that starts
in the read ending the previous request is counted from after the part of the read that
held that end: it may pass the limit by at most one read (256 KiB).

After a refusal the write side is shut and what the client still sends is discarded, for
at most `LINGER_SECONDS` and `LINGER_BYTES` (then reading stops), so a client that reads
the answer gets it instead of a reset, and one that keeps sending costs nothing more.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from app.settings import Settings

LINGER_SECONDS = 1.0
LINGER_BYTES = 1 << 20


class HeaderLimitedProtocol(HttpToolsProtocol):
    """HttpToolsProtocol that bounds each request head in bytes and in time."""

    max_header_bytes = 64 * 1024
    header_timeout = 10.0
    # Ports whose answers get no `date` or `server` of uvicorn's: the proxy's, where the
    # provider's own go through (two `date` headers and `server: uvicorn` otherwise).
    bare_ports: frozenset[int] = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_open = True
        self._head_bytes = 0
        self._heads_done = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self._discarded = 0

    def _unsupported_upgrade_warning(self) -> None:
        """Served with `ws="none"`, an upgrade is a plain request the app answers (the
        proxy's 426, `app.proxy.upgrade`): uvicorn's two warnings, which tell the operator
        to install a WebSocket library, would be wrong advice in every such log."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused or self.transport.is_closing():
            self._discard(len(data))
            return
        if not self._head_open:
            super().data_received(data)
            return
        if self._head_timer is None:
            self._start_head_timer()
        room = self.max_header_bytes - self._head_bytes
        if len(data) <= room:
            self._head_bytes += len(data)
            super().data_received(data)
            return
        heads_done = self._heads_done
        super().data_received(data[:room])
        if self._refused or self.transport.is_closing():
            return
        if self._heads_done == heads_done:
            self._refuse(
                431,
                "headers_too_large",
                f"request line and headers exceed {self.max_header_bytes} bytes",
            )
            return
        self.data_received(data[room:])  # the body, or the next request's head

    def _discard(self, size: int) -> None:
        """The rest of a refused request: dropped, until the linger budget is spent."""
        self._discarded += size
        if self._discarded > LINGER_BYTES and not self.transport.is_closing():
            self.transport.pause_reading()

    def on_headers_complete(self) -> None:
        self._head_open = False
        self._heads_done += 1
        self._stop_head_timer()
        super().on_headers_complete()
        if self.cycle is not None and self._bare():
            self.cycle.default_headers = []

    def _bare(self) -> bool:
        """Whether this connection came to a port that answers without our headers."""
        return self.server is not None and self.server[1] in self.bare_ports

    def on_message_complete(self) -> None:
        self._head_open = True
        self._head_bytes = 0
        super().on_message_complete()

    def _start_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or not self._head_open:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self._start_head_timer()  # a response is still being written: not idle
            return
        if self._head_bytes == 0:
            self.transport.close()
            return
        self._refuse(
            408, "request_timeout", f"request headers not received within {self.header_timeout} s"
        )

    def _refuse(self, status: int, error: str, message: str) -> None:
        self._refused = True
        self._stop_head_timer()
        self._unset_keepalive_if_required()
        self.logger.warning("refused a request head: %s (%s)", error, status)
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head while the previous answer is being written: that answer
            # goes out whole, then the connection closes; nothing more is read.
            self.cycle.keep_alive = False
            self.transport.pause_reading()
            return
        body = json.dumps({"error": error, "message": message, "details": []}).encode()
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            if name != b"server" or not self._bare():
                head += [name, b": ", value, b"\r\n"]
        head += [
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
            body,
        ]
        self.transport.write(b"".join(head))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


def header_limited(
    settings: Settings, bare_ports: frozenset[int] = frozenset()
) -> type[HeaderLimitedProtocol]:
    """The protocol class with the settings' limits (uvicorn builds one per connection)."""

    class Configured(HeaderLimitedProtocol):
        max_header_bytes = settings.max_header_bytes
        header_timeout = settings.header_timeout

    Configured.bare_ports = bare_ports
    return Configured


def server_config(app: Any, settings: Settings, host: str, port: int) -> uvicorn.Config:
    """The one uvicorn configuration every start path uses; behind `PortDispatch`, the
    proxy's port answers with the provider's `date` and `server` only."""
    bare = frozenset({app.proxy_port}) if isinstance(app, PortDispatch) else frozenset()
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=header_limited(settings, bare),
        ws="none",  # no WebSocket routes: an upgrade is answered as plain HTTP
        timeout_keep_alive=settings.keep_alive_timeout,
        log_config=None,  # our handler (setup_logging) writes uvicorn's lines too
        access_log=False,  # one `request` line per request comes from the app
    )


class PortDispatch:
    """One ASGI app behind two listeners: requests to the proxy's port go to the proxy
    (`app.proxy`), every other request and the lifespan to the API. A separate port
    because the OpenAI SDK's key travels in `Authorization: Bearer`, which the API's own
    token uses."""

    def __init__(self, api: Any, proxy: Any, proxy_port: int) -> None:
        self.api = api
        self.proxy = proxy
        self.proxy_port = proxy_port

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        server = scope.get("server") or (None, None)
        if scope["type"] == "http" and server[1] == self.proxy_port:
            await self.proxy(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket (IPv6 when `host` is an IPv6 address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
