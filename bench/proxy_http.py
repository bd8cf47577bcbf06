"""A minimal keep-alive HTTP/1.1 client that times an answer's first byte, for the proxy's
benchmark: `Content-Length` and chunked bodies, any headers, one request at a time. Its own
cost is the same direct and through the proxy, so the paired difference is the proxy's."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Timed:
    status: int
    headers: dict[str, str]
    body: bytes  # after transfer decoding (chunks joined), as the client's SDK would read it
    first_byte: float  # seconds from the request's last byte to the status line's first
    wall: float  # seconds from the request's first byte to the body's last


class Client:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Timed:
        try:
            return await self._exchange(path, body, headers)
        except BaseException:
            await self.close()
            raise

    async def _exchange(self, path: str, body: bytes, headers: dict[str, str]) -> Timed:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._reader, self._writer
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}", "", ""]
        started = time.perf_counter()
        writer.writelines(["\r\n".join(lines).encode("latin-1"), body])
        await writer.drain()
        sent = time.perf_counter()
        status_line = await reader.readuntil(b"\r\n")
        first = time.perf_counter()
        named: dict[str, str] = {}
        while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.partition(b":")
            named[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        if "content-length" in named:
            payload = await reader.readexactly(int(named["content-length"]))
        elif named.get("transfer-encoding", "").lower() == "chunked":
            payload = await _chunked(reader)
        else:
            payload = await reader.read()
            await self.close()
        if named.get("connection", "").lower() == "close":
            await self.close()
        return Timed(
            int(status_line.split()[1]), named, payload, first - sent, time.perf_counter() - started
        )


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
