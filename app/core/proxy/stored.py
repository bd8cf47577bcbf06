"""What the proxy keeps of a session beyond one replica: the head its requests carry and
what judges its next request (the provider's count ratio, the last summary's size, the
pause after a head, the pace), behind a port (`ProxySessionStore`) that a database or the
process's memory serves.

Replicas behind a load balancer share a session through it: the head a replica puts in is
written with a new `version`, and a replica whose copy is older reads it again before it
splices, so every replica sends the same head bytes. Heads are stored as their JSON bytes
(never a structure the store may reorder) with the numbers as the agent sent them.
Background compactions and the heads they finish stay with the replica that runs them.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core import json_numbers
from app.core.cost import SummarizerCost
from app.core.proxy.pace import Pace
from app.core.proxy.splice import Head


@dataclass(frozen=True)
class SessionState:
    """The small part, written after each request: `Pace.last_at` as wall-clock seconds
    (`Pace` itself reads a monotonic clock, which is each process's own)."""

    ratio: float | None = None
    made: int = 0
    quiet_below: int = 0
    pace: Pace = field(default_factory=Pace)


@dataclass(frozen=True)
class StoredSession:
    """A session as stored: `version` is raised by every write, `head_version` is the
    version that put `head` in (0: none was)."""

    version: int
    head_version: int
    head: Head | None
    state: SessionState


class ProxySessionStore(Protocol):
    """Where replicas share their sessions. Errors are the adapter's own: the proxy logs
    them and goes on with what it holds in memory."""

    async def load(self, session_id: str, version: int, head_version: int) -> StoredSession | None:
        """The session when it was written since `version`, else None; its head only when
        put in since `head_version` (else `head` is None and `head_version` the caller's)."""
        ...

    async def save(self, session_id: str, state: SessionState, head: Head | None = None) -> int:
        """Writes `state`, and `head` when given; the session's new version."""
        ...


class MemorySessionStore:
    """The store of a proxy without a database: the latest `max_sessions` sessions, the
    least recently used forgotten. It holds the same objects the proxy does (no copy), so
    one process's proxies share sessions at no cost in memory."""

    def __init__(self, max_sessions: int = 1000) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, StoredSession] = OrderedDict()
        self._version = 0

    async def load(self, session_id: str, version: int, head_version: int) -> StoredSession | None:
        stored = self._sessions.get(session_id)
        if stored is None or stored.version <= version:
            return None
        self._sessions.move_to_end(session_id)
        if stored.head_version <= head_version:
            return StoredSession(stored.version, head_version, None, stored.state)
        return stored

    async def save(self, session_id: str, state: SessionState, head: Head | None = None) -> int:
        self._version += 1
        old = self._sessions.pop(session_id, None)
        if head is None and old is not None:
            stored = StoredSession(self._version, old.head_version, old.head, state)
        else:
            stored = StoredSession(self._version, self._version if head else 0, head, state)
        self._sessions[session_id] = stored
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        return self._version


# the codec ------------------------------------------------------------------------------


def encode_head(head: Head) -> bytes:
    """The head as JSON bytes: its messages exactly as they will be sent again, and each
    of its other fields."""
    fields = {f.name: getattr(head, f.name) for f in dataclasses.fields(Head)}
    return json_numbers.dumps({**fields, "core": list(head.core), "cost": head.cost.model_dump()})


def decode_head(data: bytes) -> Head:
    """The head `encode_head` wrote (a field it lacks, written before the field was, takes
    its default)."""
    document, _ = json_numbers.loads(data, None)
    names = {f.name for f in dataclasses.fields(Head)}
    fields = {k: v for k, v in document.items() if k in names}
    if "cost" in fields:
        fields["cost"] = SummarizerCost.model_validate(fields["cost"])
    return Head(**{**fields, "core": tuple(document["core"])})


def clock_offset() -> float:
    """The wall clock less this process's monotonic clock."""
    return time.time() - time.monotonic()


def encode_state(state: SessionState, offset: float) -> dict[str, Any]:
    """`state` as plain JSON values, `last_at` moved from the monotonic clock to the wall
    clock (`offset`: `clock_offset()`)."""
    pace = state.pace
    return {
        "ratio": state.ratio,
        "made": state.made,
        "quiet_below": state.quiet_below,
        "pace": {
            "kept": pace.kept,
            "sizes": list(pace.sizes),
            "last_at": None if pace.last_at is None else pace.last_at + offset,
            "turn_seconds": pace.turn_seconds,
            "compaction_seconds": pace.compaction_seconds,
            "largest": pace.largest,
        },
    }


def decode_state(document: Any, offset: float) -> SessionState:
    """The state `encode_state` wrote, `last_at` on this process's monotonic clock."""
    pace = document["pace"]
    last_at = pace["last_at"]
    return SessionState(
        ratio=_float_or_none(document["ratio"]),
        made=int(document["made"]),
        quiet_below=int(document["quiet_below"]),
        pace=Pace(
            kept=int(pace["kept"]),
            sizes=[int(s) for s in pace["sizes"]],
            last_at=None if last_at is None else float(last_at) - offset,
            turn_seconds=_float_or_none(pace["turn_seconds"]),
            compaction_seconds=_float_or_none(pace["compaction_seconds"]),
            largest=int(pace["largest"]),
        ),
    )


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)
