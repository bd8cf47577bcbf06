"""A fake LLM HTTP server on 127.0.0.1, for driving the real SDKs in tests.

It serves `POST /v1/messages` (Anthropic) and `POST /v1/chat/completions` (OpenAI-compatible)
from one script of replies, answered in order whatever the path (the last one repeats), and
records every request it receives (with `any_path`, every GET and POST to any path is
answered from the script too: a server whose every endpoint misbehaves). Use it as a
context manager:

    with start_fake_llm([reply(500, {...}), reply(200, anthropic_message("hi"))]) as fake:
        summarizer = AnthropicSummarizer(api_key="k", model="m", base_url=fake.url)
        ...
        assert len(fake.requests) == 2

An OpenAI client takes `fake.url + "/v1"` as its base URL.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

PATHS = frozenset({"/v1/messages", "/v1/chat/completions"})


@dataclass(frozen=True)
class Reply:
    """One scripted answer. A `bytes` body is sent as is, anything else as JSON. `delay`
    seconds pass before the answer (a slow LLM, or one that makes a client time out);
    with `drip`, the body is sent one byte every `drip` seconds (an LLM that never lets a
    read time out, yet never finishes)."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0


@dataclass(frozen=True)
class ReceivedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or the raw bytes when not JSON


def reply(
    status: int,
    body: Any,
    headers: Mapping[str, str] | None = None,
    *,
    delay: float = 0.0,
    drip: float = 0.0,
) -> Reply:
    return Reply(status, body, dict(headers or {}), delay, drip)


def anthropic_message(text: str, *, stop_reason: str = "end_turn") -> dict[str, Any]:
    """A Messages API response body with one text block."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def openai_completion(text: str, *, finish_reason: str = "stop") -> dict[str, Any]:
    """A Chat Completions response body with one choice."""
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FakeLlm:
    """The running server: its `url`, the `requests` it received; closes on exit."""

    def __init__(
        self,
        script: Sequence[Reply | tuple[int, Any, Mapping[str, str]]],
        *,
        record: bool = True,
        any_path: bool = False,
    ) -> None:
        if not script:
            raise ValueError("the script needs at least one reply")
        self._script = [r if isinstance(r, Reply) else Reply(*r) for r in script]
        self._record_requests = record
        self.any_path = any_path
        self._lock = threading.Lock()
        self._received = 0
        self._requests: list[ReceivedRequest] = []
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> FakeLlm:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def received(self) -> int:
        """How many requests arrived (also when they are not recorded)."""
        with self._lock:
            return self._received

    def _record(self, received: ReceivedRequest) -> Reply:
        with self._lock:
            self._received += 1
            if self._record_requests:
                self._requests.append(received)
            return self._script[min(self._received, len(self._script)) - 1]


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many summaries at once (the load benchmark) connect together


def start_fake_llm(
    script: Sequence[Reply | tuple[int, Any, Mapping[str, str]]],
    *,
    record: bool = True,
    any_path: bool = False,
) -> FakeLlm:
    """Starts a fake LLM server on a free port of 127.0.0.1; use it with `with`. With
    `record=False` it keeps no request bodies (a long benchmark would hoard them); with
    `any_path`, every GET and POST is answered from the script, whatever its path."""
    return FakeLlm(script, record=record, any_path=any_path)


def _handler_for(fake: FakeLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not fake.any_path:
                self.send_error(501, "Unsupported method ('GET')")  # as before any_path
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            self._send(fake._record(ReceivedRequest(self.path, headers, b"")))

        def do_POST(self) -> None:
            if self.path not in PATHS and not fake.any_path:
                self._send(Reply(404, {"error": {"type": "not_found_error", "message": "no"}}))
                return
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            headers = {name.lower(): value for name, value in self.headers.items()}
            self._send(fake._record(ReceivedRequest(self.path, headers, body)))

        def _send(self, answer: Reply) -> None:
            if answer.delay:
                time.sleep(answer.delay)
            if isinstance(answer.body, bytes):
                payload, content_type = answer.body, "text/plain"
            else:
                payload, content_type = json.dumps(answer.body).encode(), "application/json"
            self.send_response(answer.status)
            headers = {"content-type": content_type}
            headers.update((name.lower(), value) for name, value in answer.headers.items())
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            if not answer.drip:
                self.wfile.write(payload)
                return
            self.wfile.flush()
            for byte in payload:
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:  # the client gave up
                    return
                time.sleep(answer.drip)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    return Handler
