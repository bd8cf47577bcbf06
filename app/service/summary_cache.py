"""Summaries already written, reused instead of asked for again.

A summarizer call is paid for; the same input asked twice (a compaction begun again from
the same history, a chunk summarized once more) gets the same answer, so it is answered
from the earlier call. Keyed by a digest of everything the summarizer reads: for one that
reads the prompt, the system prompt and prompt; for one that reads the messages (the
extractive one), their transcript (blocks, tool calls and results as an LLM's prompt has
them: an agent's cache breakpoint, or its latest text wrapped in a block to mark it, is
the same input) and the options it renders them with. Bounded: the least
recently used answers go first. A failed call is not kept (the next one may succeed).

Answers are reused within one session only (`reuse_within`, the compaction's session; none
without one): an answer served at once would tell a caller that another session, maybe
another key's, had summarized the very same text.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import orjson

from app.core.ports import SummaryRequest
from app.core.summary import serialize_for_summary

ANSWERS_KEPT = 128  # answers are a summary's size: a few kilobytes each

_scope: ContextVar[str | None] = ContextVar("summary_scope", default=None)


@contextmanager
def reuse_within(session_id: str | None) -> Iterator[None]:
    """Inside the block, answers are reused among the calls of `session_id` (None: never)."""
    token = _scope.set(session_id)
    try:
        yield
    finally:
        _scope.reset(token)


def reuse_scope() -> str | None:
    """The session whose answers may be reused here, if any."""
    return _scope.get()


class SummaryCache:
    def __init__(self, size: int = ANSWERS_KEPT) -> None:
        self.size = size
        self._answers: OrderedDict[bytes, str] = OrderedDict()

    def get(self, key: bytes) -> str | None:
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    def put(self, key: bytes, answer: str) -> None:
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self.size:
            self._answers.popitem(last=False)


def summary_key(scope: str, summarizer: str, reads_prompt: bool, request: SummaryRequest) -> bytes:
    """The digest of what `summarizer` reads of `request`, within the session `scope`
    (CPU work: off the event loop)."""
    digest = hashlib.sha256(scope.encode())
    if reads_prompt:
        read: list[object] = [request.system, request.prompt]
    else:
        read = [
            serialize_for_summary(request.messages),
            request.max_words,
            request.instructions,
            request.template,
            list(request.file_tools),
        ]
    digest.update(orjson.dumps([summarizer, reads_prompt, request.section, *read]))
    return digest.digest()
