"""The watchdog alone, on a socket pair standing in for a database connection: a block past
its deadline has its socket shut down (a blocked read wakes at once) and its connection
closed; a short deadline added while the thread sleeps towards a long one still fires on
time; a block that ends in time leaves the socket alone."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from app.adapters.pg_watchdog import DatabaseStalled, Watchdog

MARGIN = 0.3  # seconds a shutdown may come after its deadline on a busy machine


class FakePgConn:
    def __init__(self, sock: socket.socket) -> None:
        self.socket = sock.fileno()


class FakeConn:
    """What the watchdog uses of a psycopg connection: its socket and `close`."""

    def __init__(self, sock: socket.socket) -> None:
        self.pgconn = FakePgConn(sock)
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def watchdog() -> Iterator[Watchdog]:
    dog = Watchdog()
    yield dog
    dog.close()


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, peer = socket.socketpair()
    yield ours, peer
    ours.close()
    peer.close()


def read_until_cut(watchdog: Watchdog, conn: FakeConn, sock: socket.socket, seconds: float) -> None:
    """Blocks on a read that the peer never answers, under a bound of `seconds`; fails as
    psycopg does when its socket is shut down."""
    with watchdog.bound(conn, time.monotonic() + seconds, seconds):  # type: ignore[arg-type]
        if sock.recv(1) == b"":
            raise psycopg.OperationalError("server closed the connection unexpectedly")


@pytest.mark.slow
def test_a_read_blocked_past_its_deadline_wakes_and_its_connection_is_closed(
    watchdog: Watchdog, pair: tuple[socket.socket, socket.socket]
) -> None:
    ours, _ = pair
    conn = FakeConn(ours)
    started = time.monotonic()
    with pytest.raises(DatabaseStalled, match=r"^no answer from the database within 0\.4 s"):
        read_until_cut(watchdog, conn, ours, 0.4)
    assert 0.4 <= time.monotonic() - started <= 0.4 + MARGIN
    assert conn.closed


@pytest.mark.slow
def test_a_short_deadline_fires_on_time_while_the_thread_sleeps_towards_a_long_one(
    watchdog: Watchdog, pair: tuple[socket.socket, socket.socket]
) -> None:
    long_lived, _ = pair
    hold = threading.Event()

    def hold_a_long_watch() -> None:
        with watchdog.bound(FakeConn(long_lived), time.monotonic() + 60, 60):  # type: ignore[arg-type]
            hold.wait(5)

    holder = threading.Thread(target=hold_a_long_watch)
    holder.start()
    try:
        time.sleep(0.05)  # the watchdog now sleeps towards its idle wake
        short, peer = socket.socketpair()
        with short, peer:
            started = time.monotonic()
            with pytest.raises(DatabaseStalled):
                read_until_cut(watchdog, FakeConn(short), short, 0.3)
            assert time.monotonic() - started <= 0.3 + MARGIN
    finally:
        hold.set()
        holder.join()
    long_lived.sendall(b"x")  # the long watch ended in time: its socket still works
    assert pair[1].recv(1) == b"x"


@pytest.mark.slow
def test_a_block_that_ends_in_time_leaves_the_connection_alone(
    watchdog: Watchdog, pair: tuple[socket.socket, socket.socket]
) -> None:
    ours, peer = pair
    conn = FakeConn(ours)
    with watchdog.bound(conn, time.monotonic() + 0.2, 0.2):  # type: ignore[arg-type]
        peer.sendall(b"y")
        assert ours.recv(1) == b"y"
    time.sleep(0.3)  # past the deadline: nothing is cut after the block ended
    peer.sendall(b"z")
    assert ours.recv(1) == b"z"
    assert not conn.closed


def test_no_time_left_fails_at_once_without_touching_the_connection(
    watchdog: Watchdog, pair: tuple[socket.socket, socket.socket]
) -> None:
    conn = FakeConn(pair[0])
    with (
        pytest.raises(DatabaseStalled, match="no time left"),
        watchdog.bound(conn, time.monotonic() - 0.1, 1.0),  # type: ignore[arg-type]
    ):
        pass
    assert not conn.closed
