"""Compare a file's modification time with the session's last read of it.

Shared by `/compress-tool-result` (Read results) and file restoration in `/compact`. The
store is the data directory, not process memory, so every replica answers alike. A store
failure never fails the request: the answer comes without the note, with a warning.
Blocking (file I/O): callers run it in a worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.core.assemble import RestoredFile
from app.core.errors import SeenStoreError
from app.core.ports import FileSkip, FileText, SeenStore
from app.core.restore import modified_note, with_note

log = logging.getLogger("context_compact.freshness")


@dataclass(frozen=True)
class FreshnessCheck:
    note: str | None = None
    warning: str | None = None


class Freshness:
    def __init__(self, store: SeenStore) -> None:
        self.store = store

    def check(self, session_id: str, file: str, location: str, mtime_ns: int) -> FreshnessCheck:
        """The note for `file` (as the agent named it) when its mtime changed since the
        session last saw it; records the new time."""
        check = self.compare(session_id, file, location, mtime_ns)
        warning = self.record(session_id, file, location, mtime_ns)
        return FreshnessCheck(check.note, check.warning or warning)

    def compare(self, session_id: str, file: str, location: str, mtime_ns: int) -> FreshnessCheck:
        """The note, without recording anything (for a read the model may not get)."""
        try:
            previous = self.store.last_seen(session_id, location)
        except SeenStoreError as exc:
            return FreshnessCheck(warning=_failed(file, exc))
        return FreshnessCheck(modified_note(file, previous, mtime_ns))

    def record(self, session_id: str, file: str, location: str, mtime_ns: int) -> str | None:
        """Records that the session has now seen this version; a warning on failure."""
        try:
            if self.store.last_seen(session_id, location) != mtime_ns:
                self.store.remember(session_id, location, mtime_ns)
        except SeenStoreError as exc:
            return _failed(file, exc)
        return None

    def note_reads(
        self, session_id: str, reads: Sequence[FileText | FileSkip]
    ) -> tuple[list[FileText | FileSkip], list[str]]:
        """Files about to be restored, each with the note after its content when it changed
        since the session last read it (the `[Restored after compact] {path}:` prefix stays
        exact), and the warnings of the checks that failed."""
        noted: list[FileText | FileSkip] = []
        warnings: list[str] = []
        for read in reads:
            if isinstance(read, FileText) and read.mtime_ns is not None and read.location:
                check = self.compare(session_id, read.path, read.location, read.mtime_ns)
                _warn(warnings, check.warning)
                read = replace(read, text=with_note(read.text, check.note))
            noted.append(read)
        return noted, warnings

    def record_reads(
        self,
        session_id: str,
        reads: Sequence[FileText],
        restored: Sequence[RestoredFile],
    ) -> list[str]:
        """Only what the model gets back counts as seen: files skipped by a limit do not.
        The warnings of the records that failed."""
        paths = {file.path for file in restored}
        warnings: list[str] = []
        for read in reads:
            if read.path in paths and read.location and read.mtime_ns is not None:
                _warn(warnings, self.record(session_id, read.path, read.location, read.mtime_ns))
        return warnings


def _warn(found: list[str], warning: str | None) -> None:
    if warning is not None and warning not in found:
        found.append(warning)


def _failed(file: str, exc: SeenStoreError) -> str:
    log.warning("freshness store failed", extra={"error": str(exc)})
    return f"freshness of {file} not tracked: {exc}"
