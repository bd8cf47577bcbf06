from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.assemble import RestoredFile
from app.core.errors import SeenStoreError
from app.core.ports import FileSkip, FileText, SkipReason
from app.service.compaction import CompactionPorts, CompactionService, CompactRequest
from app.service.freshness import Freshness, FreshnessCheck
from tests.builders import (
    SERVICE_DEFAULTS,
    FakeSummarizer,
    MemoryArchive,
    assistant,
    bulk_round,
    defaults_with,
    parse,
    read_round,
    user,
)

NOTE = "Note: a.py was modified externally."


class MemorySeen:
    def __init__(self, *, fail_read: bool = False, fail_write: bool = False) -> None:
        self.times: dict[tuple[str, str], int] = {}
        self.writes = 0
        self.fail_read = fail_read
        self.fail_write = fail_write

    def last_seen(self, session_id: str, location: str) -> int | None:
        if self.fail_read:
            raise SeenStoreError("seen time unreadable: EIO")
        return self.times.get((session_id, location))

    def remember(self, session_id: str, location: str, mtime_ns: int) -> None:
        if self.fail_write:
            raise SeenStoreError("seen time write failed: ENOSPC")
        self.writes += 1
        self.times[(session_id, location)] = mtime_ns


def test_first_read_records_then_a_changed_mtime_gets_the_note() -> None:
    store = MemorySeen()
    fresh = Freshness(store)
    assert fresh.check("s", "a.py", "a.py", 1) == FreshnessCheck()
    assert fresh.check("s", "./a.py", "a.py", 1) == FreshnessCheck()
    assert fresh.check("s", "a.py", "a.py", 2) == FreshnessCheck(note=NOTE)
    assert fresh.check("s", "a.py", "a.py", 2) == FreshnessCheck()
    assert fresh.check("other", "a.py", "a.py", 3) == FreshnessCheck()
    assert store.writes == 3  # an unchanged time is not written again


def test_an_unreadable_store_gives_a_warning_and_no_note() -> None:
    check = Freshness(MemorySeen(fail_read=True)).check("s", "a.py", "a.py", 1)
    assert check == FreshnessCheck(
        warning="freshness of a.py not tracked: seen time unreadable: EIO"
    )


def test_an_unwritable_store_still_gives_the_note_with_a_warning() -> None:
    store = MemorySeen()
    store.times[("s", "a.py")] = 1
    store.fail_write = True
    assert Freshness(store).check("s", "a.py", "a.py", 2) == FreshnessCheck(
        note=NOTE, warning="freshness of a.py not tracked: seen time write failed: ENOSPC"
    )


def test_restored_reads_get_the_note_and_only_restored_files_count_as_seen() -> None:
    store = MemorySeen()
    store.times[("s", "a.py")] = 1
    store.times[("s", "b.py")] = 1
    fresh = Freshness(store)
    reads = [
        FileText("a.py", "x\n", mtime_ns=2, location="a.py"),
        FileText("b.py", "y", mtime_ns=5, location="b.py"),
        FileSkip("c.py", SkipReason.NOT_FOUND),
        FileText("d.py", "z"),  # a reader that cannot tell the time
    ]
    noted, warnings = fresh.note_reads("s", reads)
    assert noted == [
        FileText("a.py", f"x\n\n{NOTE}"),
        FileText("b.py", "y\n\nNote: b.py was modified externally."),
        FileSkip("c.py", SkipReason.NOT_FOUND),
        FileText("d.py", "z"),
    ]
    assert store.times == {("s", "a.py"): 1, ("s", "b.py"): 1}  # comparing records nothing
    texts = [r for r in noted if isinstance(r, FileText)]
    recorded = fresh.record_reads("s", texts, [RestoredFile("a.py", "x", 1)])
    assert store.times == {("s", "a.py"): 2, ("s", "b.py"): 1}
    assert (warnings, recorded) == ([], [])


class TimedWorkdir:
    """A work directory whose files carry a modification time, as the sandbox reports."""

    def __init__(self, files: dict[str, tuple[str, int]]) -> None:
        self.files = files

    def read_text(self, path: str, max_bytes: int) -> FileText | FileSkip:
        location = path.removeprefix("./")
        if location not in self.files:
            return FileSkip(path, SkipReason.NOT_FOUND)
        text, mtime = self.files[location]
        return FileText(path, text, mtime_ns=mtime, location=location)

    def readable(self) -> bool:
        return True


def compaction(workdir: TimedWorkdir, store: MemorySeen, tokenizer: TiktokenTokenizer) -> Any:
    return CompactionService(
        CompactionPorts(
            tokenizer=tokenizer,
            summarizer=FakeSummarizer(),
            workdir=workdir,
            archive=MemoryArchive(),
            freshness=Freshness(store),
        ),
        defaults_with(
            SERVICE_DEFAULTS,
            max_restore_tokens_per_file=30,
            max_summary_words=100,
        ),
    )


MESSAGES = parse(
    [user("go"), *bulk_round(), *read_round("big.py"), *read_round("./a.py"), assistant("ok")]
)


@pytest.mark.anyio
async def test_compact_notes_changed_files_and_records_only_restored_ones(
    tokenizer: TiktokenTokenizer,
) -> None:
    store = MemorySeen()
    store.times[("s", "a.py")] = 1
    store.times[("s", "big.py")] = 1
    workdir = TimedWorkdir({"a.py": ("a = 1\n", 2), "big.py": ("word " * 50, 2)})
    service = compaction(workdir, store, tokenizer)
    result = await service.compact(CompactRequest(MESSAGES, force=True, session_id="s"))
    assert [m.content for m in result.messages[2:3]] == [
        "[Restored after compact] ./a.py:\na = 1\n\nNote: ./a.py was modified externally."
    ]
    assert [(s.path, s.reason) for s in result.skipped_files] == [("big.py", "too_many_tokens")]
    assert store.times == {("s", "a.py"): 2, ("s", "big.py"): 1}
    assert result.warnings == []


@pytest.mark.anyio
async def test_compact_with_a_failing_store_restores_without_the_note_and_warns(
    tokenizer: TiktokenTokenizer,
) -> None:
    workdir = TimedWorkdir({"a.py": ("a = 1\n", 2)})
    service = compaction(workdir, MemorySeen(fail_read=True), tokenizer)
    result = await service.compact(CompactRequest(MESSAGES, force=True, session_id="s"))
    assert result.messages[2].content == "[Restored after compact] ./a.py:\na = 1\n"
    assert result.warnings == ["freshness of ./a.py not tracked: seen time unreadable: EIO"]
