"""The proxy's sessions on PostgreSQL (`ProxySessionStore`), shared by the replicas that
share the database, and the secret their session ids are keyed with.

One row a session: `version`, a new number from one sequence at every write;
`head_version`, the write that put the head in; the head as its JSON bytes (`bytea`:
`jsonb` would reorder its keys, and the provider's cache needs the same bytes), the rest a
small `jsonb`. A read is one indexed
query that returns no row while the caller's copy is current, and the head only when it
changed. Calls are short and bounded (`read_timeout`, the pool's call bound for writes);
after a failure the store answers at once with an error for `pause` seconds, so a
database that is down costs a request nothing (the proxy goes on from memory).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from anyio import to_thread
from psycopg.types.json import Jsonb

from app.adapters.pg_database import Database, describe
from app.adapters.pg_watchdog import Conn
from app.core.proxy import (
    Head,
    SessionState,
    StoredSession,
    clock_offset,
    decode_head,
    decode_state,
    encode_head,
    encode_state,
)


class ProxyStoreError(Exception):
    """The proxy's session store could not be read or written."""


class PgProxySessions:
    def __init__(self, database: Database, read_timeout: float = 1.0, pause: float = 5.0) -> None:
        self._db = database
        self.read_timeout = read_timeout
        self.pause = pause
        self._down_until = 0.0

    async def load(self, session_id: str, version: int, head_version: int) -> StoredSession | None:
        return await to_thread.run_sync(self._load, session_id, version, head_version)

    async def save(self, session_id: str, state: SessionState, head: Head | None = None) -> int:
        document = encode_state(state, clock_offset())
        return await to_thread.run_sync(self._save, session_id, document, head)

    def _load(self, session_id: str, version: int, head_version: int) -> StoredSession | None:
        row = self._call(
            "SELECT version, head_version, state, CASE WHEN head_version > %s THEN head END"
            " FROM compact_proxy_sessions WHERE session_id = %s AND version > %s",
            (head_version, session_id, version),
            self.read_timeout,
        )
        if row is None:
            return None
        stored_version, stored_head_version, state, head = row
        # No head put in since the caller's (or the row was pruned and written again
        # without one): the caller's own stands.
        if head is None:
            stored_head_version = head_version
        return StoredSession(
            int(stored_version),
            int(stored_head_version),
            None if head is None else decode_head(bytes(head)),
            decode_state(state, clock_offset()),
        )

    def _save(self, session_id: str, document: dict[str, Any], head: Head | None) -> int:
        # Versions come from one sequence: a row deleted and written again (a session
        # pruned, then back) still reads as newer than any replica's copy of the old one.
        if head is None:
            sql = (
                "INSERT INTO compact_proxy_sessions AS s (session_id, version, state)"
                " VALUES (%s, nextval('compact_proxy_versions'), %s)"
                " ON CONFLICT (session_id) DO UPDATE"
                " SET version = EXCLUDED.version, state = EXCLUDED.state, updated_at = now()"
                " RETURNING version"
            )
            params: tuple[Any, ...] = (session_id, Jsonb(document))
        else:
            sql = (
                "INSERT INTO compact_proxy_sessions AS s"
                " (session_id, version, head_version, head, state)"
                " VALUES (%s, nextval('compact_proxy_versions'), currval('compact_proxy_versions'),"
                " %s, %s) ON CONFLICT (session_id) DO UPDATE SET version = EXCLUDED.version,"
                " head_version = EXCLUDED.version, head = EXCLUDED.head, state = EXCLUDED.state,"
                " updated_at = now() RETURNING version"
            )
            params = (session_id, encode_head(head), Jsonb(document))
        row = self._call(sql, params, None)
        assert row is not None  # an upsert returns its row
        return int(row[0])

    def secret(self, timeout: float) -> bytes:
        """The key session ids are made with, the same for every replica on the database:
        the first to ask writes a random one."""
        with self._connection(timeout) as conn:
            conn.execute(
                "INSERT INTO compact_proxy_secret (id, secret) VALUES (1, %s)"
                " ON CONFLICT (id) DO NOTHING",
                (os.urandom(32),),
            )
            row = conn.execute("SELECT secret FROM compact_proxy_secret").fetchone()
        assert row is not None  # it was there, or was just written
        return bytes(row[0])

    def _call(self, sql: str, params: tuple[Any, ...], timeout: float | None) -> Any:
        with self._connection(timeout) as conn:
            return conn.execute(sql.encode(), params).fetchone()

    @contextmanager
    def _connection(self, timeout: float | None) -> Iterator[Conn]:
        """A connection for one call; none while the pause after a failure lasts."""
        if time.monotonic() < self._down_until:
            raise ProxyStoreError("the database failed moments ago; not asked again yet")
        try:
            with self._db.connection(timeout) as conn:
                yield conn
        except psycopg.Error as exc:
            self._down_until = time.monotonic() + self.pause
            raise ProxyStoreError(describe(exc)) from exc
