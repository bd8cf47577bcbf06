"""Bounds every use of a database connection in time, whatever the network does.

psycopg's synchronous calls wait on the socket with no timeout of their own, and a peer
that stops answering without closing (a frozen network path, a dead NAT) keeps them
waiting for as long as the stall lasts: the server never sees the statement, so
`statement_timeout` cannot end it, and `conn.cancel()` would travel the same dead path.
One watchdog thread per pool shuts down the socket of a connection still in use past its
deadline: the blocked call wakes at once with an error, libpq marks the connection bad,
and the pool discards it instead of lending it again.

The watchdog shuts down its own duplicate of the socket's descriptor, so a connection
that libpq closes meanwhile can never make it touch an unrelated file.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psycopg
from psycopg.rows import TupleRow

Conn = psycopg.Connection[TupleRow]


class DatabaseStalled(psycopg.OperationalError):
    """The database did not answer within the call's time; its connection was closed."""


class _Watch:
    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline
        self.seconds = 0.0  # the time the current step was given, for the error
        self.fired = False


class Watchdog:
    """Shuts down the socket of each watched connection whose deadline passes first.

    The thread sleeps until the nearest deadline, and at most `IDLE_WAKE` seconds; a new
    watch wakes it only when its deadline comes before that, so the usual call (due long
    after the next wake) costs no thread switch."""

    IDLE_WAKE = 5.0

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watches: set[_Watch] = set()
        self._thread: threading.Thread | None = None
        self._wake_at = 0.0  # when the thread looks next (`time.monotonic`)
        self._closed = False

    @contextmanager
    def bound(self, conn: Conn, deadline: float, seconds: float) -> Iterator[_Watch]:
        """Runs the block on `conn` until `deadline` (`time.monotonic`), or the later one a
        `renew` of the watch it yields sets; past it the connection is cut and the block's
        database error becomes `DatabaseStalled` naming the time it was given."""
        if deadline <= time.monotonic():
            raise DatabaseStalled(f"no time left for the database call ({seconds:.1f} s given)")
        watch = self._watch(conn, deadline)
        watch.seconds = seconds
        try:
            yield watch
        except psycopg.Error as exc:
            if watch.fired:
                raise DatabaseStalled(
                    f"no answer from the database within {watch.seconds:.1f} s; connection closed"
                ) from exc
            raise
        finally:
            self._unwatch(watch)
            if watch.fired:  # cut just as the block ended: never lend it again
                conn.close()

    def renew(self, watch: _Watch, deadline: float, seconds: float) -> None:
        """Moves a watch's deadline (a call that made progress starts its next step): a
        watch that already fired stays fired."""
        with self._cond:
            if watch.fired:
                return
            watch.deadline, watch.seconds = deadline, seconds
            if deadline < self._wake_at:
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _watch(self, conn: Conn, deadline: float) -> _Watch:
        sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
        watch = _Watch(sock, deadline)
        with self._cond:
            self._watches.add(watch)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="database-watchdog", daemon=True
                )
                self._thread.start()
            if deadline < self._wake_at:
                self._cond.notify()
        return watch

    def _unwatch(self, watch: _Watch) -> None:
        with self._cond:
            self._watches.discard(watch)
        watch.sock.close()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                for watch in [w for w in self._watches if w.deadline <= now]:
                    self._watches.discard(watch)
                    watch.fired = True
                    with suppress(OSError):
                        watch.sock.shutdown(socket.SHUT_RDWR)
                nearest = min((w.deadline for w in self._watches), default=now + self.IDLE_WAKE)
                self._wake_at = min(nearest, now + self.IDLE_WAKE)
                self._cond.wait(self._wake_at - now)
            self._thread = None
