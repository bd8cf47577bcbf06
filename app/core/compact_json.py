"""The one JSON form used for counting, hashing and quoting a tool call's input: compact,
key-sorted, non-ASCII kept as is."""

from __future__ import annotations

import json
from typing import Any

# Built once: `json.dumps` with non-default options builds an encoder on every call, a large
# part of the cost of serializing the small `tool_use` inputs of a long history.
_COMPACT_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """Compact, key-sorted JSON: the one JSON form used for counting and hashing."""
    return _COMPACT_JSON.encode(value)
