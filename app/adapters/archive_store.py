"""Archives as one file each: `{data_dir}/archives/{id}.json`, the JSON document gzip-compressed
in members cut at message boundaries (`app.adapters.archive_file`); archives written
before compression are plain JSON under the same name, and read as they are.

Recall searches a session's archives: each save with a session writes the archive's word
index (`app.adapters.recall_index`, `{data_dir}/archive_index/{id}.recall`) and appends
its id to `{data_dir}/archive_index/{session_id}.ids`, so a search opens only that
session's indexes and reads only the snippets it returns. An archive listed without an
index (written before indexes existed, or its index write failed) is indexed by the next
recalls, at most `backfill_bytes` of archives each. Archives saved before the session list
existed are not found by recall (they stay readable by id).

A save is atomic and durable before it returns: write a unique temp file in the same
directory, fsync it, `os.replace` it onto the final name, fsync the directory. Any OSError
becomes an `ArchiveError` naming the errno, with the temp file removed; a failed fsync is
never retried (the page cache may already have dropped the data), so the caller must
write the whole archive again. Archives are immutable: an existing id is never replaced.
Numbers are written and read back as the agent sent them (app/core/json_numbers.py).
"""

from __future__ import annotations

import logging
import os
import threading

from app.adapters import archive_file, recall_index
from app.adapters.archive_file import decode_archive, encode_archive
from app.adapters.files import (
    FILE_MODE,
    WRITE_FLAGS,
    ensure_dir,
    errno_name,
    fsync_dir,
    read_regular,
    temp_path,
    unlink_quietly,
    write_temp,
)
from app.adapters.recorded_archives import RecordedArchives
from app.core.errors import ArchiveError
from app.core.ports import Archive
from app.core.recall import (
    SNIPPET_CHARS,
    Candidate,
    PostingBudget,
    Query,
    RecallResult,
    TimeLeft,
    check_deadline,
    entry_text,
    hit,
    index_archive,
    rank,
    snippet_bounds,
)
from app.core.sessions import is_valid_id

log = logging.getLogger("context_compact.archive")

ARCHIVES_DIRNAME = "archives"
INDEX_DIRNAME = "archive_index"  # one `{session_id}.ids` list of archive ids per session
BACKFILL_BYTES = 32 * 1024 * 1024  # archives a recall may read to index, at most
_SUFFIX = ".json"


