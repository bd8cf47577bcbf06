"""Which archives a session's compaction records name, on the file stores: what tells a
compaction's archive from a killed one's leftover (`app.core.sessions.retention`).

Each record file is read once by this process (records are written once, under unique
names) and the archive ids it names are remembered, so a recall or a sweep after the
first lists the session's records and reads only the new ones. Threads share it (recalls
run in worker threads beside the sweep): one lock around the reading.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import orjson

from app.adapters.files import final_names, read_regular
from app.adapters.record_store import RECORDS_DIRNAME, SESSIONS_DIRNAME

_SUFFIX = ".json"


class RecordedArchives:
    def __init__(self, data_dir: str, grace: float, clock: Callable[[], float] = time.time) -> None:
        self._sessions = os.path.join(data_dir, SESSIONS_DIRNAME)
        self.grace = grace  # seconds: an archive no record names is a leftover past this
        self._clock = clock
        self._named: dict[str, set[str]] = {}  # per session, the archive ids records name
        self._read: dict[str, set[str]] = {}  # per session, the record files read
        self._lock = threading.Lock()

    def named(self, session_id: str) -> set[str]:
        """The archive ids the session's records name (a copy), new records read."""
        directory = os.path.join(self._sessions, session_id, RECORDS_DIRNAME)
        try:
            names = final_names(directory, _SUFFIX)
        except OSError:
            names = []
        with self._lock:
            named = self._named.setdefault(session_id, set())
            read = self._read.setdefault(session_id, set())
            for name in names:
                if name not in read:
                    archive_id = _archive_of(os.path.join(directory, name))
                    if archive_id is not False:  # unreadable: read again next time
                        read.add(name)
                    if isinstance(archive_id, str):
                        named.add(archive_id)
            return set(named)

    def leftovers(self, session_id: str, archive_ids: list[str], archives: str) -> set[str]:
        """Those of `archive_ids` (files in `archives`) that no record of the session
        names, older than the grace."""
        named = self.named(session_id)
        cutoff = self._clock() - self.grace
        return {
            a
            for a in archive_ids
            if a not in named and older(os.path.join(archives, a + _SUFFIX), cutoff)
        }

    def drop(self, session_id: str) -> None:
        """A session swept whole: what was remembered of it goes (memory stays bounded by
        the sessions kept)."""
        with self._lock:
            self._named.pop(session_id, None)
            self._read.pop(session_id, None)

    def forget(self, session_id: str, record_name: str) -> None:
        """A record file swept: it is not read again if its name comes back."""
        with self._lock:
            self._read.get(session_id, set()).discard(record_name)


def _archive_of(path: str) -> str | bool | None:
    """The archive id a record names (None: none); False when it cannot be read now."""
    try:
        data = read_regular(path)
        document = orjson.loads(data) if data is not None else None
    except (OSError, orjson.JSONDecodeError):
        return False
    archive_id = document.get("archive_id") if isinstance(document, dict) else None
    return archive_id if isinstance(archive_id, str) else None


def older(path: str, cutoff: float) -> bool:
    """Whether the file at `path` was last written before `cutoff` (epoch seconds); False
    when it cannot be read now."""
    try:
        return os.stat(path).st_mtime < cutoff
    except OSError:
        return False
