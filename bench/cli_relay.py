"""A recording relay on 127.0.0.1 between a real agent CLI and what it talks to (the proxy,
or the provider when run direct), for `bench.claude_code_cli` and `bench.aider_cli`; and
what both read of a run (the proxy's actions) and write of it (a table of runs).

It forwards each request as it came and streams the answer back chunk by chunk, and keeps,
per answer, what the agent saw: the path, the status, the proxy's `x-compact-*` headers
and whether it was an error (a status of 400 or more, or an error event inside a stream
that answered 200). The provider's own record (the fake's `exchanges`) says what reached
the provider; this one says what reached the agent.
"""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "te"}
STREAM_ERRORS = (b"event: error", b'data: {"error"', b'"type":"response.failed"')


@dataclass(frozen=True)
class Answered:
    method: str
    path: str
    status: int
    compact: dict[str, str]  # the `x-compact-*` headers, names without the prefix
    error: bool


def npm_installed(package: str, into: Path, command: str) -> Path:
    """`package` installed from npm under `into`; the path of its `command`."""
    subprocess.run(
        ["npm", "install", "--prefix", str(into), "--no-audit", "--no-fund", package],
        check=True,
        capture_output=True,
    )
    return into / "node_modules" / ".bin" / command


def is_error(status: int, body: bytes) -> bool:
    """An error as the agent reads it: a failed status, or an error event in a stream."""
    return status >= 400 or any(marker in body for marker in STREAM_ERRORS)


@dataclass
class Relay:
    upstream: str
    answers: list[Answered] = field(default_factory=list)
    url: str = ""

    def record(self, answered: Answered) -> None:
        self.answers.append(answered)


@contextmanager
def relay(upstream: str) -> Iterator[Relay]:
    """A relay to `upstream` (a base URL on 127.0.0.1); yields it with its own `url`."""
    record = Relay(upstream)
    handler = type("Handler", (_Handler,), {"relay": record})
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    record.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # an agent that drops a kept-alive connection: no failure of the run
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    relay: Relay
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _forward(self) -> None:
        body = self._body()
        target = urlsplit(self.relay.upstream)
        upstream = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, 900)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["content-length"] = str(len(body))
        upstream.request(self.command, target.path.rstrip("/") + self.path, body, headers)
        answer = upstream.getresponse()
        self.send_response_only(answer.status, answer.reason)
        kept = [(k, v) for k, v in answer.getheaders() if k.lower() not in HOP_BY_HOP]
        for name, value in kept:
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        seen = bytearray()
        while chunk := answer.read1(65536):
            seen += chunk
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        upstream.close()
        compact = {
            k.lower().removeprefix("x-compact-"): v
            for k, v in kept
            if k.lower().startswith("x-compact-")
        }
        path = self.path.partition("?")[0]
        self.relay.record(
            Answered(self.command, path, answer.status, compact, is_error(answer.status, seen))
        )


def proxy_actions(api: str) -> dict[str, int]:
    """The proxy's actions over the run, from the app's `/metrics`."""
    text = httpx.get(f"{api}/metrics").text
    found = re.findall(r'context_compact_proxy_requests_total\{action="(\w+)"\} (\d+)', text)
    return {action: int(float(n)) for action, n in found}


def results_table(results: Sequence[dict[str, Any]], rows: Sequence[tuple[str, str]]) -> str:
    """A Markdown table: a column per run, a row per (label, key); – where a run lacks it."""
    head = "| measure | " + " | ".join(r["run"] for r in results) + " |"
    lines = [head, "|---|" + "---|" * len(results)]
    for label, key in rows:
        lines.append(f"| {label} | " + " | ".join(_cell(r.get(key)) for r in results) + " |")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "–"
    return "–" if value is None else str(value)