class FileArchiveStore:
    """`ArchiveStore` on the local file system."""

    def __init__(
        self,
        data_dir: str,
        backfill_bytes: int = BACKFILL_BYTES,
        recorded: RecordedArchives | None = None,
    ) -> None:
        """`recorded`: recall leaves out the archives no record names past its grace (a
        killed compaction's leftovers, which the retention sweep deletes)."""
        self._data_dir = data_dir
        self._recorded = recorded
        self._dir = os.path.join(data_dir, ARCHIVES_DIRNAME)
        # Makes "refuse an existing id, then replace" atomic between threads of this process.
        self._publish_lock = threading.Lock()
        self._backfill_bytes = backfill_bytes

    def save(self, archive: Archive) -> None:
        ref = archive.ref
        if not is_valid_id(ref.id):
            raise ArchiveError("invalid archive id")
        if ref.session_id is not None and not is_valid_id(ref.session_id):
            raise ArchiveError("invalid session id")
        packed = archive_file.pack_archive(archive)
        final = self._path(ref.id)
        temp = temp_path(self._dir, ref.id)
        published = False
        try:
            self._ensure_dir()
            write_temp(temp, packed.data)
            with self._publish_lock:
                if self._exists(final):
                    raise ArchiveError("archive already exists")
                os.replace(temp, final)
            published = True
            fsync_dir(self._dir)
        except OSError as exc:
            if published:
                # The name may not survive a crash: withdraw it, so the caller writes the
                # whole archive again instead of trusting it.
                unlink_quietly(final)
            raise ArchiveError(f"archive write failed: {errno_name(exc)}") from exc
        finally:
            if not published:
                unlink_quietly(temp)
        if ref.session_id is not None:
            self._index(ref.session_id, archive, packed)

    def _index(self, session_id: str, archive: Archive, packed: archive_file.Packed) -> None:
        """Writes the archive's word index, then appends its id to the session's list of
        archives, which recall reads instead of opening every archive. A failure is logged,
        not raised: the archive is safe; a missing word index is written by a later
        recall, a missing list line means recall will not find it."""
        archive_id = archive.ref.id
        path = self._session_index(session_id)
        try:
            ensure_dir(os.path.dirname(path), self._data_dir)
            self._write_words(archive, packed)
        except OSError as exc:
            log.warning(
                "archive words not indexed for recall",
                extra={"archive_id": archive_id, "error": errno_name(exc)},
            )
        try:
            ensure_dir(os.path.dirname(path), self._data_dir)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                os.write(fd, f"{archive_id}\n".encode())
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            log.warning(
                "archive not indexed for recall",
                extra={"archive_id": archive_id, "error": errno_name(exc)},
            )

    def _write_words(self, archive: Archive, packed: archive_file.Packed | None = None) -> None:
        """Writes the archive's word index (`recall_index`), with where each message stands
        in the compressed archive when `packed` is what was written."""
        recall_index.write_index(
            self._words_path(archive.ref.id),
            archive.ref.session_id,
            index_archive(archive.messages),
            None if packed is None else packed.spans,
            None if packed is None else packed.members,
        )

    def search(
        self, session_id: str, query: Query, limit: int, time_left: TimeLeft
    ) -> RecallResult:
        if not is_valid_id(session_id) or not query.terms:
            return RecallResult([])
        budget = PostingBudget(query.words)
        found: list[Candidate] = []
        places: dict[tuple[str, int], recall_index.Place | None] = {}  # of a packed index
        backfill = self._backfill_bytes
        complete = True
        archive_ids = self.session_archives(session_id)
        if self._recorded is not None:
            leftovers = self._recorded.leftovers(session_id, archive_ids, self._dir)
            archive_ids = [a for a in archive_ids if a not in leftovers]
        for order in reversed(range(len(archive_ids))):  # newest first, within the budget
            check_deadline(time_left)
            archive_id = archive_ids[order]
            path = self._words_path(archive_id)
            if not os.path.exists(path):
                if backfill <= 0:
                    complete = False
                    continue
                backfill -= self._backfill(archive_id)
                if not os.path.exists(path):
                    continue
            with recall_index.open_index(path, time_left) as index:
                if index.owner() == session_id:
                    more = index.find(order, archive_id, budget)
                    found += more
                    if isinstance(index, recall_index.PackedIndex):  # no text in it
                        for c in more:
                            places[archive_id, c.message_index] = index.place(c.message_index)
        hits = []
        whole: dict[str, dict[int, str]] = {}  # archives read whole for their snippets
        for ranked in rank(found, query, limit):
            check_deadline(time_left)
            c = ranked.candidate
            start, end = snippet_bounds(ranked.at, c.length, SNIPPET_CHARS)
            where = (c.archive_id, c.message_index)
            if where in places:
                window = self._text(c.archive_id, c.message_index, places[where], whole)
                window = window[start:end]
            else:
                with recall_index.open_index(self._words_path(c.archive_id), time_left) as index:
                    window = index.window(c.message_index, start, end) or ""
            hits.append(hit(ranked, window))
        return RecallResult(hits, complete and not budget.cut)

    def _text(
        self,
        archive_id: str,
        message_index: int,
        place: recall_index.Place | None,
        whole: dict[str, dict[int, str]],
    ) -> str:
        """A message's text, from the archive: the one gzip member holding it when the
        index says where, else the whole archive (read once per recall); empty when the
        archive is gone."""
        if place is not None:
            message = archive_file.read_message(self._path(archive_id), *place)
            return "" if message is None else entry_text(message)
        if archive_id not in whole:
            archive = self.load(archive_id)
            entries = index_archive(archive.messages) if archive is not None else ()
            whole[archive_id] = {e.message_index: e.text for e in entries}
        return whole[archive_id].get(message_index, "")

    def _backfill(self, archive_id: str) -> int:
        """Indexes an archive listed without its word index; the bytes read (0 when the
        archive is gone). A failed write is an `ArchiveError`."""
        path = self._path(archive_id)
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise ArchiveError(f"archive read failed: {errno_name(exc)}") from exc
        archive = self.load(archive_id)
        if archive is None:
            return 0
        try:
            self._write_words(archive)
        except OSError as exc:
            raise ArchiveError(f"recall index write failed: {errno_name(exc)}") from exc
        return size

    def session_archives(self, session_id: str) -> list[str]:
        """The ids the session's archive list names, in order, once each; raises
        `ArchiveError` when the list cannot be read (none is no error)."""
        try:
            with open(self._session_index(session_id), "rb") as index:
                lines = index.read().decode("ascii", "replace").split()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ArchiveError(f"session index read failed: {errno_name(exc)}") from exc
        return list(dict.fromkeys(line for line in lines if is_valid_id(line)))

    def _words_path(self, archive_id: str) -> str:
        return os.path.join(self._data_dir, INDEX_DIRNAME, archive_id + recall_index.SUFFIX)

    def _session_index(self, session_id: str) -> str:
        return os.path.join(self._data_dir, INDEX_DIRNAME, session_id + ".ids")

    def load(self, archive_id: str) -> Archive | None:
        if not is_valid_id(archive_id):
            return None
        try:
            data = read_regular(self._path(archive_id))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ArchiveError(f"archive read failed: {errno_name(exc)}") from exc
        if data is None:
            raise ArchiveError("archive is not a regular file")
        return decode_archive(archive_id, data)

    def delete(self, archive_id: str) -> None:
        """Removes the archive of a compaction that was refused (its result was not kept);
        a missing one is already gone. Its parsed entries go too: a job writes its id
        again, and recall must read what is there, not what was."""
        if not is_valid_id(archive_id):
            raise ArchiveError("invalid archive id")
        unlink_quietly(self._words_path(archive_id))
        try:
            os.unlink(self._path(archive_id))
            fsync_dir(self._dir)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ArchiveError(f"archive delete failed: {errno_name(exc)}") from exc

    def writable(self) -> bool:
        probe = temp_path(self._dir, "probe")
        try:
            self._ensure_dir()
            os.close(os.open(probe, WRITE_FLAGS, FILE_MODE))
            os.unlink(probe)
        except OSError:
            unlink_quietly(probe)
            return False
        return True

    def _path(self, archive_id: str) -> str:
        return os.path.join(self._dir, archive_id + _SUFFIX)

    def _ensure_dir(self) -> None:
        ensure_dir(self._dir, self._data_dir)

    @staticmethod
    def _exists(path: str) -> bool:
        try:
            os.lstat(path)
        except FileNotFoundError:
            return False
        return True


__all__ = [
    "ARCHIVES_DIRNAME",
    "INDEX_DIRNAME",
    "FileArchiveStore",
    "decode_archive",
    "encode_archive",
]
