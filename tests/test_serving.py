"""The served protocol (`app/serving.py`): a request head is bounded in bytes and in time.

The first tests drive the protocol with a fake transport, to see exactly what reached the
parser; the others talk to a real server on 127.0.0.1 over raw sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from uvicorn.server import ServerState

from app import serving
from app.main import create_app
from app.serving import HeaderLimitedProtocol, header_limited, server_config
from app.settings import Settings
from tests.live_server import serve_config_in_thread

LIMIT = 4096


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "workdir": str(tmp_path),
        "data_dir": str(tmp_path / "data"),
        "summarizer": "extractive",
        "max_header_bytes": LIMIT,
    }
    return Settings(_env_file=None, **(values | overrides))  # type: ignore[call-arg]


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.eof_written = False
        self.closed = False
        self.reading = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof_written = True

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


class CountingParser:
    """Wraps the protocol's parser to count the bytes it was fed."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser
        self.fed = 0

    def feed_data(self, data: bytes) -> None:
        self.fed += len(data)
        self.parser.feed_data(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)


async def hello(scope: Any, receive: Any, send: Any) -> None:
    """Reads the whole body, answers its length and the request's path."""
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = f"{scope['path']} {size}".encode()
    length = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": length})
    await send({"type": "http.response.body", "body": body})


def connect(tmp_path: Path) -> tuple[HeaderLimitedProtocol, FakeTransport, CountingParser]:
    protocol_class = header_limited(settings(tmp_path))
    config = uvicorn.Config(hello, http=protocol_class, log_config=None, lifespan="off")
    config.load()
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    parser = CountingParser(protocol.parser)
    protocol.parser = parser  # type: ignore[assignment]
    transport = FakeTransport()
    protocol.connection_made(transport)
    return protocol, transport, parser


def head(size: int, path: str = "/x", extra: str = "") -> bytes:
    """A GET head of exactly `size` bytes, `\\r\\n\\r\\n` included."""
    start = f"GET {path} HTTP/1.1\r\nHost: t\r\n{extra}X-Pad: "
    pad = size - len(start) - len("\r\n\r\n")
    return (start + "a" * pad + "\r\n\r\n").encode()


async def answers(transport: FakeTransport) -> bytes:
    for _ in range(100):
        await asyncio.sleep(0)
    return bytes(transport.written)


@pytest.mark.anyio
async def test_a_head_past_the_limit_is_431_and_the_parser_sees_no_more_than_the_limit(
    tmp_path: Path,
) -> None:
    protocol, transport, parser = connect(tmp_path)
    chunk = b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 1000
    protocol.data_received(chunk)
    for _ in range(1000):  # 1 MB more in 1 kB pieces: all discarded after the refusal
        protocol.data_received(b"a" * 1000)
    written = bytes(transport.written)
    status, _, rest = written.partition(b"\r\n")
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large"
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.split(b"\r\n")
    assert json.loads(body) == {
        "error": "headers_too_large",
        "message": f"request line and headers exceed {LIMIT} bytes",
        "details": [],
    }
    assert parser.fed == LIMIT
    assert transport.eof_written


@pytest.mark.anyio
async def test_after_a_refusal_a_mebibyte_at_most_is_read_then_the_connection_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serving, "LINGER_SECONDS", 0.05)
    protocol, transport, parser = connect(tmp_path)
    protocol.data_received(b"GET / HTTP/1.1\r\nX-Big: " + b"a" * LIMIT)
    assert transport.written.startswith(b"HTTP/1.1 431 ")
    protocol.data_received(b"a" * serving.LINGER_BYTES)
    assert transport.reading
    protocol.data_received(b"a")
    assert not transport.reading
    assert not transport.closed
    await asyncio.sleep(0.2)
    assert transport.closed
    assert parser.fed == LIMIT


