"""The pool's bounds on a database that stops answering: TCP keepalives and a user timeout
on every connection, each call cut at its own timeout or its request's deadline, the cut
connection discarded, and the readiness check answering within its timeout."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest

from app.adapters.pg_database import MIN_WRITE_RATE, READY_TIMEOUT, Database, PoolLimits
from app.adapters.pg_stores import PgJobStore
from app.adapters.pg_watchdog import Conn, DatabaseStalled
from app.core.request_context import deadline_at
from app.core.sessions.jobs import JobStoreError
from tests.postgres.conftest import ADMIN_URL, url_through
from tests.postgres.freezing_proxy import FreezingProxy

MARGIN = 0.5  # seconds a cut call may take past its bound on a busy machine


@pytest.fixture
def frozen_proxy() -> Iterator[FreezingProxy]:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    proxy = FreezingProxy(str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432))
    yield proxy
    proxy.close()


@contextmanager
def through(proxy: FreezingProxy, database_url: str, **limits: float) -> Iterator[Database]:
    """A pool on the proxy, connected and migrated before the test freezes it."""
    values = {"min_size": 1, "max_size": 2, "wait": 1.0, "connect_timeout": 1, **limits}
    database = Database(url_through(database_url, proxy.port), PoolLimits(**values))  # type: ignore[arg-type]
    try:
        select_one(database)
        yield database
    finally:
        proxy.thaw()  # the pool's connection attempts end at once
        database.close()


def select_one(database: Database, then: Callable[[Conn], object] = lambda _: None) -> Conn:
    """Runs `SELECT 1` on a pooled connection after `then(connection)`; the connection."""
    with database.connection() as conn:
        then(conn)
        conn.execute("SELECT 1")
    return conn


def socket_options(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, int]:
    with socket.socket(fileno=os.dup(conn.pgconn.socket)) as sock:
        return {
            "keepalive": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
            "idle": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
            "interval": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
            "count": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
            "user_timeout_ms": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
        }


@pytest.mark.parametrize(
    ("user_timeout", "expected_ms"), [(12.5, 12500), (0, 0)], ids=["set", "system default"]
)
def test_every_connection_carries_tcp_keepalives_and_a_user_timeout(
    database_url: str, user_timeout: float, expected_ms: int
) -> None:
    limits = PoolLimits(
        min_size=0,
        max_size=2,
        keepalives_idle=7,
        keepalives_interval=3,
        keepalives_count=4,
        tcp_user_timeout=user_timeout,
    )
    database = Database(database_url, limits)
    try:
        with database.connection() as first, database.connection() as second:
            for conn in (first, second):
                assert socket_options(conn) == {
                    "keepalive": 1,
                    "idle": 7,
                    "interval": 3,
                    "count": 4,
                    "user_timeout_ms": expected_ms,
                }
    finally:
        database.close()


@pytest.mark.slow
def test_a_call_blocked_on_a_frozen_connection_is_cut_at_its_timeout_and_discarded(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    with through(frozen_proxy, database_url, call_timeout=1.0) as database:
        used: list[Conn] = []
        started = time.monotonic()
        with pytest.raises(DatabaseStalled, match=r"within 1\.0 s; connection closed"):
            select_one(database, then=lambda conn: (used.append(conn), frozen_proxy.freeze()))
        assert 1.0 <= time.monotonic() - started <= 1.0 + MARGIN
        assert used[0].closed
        frozen_proxy.thaw()
        assert select_one(database) is not used[0]
        assert database.pool.get_stats().get("returns_bad", 0) >= 1


@pytest.mark.slow
def test_an_idle_connection_that_froze_fails_its_check_within_the_call_timeout(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    with through(frozen_proxy, database_url, call_timeout=1.0, wait=5.0) as database:
        frozen_proxy.freeze()
        started = time.monotonic()
        with pytest.raises(DatabaseStalled, match=r"within 1\.0 s"):
            select_one(database)
        assert time.monotonic() - started <= 1.0 + MARGIN


@pytest.mark.slow
def test_a_request_deadline_shortens_the_call_and_nothing_is_tried_after_it(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    with through(frozen_proxy, database_url, call_timeout=30.0) as database:
        frozen_proxy.freeze()
        started = time.monotonic()
        with deadline_at(started + 0.6):
            with pytest.raises(DatabaseStalled, match="no answer from the database within"):
                select_one(database)
            assert time.monotonic() - started <= 0.6 + MARGIN
            with pytest.raises(DatabaseStalled, match="no time left"):
                select_one(database)


@pytest.mark.slow
def test_a_background_job_write_on_a_frozen_database_fails_within_the_call_timeout(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    with through(frozen_proxy, database_url, call_timeout=1.0) as database:
        frozen_proxy.freeze()
        started = time.monotonic()
        with pytest.raises(JobStoreError, match="job release failed: database unavailable: "):
            PgJobStore(database).release("replica-a", ["job-1"])
        assert time.monotonic() - started <= 1.0 + MARGIN


@pytest.mark.slow
def test_the_readiness_check_answers_within_its_timeout_naming_the_stall(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    with through(frozen_proxy, database_url, call_timeout=30.0, wait=30.0) as database:
        frozen_proxy.freeze()
        started = time.monotonic()
        reason = database.unavailable_reason()
        assert time.monotonic() - started <= READY_TIMEOUT + MARGIN
        assert reason == (
            "database unavailable: DatabaseStalled: no answer from the database within "
            f"{READY_TIMEOUT:.1f} s; connection closed"
        )
        frozen_proxy.thaw()
        assert database.unavailable_reason() is None


def test_a_stall_that_ends_in_a_cut_fails_the_call_at_once_with_the_driver_s_error(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    with through(frozen_proxy, database_url, call_timeout=10.0) as database:
        started = time.monotonic()

        def freeze_then_cut(conn: Conn) -> None:
            frozen_proxy.freeze()
            threading.Timer(0.2, frozen_proxy.cut).start()

        with pytest.raises(psycopg.OperationalError) as failed:
            select_one(database, then=freeze_then_cut)
        assert not isinstance(failed.value, DatabaseStalled)
        assert time.monotonic() - started <= 0.2 + MARGIN


@pytest.mark.slow
def test_a_call_making_progress_in_steps_outlives_its_timeout_and_a_stalled_step_is_cut(
    database_url: str, frozen_proxy: FreezingProxy
) -> None:
    """What a large archive's write does (`Database.step` before each chunk): each step
    is given the call timeout again; a step on a frozen connection is cut at it."""
    with through(frozen_proxy, database_url, call_timeout=0.6) as database:
        started = time.monotonic()
        with database.connection() as conn:
            for _ in range(3):
                database.step(conn)
                conn.execute("SELECT pg_sleep(0.3)")
        assert time.monotonic() - started > 0.9  # past the call timeout, not cut
        cut: list[float] = []

        def step_then_freeze(conn: Conn) -> None:
            database.step(conn)
            conn.execute("SELECT 1")
            database.step(conn)
            frozen_proxy.freeze()
            cut.append(time.monotonic())

        with pytest.raises(DatabaseStalled, match=r"within 0\.6 s; connection closed"):
            select_one(database, then=step_then_freeze)
        assert time.monotonic() - cut[0] <= 0.6 + MARGIN


def test_a_step_sized_for_its_bytes_gets_a_statement_timeout_to_match(database_url: str) -> None:
    database = Database(database_url, PoolLimits(statement_timeout=2.0, call_timeout=3.0))
    try:
        with database.connection() as conn, conn.transaction():
            database.step(conn, 3 * MIN_WRITE_RATE)
            row = conn.execute("SHOW statement_timeout").fetchone()
    finally:
        database.close()
    assert row == ("5s",)
