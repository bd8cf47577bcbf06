"""Retention on the file stores (`app.core.sessions.retention`): a file's age is its mtime, as
archives and records are written once and never changed.

- `archives/{id}.json` older than the cutoff goes with its word index
  (`archive_index/{id}.recall`); a session's list of archive ids
  (`archive_index/{session}.ids`) goes once nothing was appended to it since the cutoff
  (all its archives are older); lines naming archives already gone stay until then, and
  recall skips them.
- `sessions/{session}/compactions/{id}.json` older than the cutoff goes; the directories
  left empty go too.
- An archive listed for a session that no record of the session names, older than the
  orphans' cutoff, goes (`RecordedArchives`: each record file is read once, so a sweep
  reads only the records written since the last).

A replica sharing the directory may sweep at the same time: a file already gone is skipped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from datetime import datetime

from app.adapters import recall_index
from app.adapters.archive_store import ARCHIVES_DIRNAME, INDEX_DIRNAME, FileArchiveStore
from app.adapters.files import final_names
from app.adapters.record_store import RECORDS_DIRNAME, SESSIONS_DIRNAME
from app.adapters.recorded_archives import RecordedArchives, older
from app.core.errors import ArchiveError
from app.core.sessions import Stopped, SweepCounts, is_valid_id, never

log = logging.getLogger("context_compact.retention")

_ARCHIVE_SUFFIX = ".json"
_LIST_SUFFIX = ".ids"


class FileRetention:
    """`RetentionSweeper` on a data directory."""

    def __init__(self, data_dir: str, recorded: RecordedArchives) -> None:
        self._data_dir = data_dir
        self._archives = FileArchiveStore(data_dir)
        self.recorded = recorded
        self._stopped: Stopped = never

    def sweep(
        self, before: datetime | None, orphans_before: datetime, stopped: Stopped = never
    ) -> SweepCounts:
        self._stopped = stopped
        archives = records = 0
        if before is not None:
            cutoff = before.timestamp()
            archives = self._sweep_archives(cutoff)
            records = self._sweep_records(cutoff)
        orphans = self._sweep_orphans(orphans_before.timestamp())
        return SweepCounts(archives=archives, records=records, orphans=orphans)

    def _sweep_archives(self, cutoff: float) -> int:
        directory = os.path.join(self._data_dir, ARCHIVES_DIRNAME)
        deleted = 0
        for name in self._until_stopped(_listing(directory, _ARCHIVE_SUFFIX)):
            archive_id = name.removesuffix(_ARCHIVE_SUFFIX)
            if is_valid_id(archive_id) and older(os.path.join(directory, name), cutoff):
                deleted += self._delete(archive_id)
        index = os.path.join(self._data_dir, INDEX_DIRNAME)
        for name in self._until_stopped(_listing(index, _LIST_SUFFIX)):
            path = os.path.join(index, name)
            if older(path, cutoff) and _unlink(path):
                self.recorded.drop(name.removesuffix(_LIST_SUFFIX))
        words = _listing(index, recall_index.SUFFIX)  # a word index whose archive is gone
        for name in self._until_stopped(words):
            archive_id = name.removesuffix(recall_index.SUFFIX)
            path = os.path.join(index, name)
            gone = not os.path.exists(os.path.join(directory, archive_id + _ARCHIVE_SUFFIX))
            if gone and older(path, cutoff):
                _unlink(path)
        return deleted

    def _sweep_records(self, cutoff: float) -> int:
        sessions = os.path.join(self._data_dir, SESSIONS_DIRNAME)
        deleted = 0
        for session_id in self._until_stopped(_listing(sessions, "")):
            directory = os.path.join(sessions, session_id, RECORDS_DIRNAME)
            emptied = False
            for name in _listing(directory, _ARCHIVE_SUFFIX):
                path = os.path.join(directory, name)
                if older(path, cutoff) and _unlink(path):
                    deleted, emptied = deleted + 1, True
                    self.recorded.forget(session_id, name)
            # Never a directory just made for a first record: only one this sweep emptied,
            # or one nothing was added to since the cutoff.
            for empty in (directory, os.path.join(sessions, session_id)):
                if emptied or older(empty, cutoff):
                    _rmdir(empty)
        return deleted

    def _sweep_orphans(self, cutoff: float) -> int:
        index = os.path.join(self._data_dir, INDEX_DIRNAME)
        archives = os.path.join(self._data_dir, ARCHIVES_DIRNAME)
        deleted = 0
        for name in self._until_stopped(_listing(index, _LIST_SUFFIX)):
            session_id = name.removesuffix(_LIST_SUFFIX)
            if not is_valid_id(session_id):
                continue
            old = [
                archive_id
                for archive_id in self._listed(session_id)
                if older(os.path.join(archives, archive_id + _ARCHIVE_SUFFIX), cutoff)
            ]
            if old:
                named = self.recorded.named(session_id)
                deleted += sum(self._delete(a) for a in old if a not in named)
        return deleted

    def _listed(self, session_id: str) -> list[str]:
        try:
            return self._archives.session_archives(session_id)
        except ArchiveError:
            return []

    def _until_stopped(self, names: list[str]) -> Iterator[str]:
        for name in names:
            if self._stopped():
                return
            yield name

    def _delete(self, archive_id: str) -> int:
        try:
            self._archives.delete(archive_id)
        except ArchiveError as exc:
            log.warning("archive not swept", extra={"archive_id": archive_id, "error": str(exc)})
            return 0
        return 1


def _listing(directory: str, suffix: str) -> list[str]:
    try:
        return final_names(directory, suffix)
    except OSError:
        return []


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)  # refused while anything is in it
    except OSError:
        return
