"""The PostgreSQL connection pool and the schema migrations, for the shared deployment.

One synchronous `psycopg_pool.ConnectionPool` per process: the stores are called from
worker threads (`anyio.to_thread`), like the file stores, so a thread borrows a connection
for one short transaction and gives it back. The pool opens without waiting, so a process
whose database is down still starts (`/readyz` says why) and reconnects when it is back;
every borrowed connection is checked first, so a connection broken by a database restart
is replaced instead of failing one request. Every use of a connection is bounded in time
(`app.adapters.pg_watchdog`), and TCP keepalives with a user timeout let the kernel drop a
connection whose peer vanished: a stalled database fails a call, it never holds it.

Migrations are numbered SQL steps applied in one transaction under a transaction-level
advisory lock: replicas starting together queue on the lock, the first applies what is
missing, the others find the version current and apply nothing. A process whose database
was down at start applies them on its first successful use.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from app.adapters.pg_watchdog import Conn, DatabaseStalled, Watchdog
from app.core.request_context import DEADLINE

log = logging.getLogger("context_compact.database")

# pg_advisory_xact_lock key of the migrations: any fixed 64-bit number unique to this app.
MIGRATION_LOCK_KEY = 0x636F6D7061637401

# Seconds `/readyz` gives the database: a probe must answer even when the database does not.
READY_TIMEOUT = 2.0
# Bytes a second a large write is allowed at least, beside the per-call bounds (`step`).
MIN_WRITE_RATE = 1024 * 1024


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "archives, compaction records, seen times, jobs",
        """
        CREATE TABLE compact_archives (
            id text PRIMARY KEY,
            session_id text,
            created_at text NOT NULL,
            stored_at timestamptz NOT NULL DEFAULT now(),
            message_count integer NOT NULL,
            sha256 text NOT NULL,
            body bytea NOT NULL,
            body_sha256 text NOT NULL
        );
        CREATE TABLE compact_records (
            session_id text NOT NULL,
            id text NOT NULL,
            record jsonb NOT NULL,
            PRIMARY KEY (session_id, id)
        );
        CREATE TABLE compact_seen (
            session_id text NOT NULL,
            location text NOT NULL,
            mtime_ns bigint NOT NULL,
            PRIMARY KEY (session_id, location)
        );
        CREATE TABLE compact_jobs (
            id text PRIMARY KEY,
            session_id text,
            state text NOT NULL,
            owner text,
            heartbeat_at timestamptz,
            finished_at timestamptz,
            cancel_requested boolean NOT NULL DEFAULT false,
            record jsonb NOT NULL,
            request jsonb
        );
        CREATE UNIQUE INDEX compact_jobs_one_in_flight ON compact_jobs (session_id)
            WHERE state IN ('queued', 'running');
        """,
    ),
    Migration(
        2,
        "indexes: a session's archives in order; jobs in flight by heartbeat",
        """
        CREATE INDEX compact_archives_session ON compact_archives (session_id, id);
        CREATE INDEX compact_jobs_in_flight ON compact_jobs (heartbeat_at)
            WHERE state IN ('queued', 'running');
        """,
    ),
    Migration(
        3,
        "recall: a word index of archived messages; archives saved before it are indexed later",
        """
        ALTER TABLE compact_archives ADD COLUMN recall_indexed boolean NOT NULL DEFAULT false;
        CREATE INDEX compact_archives_unindexed ON compact_archives (session_id, id)
            WHERE NOT recall_indexed;
        CREATE TABLE compact_recall_messages (
            archive_id text NOT NULL REFERENCES compact_archives (id) ON DELETE CASCADE,
            message_index integer NOT NULL,
            role text NOT NULL,
            tool_name text,
            digest text NOT NULL,
            length integer NOT NULL,
            text text NOT NULL,
            PRIMARY KEY (archive_id, message_index)
        );
        CREATE TABLE compact_recall_words (
            session_id text NOT NULL,
            word text NOT NULL,
            archive_id text NOT NULL,
            message_index integer NOT NULL,
            count integer NOT NULL,
            first integer NOT NULL,
            PRIMARY KEY (session_id, word, archive_id, message_index)
        );
        CREATE INDEX compact_recall_words_archive ON compact_recall_words (archive_id);
        """,
    ),
    Migration(
        4,
        "recall: one row of packed postings per bucket of words and archive, sessions and"
        " archives numbered; every archive indexed again by the next recalls, oldest first",
        """
        DROP TABLE compact_recall_words;
        DROP TABLE compact_recall_messages;
        CREATE TABLE compact_recall_sessions (
            no bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id text NOT NULL UNIQUE
        );
        CREATE TABLE compact_recall_archives (
            no bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            archive_id text NOT NULL UNIQUE
                REFERENCES compact_archives (id) ON DELETE CASCADE,
            session_no bigint NOT NULL REFERENCES compact_recall_sessions (no)
        );
        CREATE TABLE compact_recall_messages (
            archive_no bigint NOT NULL REFERENCES compact_recall_archives (no) ON DELETE CASCADE,
            message_index integer NOT NULL,
            length integer NOT NULL,
            role text NOT NULL,
            tool_name text,
            digest text NOT NULL,
            text text NOT NULL,
            PRIMARY KEY (archive_no, message_index)
        );
        CREATE TABLE compact_recall_postings (
            session_no bigint NOT NULL,
            archive_no bigint NOT NULL,
            bucket integer NOT NULL,
            words bytea NOT NULL,
            PRIMARY KEY (session_no, bucket, archive_no)
        );
        INSERT INTO compact_recall_sessions (session_id)
            SELECT DISTINCT session_id FROM compact_archives WHERE session_id IS NOT NULL
            ORDER BY 1;
        INSERT INTO compact_recall_archives (archive_id, session_no)
            SELECT a.id, s.no FROM compact_archives a
            JOIN compact_recall_sessions s USING (session_id) ORDER BY a.id;
        UPDATE compact_archives SET recall_indexed = false WHERE session_id IS NOT NULL;
        """,
    ),
    Migration(
        5,
        "retention: records stored at a time; archives and records found by age, records"
        " by the archive they name",
        """
        ALTER TABLE compact_records ADD COLUMN stored_at timestamptz;
        UPDATE compact_records SET stored_at = (record->>'timestamp')::timestamptz;
        ALTER TABLE compact_records ALTER COLUMN stored_at SET DEFAULT now(),
            ALTER COLUMN stored_at SET NOT NULL;
        CREATE INDEX compact_records_stored ON compact_records (stored_at);
        CREATE INDEX compact_records_archive ON compact_records
            (session_id, (record->>'archive_id'));
        CREATE INDEX compact_archives_stored ON compact_archives (stored_at);
        """,
    ),
    Migration(
        6,
        "the proxy's sessions shared by replicas: each session's head and state, their"
        " versions from one sequence, and the secret its session ids are keyed with",
        """
        CREATE SEQUENCE compact_proxy_versions;
        CREATE TABLE compact_proxy_sessions (
            session_id text PRIMARY KEY,
            version bigint NOT NULL,
            head_version bigint NOT NULL DEFAULT 0,
            head bytea,
            state jsonb NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE compact_proxy_secret (
            id integer PRIMARY KEY CHECK (id = 1),
            secret bytea NOT NULL
        );
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version


def migrate(conn: Conn, upto: int = SCHEMA_VERSION) -> list[int]:
    """Applies the missing migrations up to `upto` in one transaction under the advisory
    lock; the versions applied (none when another replica already did)."""
    applied: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS compact_schema ("
            " version integer PRIMARY KEY, description text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM compact_schema").fetchone()
        current = int(row[0]) if row else 0
        for migration in MIGRATIONS:
            if current < migration.version <= upto:
                conn.execute(migration.sql.encode())
                conn.execute(
                    "INSERT INTO compact_schema (version, description) VALUES (%s, %s)",
                    (migration.version, migration.description),
                )
                applied.append(migration.version)
    return applied


def schema_version(conn: Conn) -> int:
    """The applied version; 0 for an empty database."""
    exists = conn.execute("SELECT to_regclass('compact_schema') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM compact_schema").fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class PoolLimits:
    min_size: int = 1
    max_size: int = 10
    wait: float = 5.0  # seconds a caller waits for a free connection
    connect_timeout: int = 5
    statement_timeout: float = 10.0  # seconds; 0 disables
    call_timeout: float = 15.0  # seconds one borrowed connection may be used
    keepalives_idle: int = 10  # seconds of silence before the first TCP keepalive probe
    keepalives_interval: int = 5
    keepalives_count: int = 3
    tcp_user_timeout: float = 25.0  # seconds sent data may stay unacknowledged; 0: the OS's

    def connection_options(self) -> dict[str, str | int]:
        """libpq options of every connection: the server-side statement limit, and TCP
        keepalives with a user timeout, so the kernel itself drops a connection whose
        peer vanished (idle in the pool or with a statement in flight)."""
        options: dict[str, str | int] = {
            "connect_timeout": self.connect_timeout,
            "options": f"-c statement_timeout={int(self.statement_timeout * 1000)}",
            "keepalives": 1,
            "keepalives_idle": self.keepalives_idle,
            "keepalives_interval": self.keepalives_interval,
            "keepalives_count": self.keepalives_count,
        }
        if self.tcp_user_timeout > 0:
            options["tcp_user_timeout"] = int(self.tcp_user_timeout * 1000)
        return options


class Database:
    """The pool, with the schema brought up to date before the first use. Errors are
    `psycopg.Error` (the stores translate them to their own).

    Every call is bounded by `call_timeout`, by `DEADLINE` (the request or job it serves)
    and by the `timeout` it is given, whichever ends first: the wait for a connection, its
    check, the migration and the block itself. Past that the watchdog closes the socket
    and the call fails with `DatabaseStalled`."""

    def __init__(self, url: str, limits: PoolLimits | None = None) -> None:
        self.limits = limits = limits or PoolLimits()
        self.pool = ConnectionPool(
            url,
            min_size=limits.min_size,
            max_size=max(limits.max_size, limits.min_size),
            timeout=limits.wait,
            kwargs=limits.connection_options(),
            check=self._check,
            # The pool retries a failed connection with a doubling delay until this runs
            # out, then starts again at the next request: it bounds how long a replica
            # takes to notice the database is back.
            reconnect_timeout=max(2 * limits.wait, 2.0),
            name="context-compact",
            open=False,
        )
        self._watchdog = Watchdog()
        self._call = threading.local()  # the deadline of this thread's call, for _check
        self._opened = False
        self._migrated = False
        self._open_lock = threading.Lock()
        self._migrate_lock = threading.Lock()

    def open(self) -> None:
        """Starts connecting in the background; never waits for the database. Idempotent;
        the first use opens the pool too."""
        with self._open_lock:
            if not self._opened:
                self.pool.open(wait=False)
                self._opened = True

    def close(self) -> None:
        self.pool.close()
        self._watchdog.close()

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[Conn]:
        """A connection from the pool, the schema current (migrated on first use), for
        one call bounded in time (see the class)."""
        if not self._opened:
            self.open()
        seconds = self._budget(timeout)
        deadline = time.monotonic() + seconds
        conn = self._checkout(deadline, seconds)
        try:
            with self._watchdog.bound(conn, deadline, seconds) as watch:
                if not self._migrated:
                    self._ensure_schema(conn, deadline)
                self._call.watch = watch
                try:
                    with conn:  # commits, or rolls back on an error, inside the bound
                        yield conn
                finally:
                    self._call.watch = None
        finally:
            self.pool.putconn(conn)  # a connection cut or broken is discarded, not kept

    def step(self, conn: Conn, size: int = 0) -> None:
        """Starts the next step of a call that writes much (a chunk of a `COPY`, a large
        value) on `conn`, inside a transaction: the call's bound and the server's statement
        timeout start again from now, sized for `size` bytes at `MIN_WRITE_RATE` at least
        (never past the request's deadline). A write that makes progress is never cut by a
        bound sized for one small statement; a step that stalls still is, by the watchdog,
        and a vanished peer by the keepalives."""
        watch = getattr(self._call, "watch", None)
        if watch is None:
            raise RuntimeError("Database.step outside Database.connection")
        extra = size / MIN_WRITE_RATE
        seconds = self.limits.call_timeout + extra
        deadline = DEADLINE.get()
        if deadline is not None:
            seconds = min(seconds, deadline - time.monotonic())
        self._watchdog.renew(watch, time.monotonic() + seconds, seconds)
        if self.limits.statement_timeout > 0:
            statement = max(0.001, min(self.limits.statement_timeout + extra, seconds))
            conn.execute(f"SET LOCAL statement_timeout = {int(statement * 1000) or 1}")

    def unavailable_reason(self, timeout: float = READY_TIMEOUT) -> str | None:
        """None when a connection is to be had and the schema is current, else why not;
        within `timeout` seconds, whatever the database does."""
        try:
            with self.connection(timeout) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            return describe(exc)
        return None

    def _budget(self, timeout: float | None) -> float:
        seconds = self.limits.call_timeout
        if timeout is not None:
            seconds = min(seconds, timeout)
        deadline = DEADLINE.get()
        if deadline is not None:
            seconds = min(seconds, deadline - time.monotonic())
        return seconds

    def _checkout(self, deadline: float, seconds: float) -> Conn:
        wait = min(self.limits.wait, deadline - time.monotonic())
        if wait <= 0:
            raise DatabaseStalled(f"no time left for the database call ({seconds:.1f} s given)")
        self._call.deadline, self._call.seconds, self._call.stalled = deadline, seconds, None
        try:
            return self.pool.getconn(timeout=wait)
        except PoolTimeout as exc:
            # The pool's own message says only that no connection came: say why.
            if self._call.stalled is not None:
                raise self._call.stalled from exc
            raise

    def _check(self, conn: Conn) -> None:
        """The pool's check of a connection before lending it, bounded like the call: a
        connection that does not answer is cut and discarded."""
        try:
            with self._watchdog.bound(conn, self._call.deadline, self._call.seconds):
                ConnectionPool.check_connection(conn)
        except DatabaseStalled as exc:
            self._call.stalled = exc
            raise

    def _ensure_schema(self, conn: Conn, deadline: float) -> None:
        if not self._migrate_lock.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise DatabaseStalled("the schema migration by another call did not finish in time")
        try:
            if self._migrated:
                return
            applied = migrate(conn)
            if applied:
                log.info("database schema migrated", extra={"versions": applied})
            self._migrated = True
        finally:
            self._migrate_lock.release()


def describe(exc: psycopg.Error) -> str:
    """A one-line reason, without the connection string (it may hold a password)."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"database unavailable: {type(exc).__name__}: {first}"[:300]
