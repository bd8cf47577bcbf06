"""The data directory as a whole: how much room is left on its file system, and the
debris of killed writers in every directory beneath it.

Every store (archives, jobs, session records, seen times) writes through `replace_durably`
(`app.adapters.files`): a temp file `.{name}.{random}.tmp` renamed onto its final name. A
process killed between the two leaves the temp file behind, in whichever directory it was
writing; a sweep removes those older than `STALE_TEMP_SECONDS` (a younger one may be
another replica's write in flight), at start-up and then periodically (`app.main`).

Free space: a probe that creates an empty file succeeds on a full disk (it needs an inode,
not a block), so readiness also asks `statvfs` how many bytes an unprivileged writer may
still use.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from app.adapters.files import STALE_TEMP_SECONDS, remove_stale_temps

log = logging.getLogger(__name__)


class DataDirectory:
    """`root` and everything beneath it (symlinked directories are not followed)."""

    def __init__(
        self,
        root: str,
        *,
        min_free_bytes: int = 0,
        statvfs: Callable[[str], os.statvfs_result] = os.statvfs,
    ) -> None:
        self.root = root
        self.min_free_bytes = min_free_bytes
        self._statvfs = statvfs

    def free_bytes(self) -> int | None:
        """Bytes available to an unprivileged writer on the data directory's file system;
        None when it cannot be asked (the directory is missing or unreadable)."""
        try:
            found = self._statvfs(self._existing())
        except OSError:
            return None
        return found.f_bavail * found.f_frsize

    def has_room(self) -> bool:
        """At least `min_free_bytes` free (always true when the minimum is 0)."""
        if self.min_free_bytes <= 0:
            return True
        free = self.free_bytes()
        return free is not None and free >= self.min_free_bytes

    def sweep_temps(self, older_than: float = STALE_TEMP_SECONDS) -> list[str]:
        """Deletes stale temp files in every directory beneath the root; their paths,
        relative to it."""
        removed: list[str] = []
        for directory, _dirs, _files in os.walk(self.root, followlinks=False):
            relative = os.path.relpath(directory, self.root)
            for name in remove_stale_temps(directory, older_than):
                removed.append(os.path.normpath(os.path.join(relative, name)))
        if removed:
            log.warning("removed stale temp files", extra={"count": len(removed)})
        return sorted(removed)

    def _existing(self) -> str:
        """The root, or its nearest existing parent (the stores create it on first write)."""
        path = os.path.abspath(self.root)
        while not os.path.exists(path) and os.path.dirname(path) != path:
            path = os.path.dirname(path)
        return path
