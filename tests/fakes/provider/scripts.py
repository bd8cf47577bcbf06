"""Scripted answers: what the fake model says to the next request, and how it says it.

By default every generating request (`/v1/messages`, `/v1/chat/completions`,
`/v1/responses`) gets `DEFAULT_TEXT`. A test scripts the next ones in order with
`provider.script(answer(...), ...)`; each API renders the same `Answer` in its own shape:

    answer(Thinking("plan", "sig"), Text("Reading it."), ToolCall("read_file", {"path": "a"}))
    answer(Text("slow"), first_byte_delay=0.5, event_delay=0.05)
    answer(error_after=3)          # a stream that fails after its first 3 events
    raw(529, {"type": "error", ...})  # this status and body, whatever the request

    raw_stream([b"event: ping\ndata: {...}\n\n", ...])  # these chunks, as they are

A scripted answer is used only by a request the provider accepts: one refused for its size
or shape gets the provider's error and leaves the script as it was (the retry a proxy makes
after compacting gets it). A raw answer is sent whatever the request. Answers are taken in
the order requests arrive; where several clients share one provider (an agent and a
summarizer), `provider.respond_with(fn)` answers by content instead: `fn(received)` returns
the answer for that request, or None to leave it to the queue.

Thinking is left out of Chat Completions; the Responses API answers it as a reasoning item.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.provider.records import Received

DEFAULT_TEXT = "Hello from the fake provider."


@dataclass(frozen=True)
class Text:
    text: str
    pieces: tuple[str, ...] = ()  # the deltas, when a test wants them exact

    def deltas(self) -> tuple[str, ...]:
        """The text in stream pieces: as given, else two words at a time."""
        if self.pieces:
            return self.pieces
        words = re.findall(r"\s*\S+\s*", self.text) or [self.text]
        return tuple("".join(words[i : i + 2]) for i in range(0, len(words), 2))


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: Mapping[str, Any]
    fragments: int = 3  # how many `input_json_delta` / arguments pieces

    def arguments(self) -> str:
        return json.dumps(self.input, separators=(",", ":"), ensure_ascii=False)

    def deltas(self) -> tuple[str, ...]:
        text = self.arguments()
        size = max(1, -(-len(text) // max(1, self.fragments)))
        return tuple(text[i : i + size] for i in range(0, len(text), size))


@dataclass(frozen=True)
class Thinking:
    thinking: str
    signature: str

    def deltas(self) -> tuple[str, ...]:
        return Text(self.thinking).deltas()


Block = Text | ToolCall | Thinking


@dataclass(frozen=True)
class StreamError:
    """An error that arrives inside a stream that already answered 200. Each API renders it
    in its own shape and fills what is left None with its own usual error (Anthropic
    `overloaded_error`, OpenAI `server_error`); `code` is OpenAI's."""

    type: str | None = None
    message: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class Answer:
    blocks: tuple[Block, ...] = (Text(DEFAULT_TEXT),)
    stop_reason: str | None = None  # None: from the blocks (tool use or end of turn)
    first_byte_delay: float = 0.0  # seconds before the status line
    event_delay: float = 0.0  # seconds between two stream events
    error_after: int | None = None  # stream: this many events, then `error`
    error: StreamError = StreamError()
    cut_after: int | None = None  # stream: this many events, then the connection drops
    # A raw answer: this status, body (bytes as they are, anything else as JSON) and headers.
    status: int | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_raw(self) -> bool:
        return self.status is not None

    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, Text))

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(b for b in self.blocks if isinstance(b, ToolCall))


def answer(*blocks: Block | str, **options: Any) -> Answer:
    """An answer of these blocks (a plain string is a `Text`), with `Answer`'s options."""
    built = tuple(Text(b) if isinstance(b, str) else b for b in blocks)
    return Answer(blocks=built or Answer().blocks, **options)


def raw(
    status: int, body: Any, headers: Mapping[str, str] | None = None, *, delay: float = 0.0
) -> Answer:
    return Answer(status=status, body=body, headers=dict(headers or {}), first_byte_delay=delay)


def raw_stream(
    chunks: Sequence[bytes],
    headers: Mapping[str, str] | None = None,
    *,
    delay: float = 0.0,
    event_delay: float = 0.0,
) -> Answer:
    """A 200 event stream of these chunks, byte for byte (a recorded provider stream)."""
    return Answer(
        status=200,
        body=tuple(chunks),
        headers=dict(headers or {}),
        first_byte_delay=delay,
        event_delay=event_delay,
    )


Responder = Callable[[Received], Answer | None]


class Script:
    """The queue of scripted answers, shared by the server's threads."""

    def __init__(self) -> None:
        self._queue: deque[Answer] = deque()
        self._lock = threading.Lock()
        self.responder: Responder | None = None

    def add(self, *answers: Answer) -> None:
        with self._lock:
            self._queue.extend(answers)

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
        self.responder = None

    def peek(self, received: Received) -> Answer:
        chosen = self.responder(received) if self.responder else None
        with self._lock:
            return chosen or (self._queue[0] if self._queue else Answer())

    def pop(self, received: Received) -> Answer:
        chosen = self.responder(received) if self.responder else None
        with self._lock:
            return chosen or (self._queue.popleft() if self._queue else Answer())

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)
