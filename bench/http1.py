"""A minimal keep-alive HTTP/1.1 client over asyncio streams, for load generation only.

A load benchmark must cost its client less than the server it measures. With httpx, 64
clients in one process spent 23 s of CPU in a 31 s run against the server's 10 s, and the
latencies it reported were mostly its own event loop's queue. This client does only what
the load needs: POST a JSON body on one connection, read the status and a body framed by
`Content-Length` (what uvicorn sends for every JSON answer of this service). Anything else
is a `ProtocolError`; after any error the connection is dropped and the next request
opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib


class ProtocolError(Exception):
    pass


class Http1Connection:
    """One connection to `host:port`, opened on first use, one request at a time."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """(status, body) of a `POST path` with a JSON `body`."""
        try:
            return await self._exchange(path, body)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _exchange(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._reader, self._writer
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        writer.writelines([head.encode("ascii"), body])
        await writer.drain()
        status_line = await reader.readuntil(b"\r\n")
        parts = status_line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"bad status line {status_line[:80]!r}")
        length: int | None = None
        close = False
        while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection":
                close = value.strip().lower() == b"close"
        if length is None:
            raise ProtocolError("answer without Content-Length")
        payload = await reader.readexactly(length)
        if close:
            await self.close()
        return int(parts[1]), payload
