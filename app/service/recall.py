"""Recall over a session's archives, off the event loop (the store reads files)."""

from __future__ import annotations

from anyio import to_thread

from app.core.ports import ArchiveStore
from app.core.recall import RecallHit


async def recall(store: ArchiveStore, session_id: str, query: str, limit: int) -> list[RecallHit]:
    """The store's best matches in this session's archives; raises `ArchiveError`."""
    return await to_thread.run_sync(store.search, session_id, query, limit)