@pytest.mark.anyio
async def test_a_head_of_exactly_the_limit_is_served_and_one_byte_more_is_not(
    tmp_path: Path,
) -> None:
    protocol, transport, _parser = connect(tmp_path)
    protocol.data_received(head(LIMIT))
    assert (await answers(transport)).endswith(b"\r\n\r\n/x 0")
    over, over_transport, _ = connect(tmp_path)
    over.data_received(head(LIMIT + 1))
    assert over_transport.written.startswith(b"HTTP/1.1 431 ")


@pytest.mark.anyio
async def test_the_limit_counts_each_head_not_the_body_nor_the_previous_requests(
    tmp_path: Path,
) -> None:
    protocol, transport, parser = connect(tmp_path)
    body = b"b" * (LIMIT * 10)
    post = b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body)
    protocol.data_received(post + body + head(LIMIT - 10, "/b")[:100])
    assert (await answers(transport)).endswith(b"/a %d" % len(body))
    transport.written.clear()
    protocol.data_received(head(LIMIT - 10, "/b")[100:])
    assert (await answers(transport)).endswith(b"/b 0")
    assert parser.fed == len(post) + len(body) + LIMIT - 10


@pytest.mark.anyio
async def test_a_head_arriving_a_byte_at_a_time_is_refused_at_the_limit(tmp_path: Path) -> None:
    protocol, transport, parser = connect(tmp_path)
    for byte in head(LIMIT * 2):
        protocol.data_received(bytes([byte]))
    assert transport.written.startswith(b"HTTP/1.1 431 ")
    assert parser.fed == LIMIT


@pytest.mark.anyio
async def test_a_head_not_finished_in_time_gets_408_and_nothing_at_all_a_silent_close(
    tmp_path: Path,
) -> None:
    protocol_class = header_limited(settings(tmp_path, header_timeout=0.05))
    config = uvicorn.Config(hello, http=protocol_class, log_config=None, lifespan="off")
    config.load()
    started, silent = (
        protocol_class(config=config, server_state=ServerState(), app_state={}) for _ in range(2)
    )
    started_transport, silent_transport = FakeTransport(), FakeTransport()
    started.connection_made(started_transport)
    silent.connection_made(silent_transport)
    started.data_received(b"GET / HTTP/1.1\r\nHost: t\r\n")
    await asyncio.sleep(0.2)
    assert started_transport.written.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert json.loads(bytes(started_transport.written).partition(b"\r\n\r\n")[2]) == {
        "error": "request_timeout",
        "message": "request headers not received within 0.05 s",
        "details": [],
    }
    assert silent_transport.closed
    assert silent_transport.written == b""


@pytest.mark.anyio
async def test_the_header_timer_stops_while_the_app_answers(tmp_path: Path) -> None:
    protocol_class = header_limited(settings(tmp_path, header_timeout=0.05))
    release = asyncio.Event()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await release.wait()
        length = [(b"content-length", b"4")]
        await send({"type": "http.response.start", "status": 200, "headers": length})
        await send({"type": "http.response.body", "body": b"done"})

    config = uvicorn.Config(slow, http=protocol_class, log_config=None, lifespan="off")
    config.load()
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = FakeTransport()
    protocol.connection_made(transport)
    protocol.data_received(head(200))
    await asyncio.sleep(0.2)
    release.set()
    assert (await answers(transport)).endswith(b"\r\n\r\ndone")
    assert not transport.closed


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """The app behind `server_config`, as `python -m app serve` runs it, on 127.0.0.1."""
    chosen = settings(tmp_path_factory.mktemp("served"), header_timeout=0.5, keep_alive_timeout=1)
    with serve_config_in_thread(server_config(create_app(chosen), chosen, "127.0.0.1", 0)) as url:
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def read_until_closed(connection: socket.socket) -> bytes:
    connection.settimeout(5)
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def test_served_headers_over_the_limit_get_431_json_and_the_connection_closes(
    served: tuple[str, int],
) -> None:
    with socket.create_connection(served) as connection:
        with contextlib.suppress(OSError):  # the server may stop reading before the end
            connection.sendall(b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 2**20)
        answer = read_until_closed(connection)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 431 Request Header Fields Too Large"
    assert json.loads(body)["error"] == "headers_too_large"


