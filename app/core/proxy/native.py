"""Requests the proxy must send as they are, because the provider holds or compacts their
history itself (the answer's `x-compact-reason` says which).

- `server_state`: a Responses request that continues a history the provider stores
  (`previous_response_id`, `conversation`): the body holds only the new turn, so there is
  nothing of ours to compact, and a head put in would repeat what the provider keeps.
- `provider_compaction`: the provider's own compaction is in the request. Anthropic: a
  `compaction` content block (what its compaction left), or a `compact_*` edit in
  `context_management.edits`. OpenAI Responses: a `compaction` item in `input`, or a
  `compaction` entry in `context_management`. Its summary is opaque to us (encrypted or
  the provider's), and our head over it would fight the provider's. Claude Code's
  `clear_thinking_*` and `clear_tool_uses_*` edits only trim old blocks: not compaction,
  and ours goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SERVER_STATE = "server_state"
PROVIDER_COMPACTION = "provider_compaction"
PASSED = frozenset({SERVER_STATE, PROVIDER_COMPACTION})


def passed_as_sent(body: Mapping[str, Any]) -> str | None:
    """Why `body` goes as sent (`SERVER_STATE`, `PROVIDER_COMPACTION`), or None."""
    if body.get("previous_response_id") or body.get("conversation"):
        return SERVER_STATE
    if _compaction_asked(body.get("context_management")) or _compaction_in(body):
        return PROVIDER_COMPACTION
    return None


def _compaction_asked(management: Any) -> bool:
    """A `compact_*` edit (Anthropic) or a `compaction` entry (OpenAI)."""
    entries = management.get("edits") if isinstance(management, Mapping) else management
    return isinstance(entries, list) and any(
        isinstance(e, Mapping)
        and isinstance(e.get("type"), str)
        and (e["type"].startswith("compact_") or e["type"] == "compaction")
        for e in entries
    )


def _compaction_in(body: Mapping[str, Any]) -> bool:
    """A `compaction` item among the Responses `input`, or block in a message's content."""
    for key in ("messages", "input"):
        entries = body.get(key)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, Mapping):
                continue
            content = entry.get("content")
            blocks = [entry, *(content if isinstance(content, list) else ())]
            if any(isinstance(b, Mapping) and b.get("type") == "compaction" for b in blocks):
                return True
    return False
