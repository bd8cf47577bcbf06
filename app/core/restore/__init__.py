"""Files re-injected after a compaction: which ones and which fit (`plan`), and the note for
a file changed since the session read it (`freshness`)."""

from app.core.restore.freshness import modified_note, seen_key, with_note
from app.core.restore.plan import (
    FileReadTool,
    RestoreLimits,
    RestoreSelection,
    plan_restore,
    read_tools_from,
    select_restored,
)

__all__ = [
    "FileReadTool",
    "RestoreLimits",
    "RestoreSelection",
    "modified_note",
    "plan_restore",
    "read_tools_from",
    "seen_key",
    "select_restored",
    "with_note",
]
