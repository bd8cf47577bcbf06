"""Tiny builders for conversations, plain-callable fakes for the core's ports, and a
`CompactionService` wired to those fakes."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from app.core.errors import ArchiveError, RecordStoreError
from app.core.messages import Message
from app.core.ports import (
    Archive,
    FileSkip,
    FileText,
    SkipReason,
    Summarizer,
    SummaryRequest,
    Tokenizer,
    WorkdirReader,
)
from app.core.recall.search import RecallResult, TimeLeft, index_archive, search
from app.core.recall.terms import Query
from app.core.sessions.records import CompactionRecord
from app.service.compaction import CompactionPorts, CompactionService, Defaults
from app.service.slots import SummarySlots

_ids = itertools.count(1)


def system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(*blocks: dict[str, Any] | str) -> dict[str, Any]:
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return {"role": "assistant", "content": content}


def tool_use(name: str, tool_id: str | None = None, **inputs: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": tool_id or f"toolu_{next(_ids):04d}",
        "name": name,
        "input": inputs,
    }


def tool_result(tool_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


BULK_OUTPUT = "".join(f"test_case_{i:03d} PASSED in 0.01s\n" for i in range(120))


def bulk_round(tool_id: str = "bulk") -> list[dict[str, Any]]:
    """A long tool output early in a conversation: the summary replaces it, so a
    compaction of an otherwise tiny conversation still shrinks it (a compaction that would
    not is refused with `no_gain`)."""
    call = tool_use("list_tests", tool_id)
    return [assistant("Running the tests.", call), tool_result(tool_id, BULK_OUTPUT)]


def read_round(path: str, content: str = "...") -> list[dict[str, Any]]:
    """An assistant `read_file` call and its result."""
    call = tool_use("read_file", path=path)
    return [assistant(f"Reading {path}.", call), tool_result(call["id"], content)]


def rounds(
    first: int, last: int, output: str = "line of tool output\n" * 60
) -> list[dict[str, Any]]:
    """Rounds `first` to `last`: a task, a `bash` call, its `output`, a closing answer."""
    out: list[dict[str, Any]] = []
    for i in range(first, last + 1):
        out += [
            user(f"Task {i}."),
            assistant(f"Running {i}.", tool_use("bash", f"t{i}", command=f"make {i}")),
            tool_result(f"t{i}", output),
            assistant(f"Done {i}."),
        ]
    return out


def parse(messages: Sequence[dict[str, Any]]) -> list[Message]:
    return [Message.model_validate(m) for m in messages]


class FakeSummarizer:
    """A summarizer backed by a plain function; records every request it gets."""

    def __init__(
        self,
        fn: Callable[[SummaryRequest], Awaitable[str] | str] = lambda r: "SUMMARY",
        name: str = "fake",
    ) -> None:
        self._fn = fn
        self._name = name
        self.requests: list[SummaryRequest] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def reads_prompt(self) -> bool:
        return True

    async def aclose(self) -> None:
        """No client to close."""

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        result = self._fn(request)
        if isinstance(result, str):
            return result
        return await result


class DictWorkdir:
    """A work directory held in a dict; paths not in it are missing."""

    def __init__(self, files: dict[str, str] | None = None, *, readable: bool = True) -> None:
        self.files = files or {}
        self._readable = readable
        self.reads: list[str] = []

    def read_text(self, path: str, max_bytes: int) -> FileText | FileSkip:
        self.reads.append(path)
        if path not in self.files:
            return FileSkip(path, SkipReason.NOT_FOUND)
        if len(self.files[path].encode()) > max_bytes:
            return FileSkip(path, SkipReason.TOO_LARGE)
        return FileText(path, self.files[path])

    def readable(self) -> bool:
        return self._readable


class MemoryArchive:
    """An archive store in memory; `fail=True` makes every save fail like a full disk."""

    def __init__(self, *, fail: bool = False) -> None:
        self.saved: dict[str, Archive] = {}
        self.fail = fail

    def save(self, archive: Archive) -> None:
        if self.fail:
            raise ArchiveError("archive write failed: ENOSPC")
        self.saved[archive.ref.id] = archive

    def load(self, archive_id: str) -> Archive | None:
        return self.saved.get(archive_id)

    def delete(self, archive_id: str) -> None:
        self.saved.pop(archive_id, None)

    def writable(self) -> bool:
        return not self.fail

    def search(
        self, session_id: str, query: Query, limit: int, time_left: TimeLeft
    ) -> RecallResult:
        mine = sorted(a.ref.id for a in self.saved.values() if a.ref.session_id == session_id)
        found = ((i, index_archive(self.saved[i].messages)) for i in mine)
        return RecallResult(search(found, query, limit))


class MemoryRecords:
    """A record store in memory; `fail=True` makes every append fail like a full disk."""

    def __init__(self, *, fail: bool = False) -> None:
        self.saved: list[CompactionRecord] = []
        self.fail = fail

    def append(self, record: CompactionRecord) -> None:
        if self.fail:
            raise RecordStoreError("record write failed: ENOSPC")
        self.saved.append(record)

    def list(self, session_id: str) -> list[CompactionRecord]:
        return sorted((r for r in self.saved if r.session_id == session_id), key=lambda r: r.id)


def defaults_with(defaults: Defaults | None = None, **overrides: Any) -> Defaults:
    """`defaults` (the declared ones when None) with `overrides`: a field of `Defaults`, or
    a request option's server value by its field name (`read_tools=()`: none)."""
    base = defaults or Defaults()
    own = {k: v for k, v in overrides.items() if k in Defaults.__dataclass_fields__}
    options = {k: v for k, v in overrides.items() if k not in own}
    if "read_tools" in options:
        options["read_tools"] = list(options["read_tools"])
    return replace(base, **own, options=base.options.model_copy(update=options))


SERVICE_DEFAULTS = defaults_with(
    context_window=200_000,
    threshold=0.8,
    overflow_threshold=0.9,
    min_messages=3,
    max_restore_files=5,
    max_restore_tokens_per_file=5000,
    max_restore_tokens_total=50_000,
    read_tools=["read_file.path"],
    max_summary_words=1200,
    ledger_budget=0,  # the pipeline's exact output without the ledger (tested on its own)
)
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def build_service(
    tokenizer: Tokenizer,
    summarizer: Summarizer | None = None,
    *,
    defaults: Defaults = SERVICE_DEFAULTS,
    workdir: WorkdirReader | None = None,
    archive: MemoryArchive | None = None,
    fallback: Summarizer | None = None,
    records: MemoryRecords | None = None,
    slots: SummarySlots | None = None,
    clock: Callable[[], datetime] = lambda: NOW,
    new_id: Callable[[], str] = lambda: "arch-1",
    **overrides: Any,
) -> CompactionService:
    """A service over the fakes above: fixed clock, every archive id `arch-1` (unless
    `new_id`), `overrides` replacing fields of `defaults`."""
    return CompactionService(
        CompactionPorts(
            tokenizer=tokenizer,
            summarizer=summarizer or FakeSummarizer(),
            fallback=fallback,
            workdir=workdir or DictWorkdir(),
            archive=archive or MemoryArchive(),
            clock=clock,
            new_id=new_id,
            records=records,
            slots=slots,
        ),
        defaults_with(defaults, **overrides),
    )