@pytest.mark.slow
def test_served_head_not_finished_in_time_gets_408_and_is_closed(
    served: tuple[str, int],
) -> None:
    with socket.create_connection(served) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: 1\r\n")
        answer = read_until_closed(connection)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"] == "request_timeout"


@pytest.mark.slow
def test_served_connection_that_sends_nothing_is_closed(served: tuple[str, int]) -> None:
    with socket.create_connection(served) as connection:
        assert read_until_closed(connection) == b""


@pytest.mark.slow
def test_served_idle_keep_alive_connection_is_closed_after_its_answer(
    served: tuple[str, int],
) -> None:
    with socket.create_connection(served) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        answer = read_until_closed(connection)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b'{"status":"ok"}')


@pytest.mark.slow
def test_served_healthz_answers_while_large_heads_arrive_and_connections_drip(
    served: tuple[str, int],
) -> None:
    refused: list[bytes] = []
    stop = threading.Event()

    def blast() -> None:
        with socket.create_connection(served) as connection:
            with contextlib.suppress(OSError):
                connection.sendall(b"GET / HTTP/1.1\r\nX-Big: ")
                for _ in range(64):  # up to 16 MiB, stopped by the server
                    connection.sendall(b"a" * 2**18)
            refused.append(read_until_closed(connection).split(b"\r\n")[0])

    def drip() -> None:
        with socket.create_connection(served) as connection, contextlib.suppress(OSError):
            connection.sendall(b"GET / HTTP/1.1\r\n")
            while not stop.wait(0.05):
                connection.sendall(b"X-Drip: 1\r\n")

    workers = [threading.Thread(target=blast) for _ in range(4)]
    workers += [threading.Thread(target=drip) for _ in range(40)]
    for worker in workers:
        worker.start()
    try:
        statuses = [
            httpx.get(f"http://{served[0]}:{served[1]}/healthz", timeout=5).status_code
            for _ in range(20)
        ]
    finally:
        stop.set()
        for worker in workers:
            worker.join(10)
    assert statuses == [200] * 20
    assert refused == [b"HTTP/1.1 431 Request Header Fields Too Large"] * 4


@pytest.mark.anyio
async def test_a_pipelined_head_past_the_limit_lets_the_answer_in_flight_finish_then_closes(
    tmp_path: Path,
) -> None:
    protocol_class = header_limited(settings(tmp_path))
    release = asyncio.Event()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await release.wait()
        length = [(b"content-length", b"4")]
        await send({"type": "http.response.start", "status": 200, "headers": length})
        await send({"type": "http.response.body", "body": b"done"})

    config = uvicorn.Config(slow, http=protocol_class, log_config=None, lifespan="off")
    config.load()
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = FakeTransport()
    protocol.connection_made(transport)
    protocol.data_received(head(200) + b"GET /next HTTP/1.1\r\nX-Big: " + b"a" * 2 * LIMIT)
    await answers(transport)
    assert transport.written == b""
    assert not transport.reading
    release.set()
    written = await answers(transport)
    assert written.startswith(b"HTTP/1.1 200 OK\r\n")
    assert written.endswith(b"\r\n\r\ndone")
    assert transport.closed


@pytest.mark.anyio
async def test_an_upgrade_goes_to_the_app_without_uvicorn_s_advice_to_install_websockets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With `ws="none"` the app answers an upgrade itself (the proxy's 426): uvicorn's
    "No supported WebSocket library detected" would tell an operator to install one."""
    protocol_class = header_limited(settings(tmp_path))
    config = uvicorn.Config(hello, http=protocol_class, ws="none", log_config=None, lifespan="off")
    config.load()
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = FakeTransport()
    protocol.connection_made(transport)
    upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
    with caplog.at_level("DEBUG", logger="uvicorn.error"):
        protocol.data_received(head(300, "/v1/responses", upgrade))
        answer = await answers(transport)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"/v1/responses 0")
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []
