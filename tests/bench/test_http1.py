"""The load benchmark's HTTP/1.1 client against a scripted loopback server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from bench.http1 import Http1Connection, ProtocolError

pytestmark = pytest.mark.anyio

Answer = Callable[[bytes], bytes]


@asynccontextmanager
async def serving(answer: Answer) -> AsyncIterator[tuple[int, list[bytes]]]:
    """A server on 127.0.0.1 that answers each request's body with `answer(body)`; yields
    its port and the bodies it received."""
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                body = await reader.readexactly(length)
                received.append(body)
                writer.write(answer(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1], received


def json_answer(body: bytes) -> bytes:
    payload = b'{"echo": ' + body + b"}"
    return b"HTTP/1.1 201 Created\r\ncontent-length: %d\r\n\r\n%s" % (len(payload), payload)


async def test_two_posts_share_one_connection_and_return_status_and_body() -> None:
    async with serving(json_answer) as (port, received):
        connection = Http1Connection("127.0.0.1", port)
        assert await connection.post("/count", b"1") == (201, b'{"echo": 1}')
        assert await connection.post("/count", b"22") == (201, b'{"echo": 22}')
        await connection.close()
    assert received == [b"1", b"22"]


async def test_an_answer_without_content_length_is_a_protocol_error() -> None:
    def chunked(body: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"

    async with serving(chunked) as (port, _):
        connection = Http1Connection("127.0.0.1", port)
        with pytest.raises(ProtocolError, match="without Content-Length"):
            await connection.post("/count", b"{}")
